package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/logtally/logtally/parser"
)

// Config is the whole configuration file.
type Config struct {
	// Instance is a display name for this host; default: the host name.
	Instance string `toml:"instance"`
	// StateDir holds buffer.db.
	StateDir string `toml:"state_dir"`
	// ShutdownTimeout bounds the final flush on SIGTERM.
	ShutdownTimeout Duration `toml:"shutdown_timeout"`
	// Mongo is the database connection.
	Mongo Mongo `toml:"mongo"`
	// Buffer configures the on-disk buffer.
	Buffer Buffer `toml:"buffer"`
	// Flush configures writing to MongoDB.
	Flush Flush `toml:"flush"`
	// Buckets names the collections.
	Buckets Buckets `toml:"buckets"`
	// Sources are the log files to follow, one [[source]] table each.
	Sources []Source `toml:"source"`
	// SiteAliases maps a host found in the lines (lowercase, without port)
	// to the site it counts for, for sources with site = "{host}".
	SiteAliases map[string]string `toml:"site_aliases"`
}

// Mongo is the [mongo] table.
type Mongo struct {
	// URI is the connection string.
	URI string `toml:"uri"`
	// URIFile, when set, names a file holding the URI (with credentials);
	// Load reads it into URI.
	URIFile string `toml:"uri_file"`
	// Database holds the bucket collections.
	Database string `toml:"database"`
	// WriteConcern is "majority" or a number of nodes.
	WriteConcern WriteConcern `toml:"write_concern"`
	// Journal asks for journaled writes.
	Journal bool `toml:"journal"`
	// Timeout bounds each database operation.
	Timeout Duration `toml:"timeout"`
}

// Buffer is the [buffer] table.
type Buffer struct {
	// CommitInterval is how often counts and checkpoints are committed.
	CommitInterval Duration `toml:"commit_interval"`
	// MaxSize is the buffered data at which tailers pause.
	MaxSize Size `toml:"max_size"`
}

// Flush is the [flush] table.
type Flush struct {
	// Interval is how often pending counts are sealed and written.
	Interval Duration `toml:"interval"`
	// MaxOps is the number of updates per bulk write.
	MaxOps int `toml:"max_ops"`
	// MaxBackoff caps the retry delay while MongoDB is unreachable.
	MaxBackoff Duration `toml:"max_backoff"`
}

// Buckets is the [buckets] table: collection names.
type Buckets struct {
	// Minute is the per-minute bucket collection.
	Minute string `toml:"minute"`
	// Daily is the per-day bucket collection.
	Daily string `toml:"daily"`
	// Monthly is the per-month bucket collection.
	Monthly string `toml:"monthly"`
}

// Source is one [[source]] table.
type Source struct {
	// Name identifies the source's checkpoints; default: Site.
	Name string `toml:"name"`
	// Site is the site every hit of this source is counted for.
	Site string `toml:"site"`
	// Paths are file globs.
	Paths []string `toml:"paths"`
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

	aliases map[string]string // Config.SiteAliases, set by Parse and Validate
}

// JSONFields is a source's [source.json] table: the field names of a JSON
// line, dotted for nested fields ("request.uri"). Empty means the default,
// the nginx variable name (time, request_uri, request, request_method,
// status, host, http_user_agent).
type JSONFields struct {
	Time      string `toml:"time"`
	URI       string `toml:"uri"`
	Request   string `toml:"request"`
	Method    string `toml:"method"`
	Status    string `toml:"status"`
	Host      string `toml:"host"`
	UserAgent string `toml:"user_agent"`
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
	// the rest count as "(other)". 0: no bound.
	MaxPagesPerMinute int `toml:"max_pages_per_minute"`
}

// Rewrite is one { match = '...', replace = '...' } rule.
type Rewrite struct {
	Match   string `toml:"match"`
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

// Default returns the configuration with every default set and no sources.
func Default() Config {
	host, _ := os.Hostname()
	return Config{
		Instance:        host,
		StateDir:        "/var/lib/logtally",
		ShutdownTimeout: Duration(30 * time.Second),
		Mongo: Mongo{
			URI:          "mongodb://localhost:27017",
			Database:     "logtally",
			WriteConcern: "majority",
			Journal:      true,
			Timeout:      Duration(10 * time.Second),
		},
		Buffer: Buffer{
			CommitInterval: Duration(time.Second),
			MaxSize:        Size(1 << 30),
		},
		Flush: Flush{
			Interval:   Duration(10 * time.Second),
			MaxOps:     1000,
			MaxBackoff: Duration(time.Minute),
		},
		Buckets: Buckets{Minute: "minutes", Daily: "daily", Monthly: "monthly"},
	}
}

// Load reads the file at path over the defaults, reads mongo.uri_file if
// set, and validates the result. Every problem found is in the error, one
// per line, each naming the key.
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("read config: %w", err)
	}
	return Parse(path, data)
}

