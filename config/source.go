package config

import (
	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/parser"
)

// Source is one [[source]] table.
type Source struct {
	// Name identifies the source's checkpoints; default: Site.
	Name string `toml:"name"`
	// Site is the site every hit of this source is counted for.
	Site string `toml:"site"`
	// Paths are file globs; none may reach under /proc or /sys (Validate).
	Paths []string `toml:"paths"`
	// Rotated are globs naming where the source's rotated files go
	// (logrotate's olddir): searched for a file renamed while logtally was
	// down and for a copytruncate's copy. Empty (the default): the names
	// beside each file, P.* and P-*. See tailer.Config.Rotated.
	Rotated []string `toml:"rotated"`
	// FollowSymlinks reads through symbolic links whose target leaves the
	// directories of Paths and Rotated; off by default (see
	// tailer.Config.FollowSymlinks).
	FollowSymlinks bool `toml:"follow_symlinks"`
	// Format is the log format, one of Formats.
	Format string `toml:"format"`
	// LogFormat is the nginx log_format string, for format "nginx".
	LogFormat string `toml:"log_format"`
	// Regex is the regular expression of format "regex" (named groups
	// time, path or request, status; optional method, site, user_agent).
	Regex string `toml:"regex"`
	// TimeLayout is the time layout of formats json and regex: "rfc3339",
	// "clf", "unix", "unix_ms" or a Go layout.
	TimeLayout string `toml:"time_layout"`
	// JSON names the fields of format "json" ([source.json]).
	JSON JSONFields `toml:"json"`
	// Page holds the page rules ([source.page]).
	Page Page `toml:"page"`
	// Filter decides which hits count ([source.filter]).
	Filter Filter `toml:"filter"`
	// Bots are the source's own user-agent patterns (bots = [{ class =
	// "ai", match = '...' }]), tried before the embedded lists; only for
	// formats that log the user agent.
	Bots []Bot `toml:"bots"`
	// Client says which logged address identifies a visitor:
	// "remote_addr" (the default: %h, $remote_addr, [source.json] client,
	// the regex group client) or "x_forwarded_for" (the leftmost address of
	// $http_x_forwarded_for or [source.json] forwarded_for, falling back to
	// the remote address; formats nginx and json only).
	Client string `toml:"client"`
	// MaxSites bounds, for site = "{host}", the distinct hosts that become
	// sites (clients choose the Host header); the hits of further hosts
	// count under the site "(other)". Hosts in [site_aliases] are always
	// sites. Not set: DefaultMaxSites; 0: no bound.
	MaxSites *int `toml:"max_sites"`

	aliases map[string]string // Config.SiteAliases, set by Parse and Validate
	from    *origin           // the file that defines it, set by Load and Parse
}

// JSONFields is a source's [source.json] table: the field names of a JSON
// line, dotted for nested fields ("request.uri"). Empty means the default,
// the nginx variable name (time, request_uri, request, request_method,
// status, host, http_user_agent, body_bytes_sent, request_time,
// upstream_response_time, remote_addr, http_x_forwarded_for).
type JSONFields struct {
	// Time is the request time's field (default "time").
	Time string `toml:"time"`
	// URI is the request target's field (default "request_uri").
	URI string `toml:"uri"`
	// Request is the request line's field, used when the URI field is
	// absent (default "request").
	Request string `toml:"request"`
	// Method is the request method's field (default "request_method").
	Method string `toml:"method"`
	// Status is the response status's field (default "status").
	Status string `toml:"status"`
	// Host is the host's field, for site = "{host}" (default "host").
	Host string `toml:"host"`
	// UserAgent is the user agent's field (default "http_user_agent").
	UserAgent string `toml:"user_agent"`
	// Bytes is the response size's field (default "body_bytes_sent").
	Bytes string `toml:"bytes"`
	// RequestTime is the response time's field (default "request_time").
	RequestTime string `toml:"request_time"`
	// UpstreamResponseTime is the upstream response time's field, used
	// when the line has no request time (default "upstream_response_time").
	UpstreamResponseTime string `toml:"upstream_response_time"`
	// TimeUnit is the unit of both time fields: "s" (default), "ms", "us"
	// or "ns".
	TimeUnit string `toml:"time_unit"`
	// Client is the client address's field (default "remote_addr").
	Client string `toml:"client"`
	// ForwardedFor is the X-Forwarded-For field, read with client =
	// "x_forwarded_for" (default "http_x_forwarded_for").
	ForwardedFor string `toml:"forwarded_for"`
}

// Bot is one { class = "...", match = '...' } pattern of a source's bots.
type Bot struct {
	// Class is search, ai, tool, bot or suspect (botclass.ParseClass).
	Class string `toml:"class"`
	// Match is a Go regular expression, matched case-insensitively with
	// the user agent as logged.
	Match string `toml:"match"`
}

