package parser

import (
	"time"

	"github.com/logtally/logtally/botclass"
)

// DefaultMaxPageLen is the page length bound used when Config.MaxPageLen
// is 0.
const DefaultMaxPageLen = 512

// MinMaxPageLen is the smallest accepted Config.MaxPageLen: a cut page
// keeps at least 15 bytes of the path before its hash suffix.
const MinMaxPageLen = 32

// SiteFromLine is the Config.Site that takes each hit's site from the line:
// the vhost of vhost_combined, the host variable of an nginx log_format,
// the host field of json, the "site" group of regex.
const SiteFromLine = "{host}"

// The values of Config.Client.
const (
	ClientRemoteAddr   = "remote_addr"
	ClientForwardedFor = "x_forwarded_for"
)

// Formats lists the accepted values of Config.Format.
var Formats = []string{"combined", "common", "vhost_combined", "nginx", "json", "regex"}

// Config configures a Parser. The zero value of each optional field means
// its default. Field problems reported by New name the TOML key of
// logtally's [[source]] table ("page.rewrite[0].match").
type Config struct {
	// Format is the log format, one of Formats.
	Format string
	// Site is the site name every hit of this source gets, or
	// SiteFromLine. Required.
	Site string
	// SiteAliases maps a host as found in the line (lowercase, without
	// port) to the site it counts for, when Site is SiteFromLine.
	SiteAliases map[string]string
	// MaxSites bounds, when Site is SiteFromLine, the distinct sites
	// taken from the lines (clients choose the Host header): once hits
	// were counted for MaxSites hosts, the hits of further hosts get the
	// site OtherSite. Hosts in SiteAliases are always sites and do not
	// count against the bound. 0 means no bound. Parse does not apply it:
	// it needs state across lines (which hosts became sites depends on
	// the order of the lines), so the aggregator applies it, in line
	// order, to the hits Parse marks Hit.FromHost.
	MaxSites int
	// MaxPageLen bounds pages in bytes (default DefaultMaxPageLen, at
	// least MinMaxPageLen). Longer pages are cut on a UTF-8 boundary and
	// suffixed with "~" and 16 hex digits of a hash of the whole page, so
	// two long pages never merge; the result is at most MaxPageLen bytes.
	MaxPageLen int
	// LogFormat is the nginx log_format string, for Format "nginx".
	LogFormat string
	// Regex is the regular expression of Format "regex", with named
	// groups time, path or request, status, and optionally method, site
	// and user_agent.
	Regex string
	// TimeLayout is the layout of the time field for json and regex:
	// "rfc3339" (or "iso8601"), "clf" (or "02/Jan/2006:15:04:05 -0700"),
	// "unix", "unix_ms", or any Go time layout. Default "rfc3339" for
	// json, "clf" for regex.
	TimeLayout string
	// JSON names the fields of Format "json".
	JSON JSONFields
	// Page holds the page rules.
	Page PageConfig
	// Filter holds the filters.
	Filter FilterConfig
	// Bots are the source's own user-agent patterns, tried before the
	// embedded lists (config: bots = [{class, match}]). Only for formats
	// that log the user agent.
	Bots []botclass.Pattern
	// Client says which logged address is a hit's Hit.Client:
	// ClientRemoteAddr ("", the default: %h, $remote_addr, JSONFields.Client,
	// the regex group client) or ClientForwardedFor (the leftmost address
	// of $http_x_forwarded_for or JSONFields.ForwardedFor, else the
	// remote address; only for formats nginx, with $http_x_forwarded_for in
	// its log_format, and json). Config key: client.
	Client string
	// Dims, when not nil, makes Parse give each hit its value in each
	// dimension of where traffic comes from (Hit.Dims; dims.go).
	Dims *DimsConfig
	// Referer makes Parse read the referer into Hit.Referer: only for
	// formats that log it (combined, vhost_combined, json, nginx with
	// $http_referer, regex with (?P<referer>...)).
	Referer bool
	// Since and Until, when not zero, keep only hits at or after Since and
	// before Until; the others are FilteredWindow (replay's -since and
	// -until).
	Since, Until time.Time
}