// Parse is Load for a file already read; name is used in messages.
func Parse(name string, data []byte) (Config, error) {
	cfg := Default()
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&cfg)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			msg := pe.Message
			if pe.LastKey != "" {
				msg = pe.LastKey + ": " + msg
			}
			return Config{}, fmt.Errorf("%s:%d: %s", name, pe.Position.Line, msg)
		}
		if m := decodeErrRe.FindStringSubmatch(err.Error()); m != nil {
			return Config{}, fmt.Errorf("%s:%s: %s: %s", name, m[1], m[2], m[3])
		}
		return Config{}, fmt.Errorf("%s: %w", name, err)
	}
	var errs []error
	for _, k := range md.Undecoded() {
		errs = append(errs, problem(name, data, k, "unknown key"))
	}
	if len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}
	for i := range cfg.Sources {
		if cfg.Sources[i].Name == "" {
			cfg.Sources[i].Name = cfg.Sources[i].Site
		}
		cfg.Sources[i].aliases = cfg.SiteAliases
	}
	if cfg.Mongo.URIFile != "" {
		b, err := os.ReadFile(cfg.Mongo.URIFile)
		if err != nil {
			return Config{}, problem(name, data, toml.Key{"mongo", "uri_file"}, fmt.Sprintf("%q: %v", cfg.Mongo.URIFile, err))
		}
		cfg.Mongo.URI = strings.TrimSpace(string(b))
	}
	if err := cfg.Validate(); err != nil {
		var fe *FieldError
		var out []error
		for _, e := range unjoin(err) {
			if errors.As(e, &fe) {
				out = append(out, problem(name, data, fe.key(), fe.Problem))
			} else {
				out = append(out, fmt.Errorf("%s: %w", name, e))
			}
		}
		return Config{}, errors.Join(out...)
	}
	return cfg, nil
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// FieldError is a bad value: Field is the dotted key (source[2].format).
type FieldError struct {
	// Field is the key, with a source's index in brackets.
	Field string
	// Problem says what is wrong, quoting the value.
	Problem string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Problem }

var decodeErrRe = regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]*)"\): (.*)$`)

var indexRe = regexp.MustCompile(`^(\w+)\[(\d+)\]$`)

// key turns "source[2].format" into the TOML key path plus index for lineOf.
func (e *FieldError) key() toml.Key { return toml.Key(strings.Split(e.Field, ".")) }

// problem formats an error for key k, with the line where k is set when it
// can be found.
func problem(name string, data []byte, k toml.Key, msg string) error {
	if line := lineOf(data, k); line > 0 {
		return fmt.Errorf("%s:%d: %s: %s", name, line, strings.Join(k, "."), msg)
	}
	return fmt.Errorf("%s: %s: %s", name, strings.Join(k, "."), msg)
}

// lineOf finds the line setting key k: the key inside the table named by
// the rest of k ("source[1].page" is the [source.page] table of the second
// [[source]]). A key inside an inline table or array ("rewrite[0].match")
// is found at the line of its outer key, a dotted key ("page.max_length")
// in its parent table. It returns 0 when it cannot tell.
func lineOf(data []byte, k toml.Key) int {
	lines := strings.Split(string(data), "\n")
	for n := len(k) - 1; n >= 0; n-- {
		if line := findKey(lines, k[:n], k[n:]); line > 0 {
			return line
		}
	}
	return 0
}

// splitIndex splits "source[2]" into "source" and 2; the index is -1 if
// there is none.
func splitIndex(part string) (string, int) {
	if m := indexRe.FindStringSubmatch(part); m != nil {
		n, _ := strconv.Atoi(m[2])
		return m[1], n
	}
	return part, -1
}

// findKey returns the line of key rest (its first part, or all of it
// dotted) inside the table named by table, or 0.
func findKey(lines []string, table, rest toml.Key) int {
	var names []string
	idx := -1
	for _, part := range table {
		name, i := splitIndex(part)
		names = append(names, name)
		if i >= 0 {
			idx = i
		}
	}
	want := strings.Join(names, ".")
	var leaves []string
	for _, part := range rest {
		name, _ := splitIndex(part)
		leaves = append(leaves, name)
	}
	leaf, dotted := leaves[0], strings.Join(leaves, ".")
	inTable := want == ""
	arrays := map[string]int{} // [[name]] headers seen
	for i, raw := range lines {
		line := strings.TrimSpace(raw)
		if strings.HasPrefix(line, "[") {
			name := strings.TrimSpace(strings.Trim(strings.SplitN(line, "#", 2)[0], " []"))
			if strings.HasPrefix(line, "[[") {
				arrays[name]++
			}
			top := strings.SplitN(name, ".", 2)[0]
			inTable = name == want && (idx < 0 || arrays[top]-1 == idx)
			continue
		}
		if !inTable {
			continue
		}
		if eq := strings.IndexByte(line, '='); eq > 0 {
			if key := strings.Trim(strings.TrimSpace(line[:eq]), `"'`); key == leaf || key == dotted {
				return i + 1
			}
		}
	}
	return 0
}