// Page is a source's [source.page] table: see parser.PageConfig.
type Page struct {
	// KeepQuery names the query parameters kept in the page, sorted.
	KeepQuery []string `toml:"keep_query"`
	// Rewrite rules, applied in order.
	Rewrite []Rewrite `toml:"rewrite"`
	// Lowercase lowercases the path.
	Lowercase bool `toml:"lowercase"`
	// StripTrailingSlash removes trailing slashes.
	StripTrailingSlash bool `toml:"strip_trailing_slash"`
	// IndexFiles map to their directory ("index.html").
	IndexFiles []string `toml:"index_files"`
	// MaxLength bounds pages in bytes; default parser.DefaultMaxPageLen.
	MaxLength int `toml:"max_length"`
	// MaxPagesPerMinute bounds the distinct pages per site and minute;
	// the rest count as "(other)". Not set: DefaultMaxPagesPerMinute; 0:
	// no bound.
	MaxPagesPerMinute *int `toml:"max_pages_per_minute"`
}

// DefaultMaxPagesPerMinute is [source.page] max_pages_per_minute when it
// is not set: a typical host sees a few hundred distinct pages a minute,
// and one crawler walking ids would otherwise create a bucket per id (see
// docs/scaling.md, "The long tail").
const DefaultMaxPagesPerMinute = 2000

// DefaultMaxSites is [[source]] max_sites when it is not set: far more
// virtual hosts than one server's log usually names, far fewer than the
// Host headers a scanner sends.
const DefaultMaxSites = 100

// maxSites is MaxSites with its default.
func (s Source) maxSites() int {
	if s.MaxSites == nil {
		return DefaultMaxSites
	}
	return *s.MaxSites
}

// maxPagesPerMinute is MaxPagesPerMinute with its default.
func (p Page) maxPagesPerMinute() int {
	if p.MaxPagesPerMinute == nil {
		return DefaultMaxPagesPerMinute
	}
	return *p.MaxPagesPerMinute
}

// Rewrite is one { match = '...', replace = '...' } rule.
type Rewrite struct {
	// Match is a Go regular expression (RE2 syntax).
	Match string `toml:"match"`
	// Replace is the replacement; $1 or ${name} stand for groups.
	Replace string `toml:"replace"`
}

// Filter is a source's [source.filter] table: see parser.FilterConfig.
type Filter struct {
	// Methods counted (default all).
	Methods []string `toml:"methods"`
	// Status classes ("2xx") or codes ("404") counted (default all).
	Status []string `toml:"status"`
	// ExcludeExtensions are not counted ("png").
	ExcludeExtensions []string `toml:"exclude_extensions"`
	// ExcludePaths are prefixes, or regular expressions starting with '^'.
	ExcludePaths []string `toml:"exclude_paths"`
	// ExcludeUserAgents are case-insensitive substrings; "bots" is a preset.
	ExcludeUserAgents []string `toml:"exclude_user_agents"`
}

// Formats lists the accepted values of a source's format.
var Formats = parser.Formats

// Parser returns the parser configuration of the source, with the site
// aliases of the Config it was loaded or validated in.
func (s Source) Parser() parser.Config {
	c := parser.Config{
		Format:      s.Format,
		Site:        s.Site,
		SiteAliases: s.aliases,
		MaxSites:    s.maxSites(),
		MaxPageLen:  s.Page.MaxLength,
		LogFormat:   s.LogFormat,
		Regex:       s.Regex,
		Client:      s.Client,
		TimeLayout:  s.TimeLayout,
		JSON: parser.JSONFields{
			Time: s.JSON.Time, URI: s.JSON.URI, Request: s.JSON.Request, Method: s.JSON.Method,
			Status: s.JSON.Status, Host: s.JSON.Host, UserAgent: s.JSON.UserAgent,
			Bytes: s.JSON.Bytes, RequestTime: s.JSON.RequestTime, UpstreamResponseTime: s.JSON.UpstreamResponseTime,
			TimeUnit: s.JSON.TimeUnit, Client: s.JSON.Client, ForwardedFor: s.JSON.ForwardedFor,
		},
		Page: parser.PageConfig{
			KeepQuery:          s.Page.KeepQuery,
			Lowercase:          s.Page.Lowercase,
			StripTrailingSlash: s.Page.StripTrailingSlash,
			IndexFiles:         s.Page.IndexFiles,
			MaxPagesPerMinute:  s.Page.maxPagesPerMinute(),
		},
		Filter: parser.FilterConfig{
			Methods:           s.Filter.Methods,
			Status:            s.Filter.Status,
			ExcludeExtensions: s.Filter.ExcludeExtensions,
			ExcludePaths:      s.Filter.ExcludePaths,
			ExcludeUserAgents: s.Filter.ExcludeUserAgents,
		},
	}
	for _, r := range s.Page.Rewrite {
		c.Page.Rewrite = append(c.Page.Rewrite, parser.Rewrite{Match: r.Match, Replace: r.Replace})
	}
	for _, b := range s.Bots {
		// An unknown class name becomes a class the parser refuses;
		// Validate names the bad name.
		cl, err := botclass.ParseClass(b.Class)
		if err != nil {
			cl = botclass.NumClasses
		}
		c.Bots = append(c.Bots, botclass.Pattern{Class: cl, Match: b.Match})
	}
	return c
}