// JSONFields names the fields of a JSON log line. Nested fields are named
// with dots ("request.uri"). Empty names take the defaults, which match
// nginx variable names.
type JSONFields struct {
	// Time is the request time (default "time").
	Time string
	// URI is the request target, a path with or without query, or an
	// absolute URI (default "request_uri").
	URI string
	// Request is the request line "GET /a HTTP/1.1" (default "request"),
	// used when the URI field is absent.
	Request string
	// Method is the request method (default "request_method").
	Method string
	// Status is the response status, a number or a string (default
	// "status").
	Status string
	// Host is the host, for Site SiteFromLine (default "host").
	Host string
	// UserAgent is the user agent, for user-agent filters and the bot
	// class (default "http_user_agent").
	UserAgent string
	// Bytes is the response size, a number or a numeric string (default
	// "body_bytes_sent").
	Bytes string
	// RequestTime is the response time, a number or a numeric string in
	// TimeUnit (default "request_time").
	RequestTime string
	// UpstreamResponseTime is the upstream's response time, used when the
	// line has no RequestTime: a number, or a string holding one or a list
	// as nginx writes it ("0.012, 0.030"), in TimeUnit (default
	// "upstream_response_time").
	UpstreamResponseTime string
	// Client is the client address, for Hit.Client (default
	// "remote_addr"). Traefik: "ClientHost" (its "ClientAddr" holds the
	// port); Caddy: "request.remote_ip".
	Client string
	// Referer is the referer, read only with Config.Referer (default
	// "http_referer").
	Referer string
	// ForwardedFor is the X-Forwarded-For header, read only with
	// Config.Client ClientForwardedFor (default "http_x_forwarded_for"):
	// a string "client, proxy1, proxy2" whose leftmost address is taken.
	ForwardedFor string
	// TimeUnit is the unit of both time fields: "s" (default; nginx,
	// Caddy's duration), "ms", "us" or "ns" (Traefik's Duration).
	TimeUnit string
}

// PageConfig holds the rules that turn a path into a page. Rules apply in
// this order: lowercase, index_files, strip_trailing_slash, rewrite, then
// keep_query appends the kept parameters; the length bound applies last.
type PageConfig struct {
	// KeepQuery names the query parameters kept in the page, sorted by
	// name ("/list?id=3&page=2"). Default none.
	KeepQuery []string
	// Rewrite rules apply in order, each to the result of the one before.
	Rewrite []Rewrite
	// Lowercase lowercases the ASCII letters of the path.
	Lowercase bool
	// StripTrailingSlash removes trailing slashes ("/a/" → "/a"; "/" stays).
	StripTrailingSlash bool
	// IndexFiles are file names that map to their directory
	// ("index.html": "/a/index.html" → "/a/").
	IndexFiles []string
	// MaxPagesPerMinute bounds the distinct pages of a site in one minute;
	// 0 means no bound. Parse does not apply it (it needs state across
	// lines): the aggregator does, in line order, pages past it counted
	// as Other.
	MaxPagesPerMinute int
}

// Rewrite is one rewrite rule: pages matching the regular expression Match
// have its matches replaced by Replace ($1 and ${name} expand groups).
type Rewrite struct {
	// Match is a Go regular expression (RE2 syntax).
	Match string
	// Replace is the replacement, as regexp.Regexp.Expand reads it.
	Replace string
}

// FilterConfig decides which hits count. A hit excluded by a filter gives
// a Filtered outcome naming the first filter that excluded it, in the
// order methods, status, user agent, extension, path.
type FilterConfig struct {
	// Methods lists the counted methods (default all). Compared exactly,
	// upper-cased.
	Methods []string
	// Status lists the counted statuses: classes "2xx" or codes "404"
	// (default all).
	Status []string
	// ExcludeExtensions lists file extensions not counted ("png", ".css");
	// compared case-insensitively with the last extension of the path.
	ExcludeExtensions []string
	// ExcludePaths lists page prefixes not counted ("/admin/"); entries
	// starting with '^' are regular expressions. Compared with the page
	// before rewrites (after lowercase).
	ExcludePaths []string
	// ExcludeUserAgents lists case-insensitive substrings of user agents
	// not counted; "bots" stands for BotUserAgents.
	ExcludeUserAgents []string
}

// ConfigError is a bad Config field. New returns one per problem, joined.
type ConfigError struct {
	// Field is the TOML key of the field within a [[source]] table, e.g.
	// "page.rewrite[0].match" or "log_format".
	Field string
	// Problem says what is wrong, quoting the value.
	Problem string
}

// Error returns "parser: field: problem".
func (e *ConfigError) Error() string { return "parser: " + e.Field + ": " + e.Problem }