// Validate checks every field and returns all problems, each a *FieldError,
// joined.
func (c *Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Problem: fmt.Sprintf(format, args...)})
	}
	if c.StateDir == "" {
		bad("state_dir", "must not be empty")
	}
	if c.ShutdownTimeout <= 0 {
		bad("shutdown_timeout", "%q: must be positive", c.ShutdownTimeout)
	}
	if !strings.HasPrefix(c.Mongo.URI, "mongodb://") && !strings.HasPrefix(c.Mongo.URI, "mongodb+srv://") {
		bad("mongo.uri", "%q: must start with mongodb:// or mongodb+srv://", redact(c.Mongo.URI))
	}
	if c.Mongo.Database == "" || strings.ContainsAny(c.Mongo.Database, `/\. "$`) || len(c.Mongo.Database) > 63 {
		bad("mongo.database", "%q: must be a MongoDB database name (1-63 bytes, none of /\\. \"$)", c.Mongo.Database)
	}
	if c.Mongo.WriteConcern != "majority" {
		if n, err := strconv.Atoi(string(c.Mongo.WriteConcern)); err != nil || n < 1 {
			bad("mongo.write_concern", "%q: must be \"majority\" or a number of nodes, at least 1 (exactly-once needs acknowledged writes)", c.Mongo.WriteConcern)
		}
	}
	if c.Mongo.Timeout <= 0 {
		bad("mongo.timeout", "%q: must be positive", c.Mongo.Timeout)
	}
	if c.Buffer.CommitInterval <= 0 {
		bad("buffer.commit_interval", "%q: must be positive", c.Buffer.CommitInterval)
	}
	if c.Buffer.MaxSize < 1<<20 {
		bad("buffer.max_size", "%q: must be at least 1MiB", c.Buffer.MaxSize)
	}
	if c.Flush.Interval <= 0 {
		bad("flush.interval", "%q: must be positive", c.Flush.Interval)
	}
	if c.Flush.MaxOps < 1 || c.Flush.MaxOps > 100000 {
		bad("flush.max_ops", "%d: must be from 1 to 100000", c.Flush.MaxOps)
	}
	if c.Flush.MaxBackoff < Duration(10*time.Millisecond) {
		bad("flush.max_backoff", "%q: must be at least 10ms", c.Flush.MaxBackoff)
	}
	names := map[string]string{}
	for _, b := range []struct{ field, name string }{
		{"buckets.minute", c.Buckets.Minute}, {"buckets.daily", c.Buckets.Daily}, {"buckets.monthly", c.Buckets.Monthly},
	} {
		switch {
		case b.name == "" || strings.ContainsAny(b.name, "$\x00") || strings.HasPrefix(b.name, "system."):
			bad(b.field, "%q: must be a collection name", b.name)
		case names[b.name] != "":
			bad(b.field, "%q: same collection as %s", b.name, names[b.name])
		default:
			names[b.name] = b.field
		}
	}
	if len(c.Sources) == 0 {
		bad("source", "at least one [[source]] is needed")
	}
	for _, k := range sortedKeys(c.SiteAliases) {
		v := c.SiteAliases[k]
		if k == "" || k != strings.ToLower(k) || strings.ContainsAny(k, " /:{}") {
			bad("site_aliases", "%q: must be a lowercase host name without port", k)
		}
		if v == "" || strings.ContainsAny(v, "{}/\x00") {
			bad("site_aliases", "%q = %q: must map to a site name (no '/')", k, v)
		}
	}
	srcNames := map[string]int{}
	for i := range c.Sources {
		c.Sources[i].aliases = c.SiteAliases
		s := c.Sources[i]
		f := fmt.Sprintf("source[%d].", i)
		if j, dup := srcNames[s.Name]; dup && s.Name != "" {
			bad(f+"name", "%q: same name as source[%d]; set a distinct name", s.Name, j)
		}
		srcNames[s.Name] = i
		if len(s.Paths) == 0 {
			bad(f+"paths", "at least one path or glob is needed")
		}
		for _, p := range s.Paths {
			if _, err := filepath.Match(p, ""); err != nil || p == "" {
				bad(f+"paths", "%q: not a valid glob", p)
			}
		}
		if _, err := parser.New(s.Parser()); err != nil {
			for _, e := range unjoin(err) {
				var ce *parser.ConfigError
				if errors.As(e, &ce) {
					bad(f+ce.Field, "%s", ce.Problem)
				} else {
					bad(f+"format", "%v", e)
				}
			}
		}
	}
	return errors.Join(errs...)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// redact hides a password in a URI for messages.
func redact(uri string) string {
	at := strings.LastIndexByte(uri, '@')
	scheme := strings.Index(uri, "://")
	if at < 0 || scheme < 0 || at < scheme {
		return uri
	}
	userinfo := uri[scheme+3 : at]
	if colon := strings.IndexByte(userinfo, ':'); colon >= 0 {
		return uri[:scheme+3] + userinfo[:colon] + ":xxxxx" + uri[at:]
	}
	return uri
}

// Redacted returns the URI with any password replaced, for logs.
func (m Mongo) Redacted() string { return redact(m.URI) }

// BufferPath is the buffer file inside StateDir.
func (c *Config) BufferPath() string { return filepath.Join(c.StateDir, "buffer.db") }

// Duration is a time.Duration written as a string with a unit ("10s").
type Duration time.Duration

// UnmarshalText parses "10s"; a bare number is refused.
func (d *Duration) UnmarshalText(b []byte) error {
	s := string(b)
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return fmt.Errorf("duration %s has no unit: write it as a string such as \"%ss\"", s, s)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("bad duration %q: want a string such as \"10s\" or \"1m30s\"", s)
	}
	*d = Duration(v)
	return nil
}

// MarshalText formats the duration as time.Duration does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// String formats the duration as time.Duration does.
func (d Duration) String() string { return time.Duration(d).String() }

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Size is a byte count written as "512MiB", "1GB" or a number of bytes.
type Size int64

var sizeUnits = map[string]int64{
	"": 1, "b": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}

var sizeRe = regexp.MustCompile(`^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*$`)

// UnmarshalText parses a size such as "1GiB".
func (s *Size) UnmarshalText(b []byte) error {
	m := sizeRe.FindStringSubmatch(string(b))
	if m == nil {
		return fmt.Errorf("bad size %q: want a string such as \"512MiB\" or \"1GiB\"", b)
	}
	unit, ok := sizeUnits[strings.ToLower(m[2])]
	if !ok {
		return fmt.Errorf("bad size %q: unknown unit %q (use B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)", b, m[2])
	}
	n, _ := strconv.ParseFloat(m[1], 64)
	*s = Size(n * float64(unit))
	return nil
}

// MarshalText formats the size in bytes.
func (s Size) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// String formats the size with a binary unit where it divides evenly.
func (s Size) String() string {
	for _, u := range []struct {
		n    int64
		name string
	}{{1 << 40, "TiB"}, {1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if int64(s) >= u.n && int64(s)%u.n == 0 {
			return strconv.FormatInt(int64(s)/u.n, 10) + u.name
		}
	}
	return strconv.FormatInt(int64(s), 10) + "B"
}

// WriteConcern is "majority" or a number of nodes, written as a string or
// a TOML integer.
type WriteConcern string

// UnmarshalText accepts any text; Validate checks it.
func (w *WriteConcern) UnmarshalText(b []byte) error {
	*w = WriteConcern(b)
	return nil
}

// Nodes returns the number of nodes, or -1 for "majority".
func (w WriteConcern) Nodes() int {
	n, err := strconv.Atoi(string(w))
	if err != nil {
		return -1
	}
	return n
}

// Parser returns the parser configuration of the source, with the site
// aliases of the Config it was loaded or validated in.
func (s Source) Parser() parser.Config {
	c := parser.Config{
		Format:      s.Format,
		Site:        s.Site,
		SiteAliases: s.aliases,
		MaxPageLen:  s.Page.MaxLength,
		LogFormat:   s.LogFormat,
		Regex:       s.Regex,
		TimeLayout:  s.TimeLayout,
		JSON: parser.JSONFields{
			Time: s.JSON.Time, URI: s.JSON.URI, Request: s.JSON.Request, Method: s.JSON.Method,
			Status: s.JSON.Status, Host: s.JSON.Host, UserAgent: s.JSON.UserAgent,
		},
		Page: parser.PageConfig{
			KeepQuery:          s.Page.KeepQuery,
			Lowercase:          s.Page.Lowercase,
			StripTrailingSlash: s.Page.StripTrailingSlash,
			IndexFiles:         s.Page.IndexFiles,
			MaxPagesPerMinute:  s.Page.MaxPagesPerMinute,
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
	return c
}
