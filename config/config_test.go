package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/bucket"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/flusher"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/pipeline"
	"github.com/logtally/logtally/record"
	"github.com/logtally/logtally/tailer"
)

const good = `
instance = "web-1"
state_dir = "/tmp/lt"
shutdown_timeout = "5s"

[mongo]
uri = "mongodb://u:secret@db:27017"
write_concern = 2
journal = false
timeout = "3s"

[buffer]
commit_interval = "500ms"
max_size = "64MiB"

[flush]
interval = "2s"
max_ops = 500
max_backoff = "30s"

[buckets]
minute = "m"

[[source]]
site = "www.example.com"
paths = ["/var/log/nginx/access.log"]
format = "combined"

[[source]]
name = "api"
site = "api.example.com"
paths = ["/var/log/nginx/api*.log"]
format = "common"
`

func TestParseGood(t *testing.T) {
	c, err := Parse("t.toml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if c.Instance != "web-1" || c.StateDir != "/tmp/lt" || c.ShutdownTimeout.D() != 5*time.Second {
		t.Fatalf("top level: %+v", c)
	}
	if c.Mongo.WriteConcern != "2" || c.Mongo.Journal || c.Mongo.Timeout.D() != 3*time.Second || c.Mongo.Database != "logtally" {
		t.Fatalf("mongo: %+v", c.Mongo)
	}
	if c.Buffer.MaxSize != 64<<20 || c.Buffer.CommitInterval.D() != 500*time.Millisecond {
		t.Fatalf("buffer: %+v", c.Buffer)
	}
	if c.Flush.MaxOps != 500 || c.Flush.Interval.D() != 2*time.Second || c.Flush.MaxBackoff.D() != 30*time.Second {
		t.Fatalf("flush: %+v", c.Flush)
	}
	// Unset keys keep their defaults.
	want := Default().Buckets
	want.Minute = "m"
	if c.Buckets != want {
		t.Fatalf("buckets: %+v", c.Buckets)
	}
	if len(c.Sources) != 2 || c.Sources[0].Name != "www.example.com" || c.Sources[1].Name != "api" || c.Sources[1].Format != "common" {
		t.Fatalf("sources: %+v", c.Sources)
	}
	if got := c.Mongo.Redacted(); strings.Contains(got, "secret") || !strings.Contains(got, "u:xxxxx@db") {
		t.Fatalf("Redacted() = %q", got)
	}
}

func TestErrorsNameKeyAndLine(t *testing.T) {
	src := `state_dir = "/tmp/x"
[mongo]
uri = "mongodb://localhost"
timout = "3s"

[flush]
interval = 10
max_ops = 0

[[source]]
site = "a"
paths = ["/x"]
format = "combined"

[[source]]
site = "b"
paths = ["/y["]
format = "apache"
colour = "red"
`
	cases := []struct {
		name, src string
		want      []string
	}{
		{"unknown keys", strings.Replace(src, "interval = 10", `interval = "10s"`, 1), []string{"t.toml:4: mongo.timout: unknown key", "t.toml:19: source.colour: unknown key"}},
		{"bare number duration", strings.Replace(src, "timout", "timeout", 1) + "", []string{"t.toml:7:", "flush.interval", "no unit"}},
		{"bad values", strings.NewReplacer("timout", "timeout", "interval = 10", `interval = "10s"`, `colour = "red"`, "").Replace(src),
			[]string{"t.toml:8: flush.max_ops: 0: must be from 1 to 100000", `t.toml:17: source[1].paths: "/y[": not a valid glob`, `t.toml:18: source[1].format: "apache": unknown log format (want one of combined, common, vhost_combined, nginx, json, regex)`}},
		{"wrong type", `state_dir = 5`, []string{"t.toml:1: state_dir: incompatible types"}},
		{"syntax", "[mongo\nuri = 1", []string{"t.toml:1: table header:", "table name"}},
		// The parser's last key is in the table before a broken header:
		// the error names the header's line, not that table.
		{"syntax in a later header", "[mongo]\nuri = \"mongodb://h/\"\n[flush\ninterval = \"1s\"\n", []string{"t.toml:3: table header: expected '.' or ']'"}},
		// A required key missing is at its table's header.
		{"missing site", "state_dir = \"/x\"\n\n[[source]]\npaths = [\"/x.log\"]\nformat = \"combined\"\n", []string{"t.toml:3: source[0].site: must not be empty"}},
		{"no source", `state_dir = "/x"`, []string{"source: at least one [[source]] is needed"}},
		{"bad size", "[buffer]\nmax_size = \"1 furlong\"\n", []string{"t.toml:2:", "buffer.max_size", "unknown unit"}},
		{"write concern", "[mongo]\nwrite_concern = \"most\"\n", []string{`t.toml:2: mongo.write_concern: "most"`}},
		{"line limit zero", "state_dir = \"/x\"\nmax_line_bytes = \"0\"\n", []string{`t.toml:2: max_line_bytes: "0B": must be between 1 and 64MiB`}},
		{"negative procs", "state_dir = \"/x\"\nmax_procs = -1\n", []string{`t.toml:2: max_procs: -1: must be 0 (all cores) or more`}},
		{"line limit huge", "max_line_bytes = \"1GiB\"\n", []string{`t.toml:1: max_line_bytes: "1GiB": must be between 1 and 64MiB`}},
		{"unhealthy_after negative", "state_dir = \"/x\"\n[http]\nunhealthy_after = \"-1s\"\n", []string{`t.toml:3: http.unhealthy_after: "-1s": must be "0" (the default: 1m0s, five flush intervals and at least 1m0s) or at least twice flush.interval (10s)`}},
		{"unhealthy_after under two flushes", "[flush]\ninterval = \"30s\"\n[http]\nunhealthy_after = \"50s\"\n", []string{`t.toml:4: http.unhealthy_after: "50s": must be "0" (the default: 2m30s,`, "at least twice flush.interval (30s)"}},
		{"no open files", "state_dir = \"/x\"\nmax_open_files = 0\n", []string{`t.toml:2: max_open_files: 0: must be at least 1`}},
		{"fewer open files than sources", "max_open_files = 1\n\n[[source]]\nsite = \"a\"\npaths = [\"/a\"]\nformat = \"common\"\n\n[[source]]\nsite = \"b\"\npaths = [\"/b\"]\nformat = \"common\"\n",
			[]string{`t.toml:1: max_open_files: 1: must be at least 1 and at least the number of sources (2)`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("t.toml", []byte(tc.src))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
		})
	}
}

// TestParseErrorsWrapFieldErrors checks that each problem Parse reports,
// unknown keys included, wraps its *FieldError.
func TestParseErrorsWrapFieldErrors(t *testing.T) {
	_, err := Parse("t.toml", []byte("colour = 1\n[flush]\nmax_ops = 0\n[[source]]\nsite = \"s\"\npaths = [\"/x\"]\nformat = \"common\"\n"))
	if err == nil {
		t.Fatal("no error")
	}
	var fields []string
	for _, e := range unjoin(err) {
		var fe *FieldError
		if !errors.As(e, &fe) {
			t.Errorf("%q does not wrap a *FieldError", e)
			continue
		}
		fields = append(fields, fe.Field)
	}
	if strings.Join(fields, " ") != "colour" {
		t.Errorf("fields %q (unknown keys stop Parse before Validate)", fields)
	}
	_, err = Parse("t.toml", []byte("[flush]\nmax_ops = 0\ninterval = \"-1s\"\n[[source]]\nsite = \"s\"\npaths = [\"/x\"]\nformat = \"common\"\n"))
	fields = nil
	for _, e := range unjoin(err) {
		var fe *FieldError
		if errors.As(e, &fe) {
			fields = append(fields, fe.Field)
		}
	}
	if strings.Join(fields, " ") != "flush.interval flush.max_ops" {
		t.Errorf("fields %q in %v", fields, err)
	}
}

func TestURIFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "uri")
	if err := os.WriteFile(f, []byte("mongodb://user:pw@h:1/\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := "[mongo]\nuri_file = \"" + f + "\"\n[[source]]\nsite=\"s\"\npaths=[\"/x\"]\nformat=\"common\"\n"
	c, err := Parse("t.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if c.Mongo.URI != "mongodb://user:pw@h:1/" {
		t.Fatalf("URI = %q", c.Mongo.URI)
	}
	_, err = Parse("t.toml", []byte(strings.Replace(src, f, f+".missing", 1)))
	if err == nil || !strings.Contains(err.Error(), "t.toml:2: mongo.uri_file:") {
		t.Fatalf("missing uri_file: %v", err)
	}
	var fe *FieldError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &fe) || fe.Field != "mongo.uri_file" {
		t.Errorf("missing uri_file: %v does not wrap fs.ErrNotExist and its *FieldError", err)
	}
}

// TestDefaultsLiveInTheirPackages checks that Default takes each default
// from the package that uses it, and the config-only ones from the
// constants here.
func TestDefaultsLiveInTheirPackages(t *testing.T) {
	c := Default()
	for _, tc := range []struct {
		key       string
		got, want any
	}{
		{"flush.interval", c.Flush.Interval.D(), flusher.DefaultInterval},
		{"flush.max_ops", c.Flush.MaxOps, flusher.DefaultMaxOps},
		{"flush.max_backoff", c.Flush.MaxBackoff.D(), flusher.DefaultMaxBackoff},
		{"mongo.timeout", c.Mongo.Timeout.D(), flusher.DefaultTimeout},
		{"buckets.minute", c.Buckets.Minute, bucket.DefaultMinuteCollection},
		{"buckets.daily", c.Buckets.Daily, bucket.DefaultDailyCollection},
		{"buckets.monthly", c.Buckets.Monthly, bucket.DefaultMonthlyCollection},
		{"buffer.max_size", int64(c.Buffer.MaxSize), int64(buffer.DefaultMaxSize)},
		{"buffer.commit_interval", c.Buffer.CommitInterval.D(), pipeline.DefaultCommitInterval},
		{"state_dir", c.StateDir, DefaultStateDir},
		{"shutdown_timeout", c.ShutdownTimeout.D(), pipeline.DefaultShutdownTimeout},
		{"max_line_bytes", int(c.MaxLineBytes), tailer.DefaultMaxLineBytes},
		{"max_open_files", c.MaxOpenFiles, tailer.DefaultMaxOpenFiles},
		{"lease_ttl", c.LeaseTTL.D(), record.DefaultLeaseTTL},
		{"mongo.uri", c.Mongo.URI, DefaultMongoURI},
		{"mongo.database", c.Mongo.Database, DefaultDatabase},
		{"mongo.write_concern", string(c.Mongo.WriteConcern), DefaultWriteConcern},
		{"mongo.journal", c.Mongo.Journal, DefaultJournal},
	} {
		if tc.got != tc.want {
			t.Errorf("Default() %s = %v, want %v", tc.key, tc.got, tc.want)
		}
	}
	// The defaults are valid, a source apart.
	c.Sources = []Source{{Name: "s", Site: "s", Paths: []string{"/x"}, Format: "common"}}
	if err := c.Validate(); err != nil {
		t.Errorf("Default() with a source: %v", err)
	}
}

// The example config shipped in systemd/ must load.
func TestExampleConfigLoads(t *testing.T) {
	c, err := Load("../systemd/logtally.toml")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Sources) == 0 {
		t.Fatal("example config has no source")
	}
}

const issue3 = `
[site_aliases]
"www.example.com" = "example.com"

[[source]]
site = "a.example.com"
paths = ["/a"]
format = "combined"

[[source]]
site = "{host}"
paths = ["/var/log/nginx/*.log"]
format = "nginx"
log_format = '$host $remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_time'

[source.page]
keep_query = ["page", "id"]
rewrite = [
  { match = '^/user/[0-9]+', replace = '/user/:id' },
  { match = '^/p/(\w+)/.*', replace = '/p/$1' },
]
lowercase = true
strip_trailing_slash = true
index_files = ["index.html"]
max_length = 256
max_pages_per_minute = 1000

[source.filter]
methods = ["GET", "HEAD"]
status = ["2xx", "3xx", "404"]
exclude_extensions = ["png", "css", "js"]
exclude_paths = ["/admin/", "^/api/v[0-9]+/health$"]
exclude_user_agents = ["bots", "Nagios"]

[[source]]
name = "caddy"
site = "{host}"
paths = ["/var/log/caddy/access.log"]
format = "json"
time_layout = "unix"
[source.json]
time = "ts"
uri = "request.uri"
method = "request.method"
host = "request.host"

[[source]]
name = "custom"
site = "c.example.com"
paths = ["/c"]
format = "regex"
regex = '^(?P<time>\S+) (?P<method>\S+) (?P<path>\S+) (?P<status>\d+)'
time_layout = "rfc3339"
`

func TestIssue3Keys(t *testing.T) {
	c, err := Parse("t.toml", []byte(issue3))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Sources) != 4 {
		t.Fatalf("%d sources", len(c.Sources))
	}
	pc := c.Sources[1].Parser()
	if pc.Format != "nginx" || pc.Site != "{host}" || pc.SiteAliases["www.example.com"] != "example.com" || pc.MaxPageLen != 256 ||
		len(pc.Page.Rewrite) != 2 || pc.Page.Rewrite[1].Replace != "/p/$1" || !pc.Page.Lowercase || !pc.Page.StripTrailingSlash ||
		pc.Page.MaxPagesPerMinute != 1000 || len(pc.Filter.ExcludeUserAgents) != 2 || pc.Filter.Status[2] != "404" {
		t.Fatalf("parser config: %+v", pc)
	}
	// The parser config works: one line through it.
	p, err := parser.New(pc)
	if err != nil {
		t.Fatal(err)
	}
	var h parser.Hit
	line := `WWW.Example.com 10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET /User/42/?page=2&x=1 HTTP/1.1" 200 5 "-" "Mozilla/5.0" 0.001`
	if o := p.Parse([]byte(line), &h); o != parser.OK || string(h.Site) != "example.com" || string(h.Page) != "/user/:id?page=2" {
		t.Fatalf("Parse = %v %s %s", o, h.Site, h.Page)
	}
	if j := c.Sources[2].Parser(); j.JSON.URI != "request.uri" || j.TimeLayout != "unix" || j.JSON.Status != "" {
		t.Fatalf("json: %+v", j.JSON)
	}
	if _, err := parser.New(c.Sources[3].Parser()); err != nil {
		t.Fatal(err)
	}
}

func TestIssue3Errors(t *testing.T) {
	for _, tc := range []struct {
		old, new string
		want     []string
	}{
		{"match = '^/user/[0-9]+'", "match = '^/user/[0-9+'", []string{`t.toml:18: source[1].page.rewrite[0].match: "^/user/[0-9+": error parsing regexp`}},
		{`status = ["2xx", "3xx", "404"]`, `status = ["2xx", "7xx", "404"]`, []string{`t.toml:30: source[1].filter.status[1]: "7xx"`}},
		{`max_length = 256`, `max_length = 8`, []string{`t.toml:25: source[1].page.max_length: 8: must be at least 32`}},
		{`$status $body_bytes_sent`, `$status$body_bytes_sent`, []string{`t.toml:14: source[1].log_format: `, "nothing between them"}},
		{`format = "json"`, `format = "jsn"`, []string{`t.toml:39: source[2].format: "jsn": unknown log format`}},
		{`time_layout = "unix"`, `time_layout = "soon"`, []string{`t.toml:40: source[2].time_layout: "soon"`}},
		{`(?P<status>\d+)`, `(?P<code>\d+)`, []string{`t.toml:52: source[3].regex: `, "no (?P<status>...) group"}},
		{`exclude_paths = ["/admin/"`, `exclude_paths = ["admin/"`, []string{`t.toml:32: source[1].filter.exclude_paths[0]: "admin/": must be a path prefix`}},
		{`"www.example.com" = "example.com"`, `"WWW.example.com" = ""`, []string{`site_aliases: "WWW.example.com": must be a lowercase host`, `site_aliases: "WWW.example.com" = "": must map to a site name`}},
		{`site = "a.example.com"`, `site = "{vhost}"`, []string{`t.toml:6: source[0].site: "{vhost}": write "{host}"`}},
		{`site = "a.example.com"`, `site = ""`, []string{`t.toml:6: source[0].site: must not be empty`}},
		{"lowercase = true", "lowercase = true\ncolour = 1", []string{"source.page.colour: unknown key"}},
	} {
		src := strings.Replace(issue3, tc.old, tc.new, 1)
		if src == issue3 {
			t.Fatalf("%q not in the config", tc.old)
		}
		_, err := Parse("t.toml", []byte(src))
		if err == nil {
			t.Errorf("%s: no error", tc.new)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q\ndoes not contain %q", err, w)
			}
		}
	}
}

func TestSiteAndWriteConcernGuards(t *testing.T) {
	base := "[[source]]\nsite = %q\npaths = [\"/x\"]\nformat = \"combined\"\n"
	_, err := Parse("t.toml", []byte(strings.Replace(base, "%q", `"a/b"`, 1)))
	if err == nil || !strings.Contains(err.Error(), "source[0].site") || !strings.Contains(err.Error(), "without '/'") {
		t.Fatalf("site with '/': %v", err)
	}
	_, err = Parse("t.toml", []byte("[mongo]\nwrite_concern = 0\n"+strings.Replace(base, "%q", `"a"`, 1)))
	if err == nil || !strings.Contains(err.Error(), "t.toml:2: mongo.write_concern") {
		t.Fatalf("write_concern 0: %v", err)
	}
}

func TestBucketLifecycleKeys(t *testing.T) {
	src := "[buckets]\npreallocate = false\npreallocate_rate = 10.5\npreallocate_min_hits = 5\nminute_retention = \"72h\"\ndaily_retention = \"8760h\"\nmonthly_retention = \"0s\"\n" +
		"[[source]]\nsite = \"a\"\npaths = [\"/a\"]\nformat = \"common\"\n"
	c, err := Parse("t.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	b := c.Buckets
	if b.Preallocate || b.PreallocateRate != 10.5 || b.PreallocateMinHits != 5 || b.MinuteRetention.D() != 72*time.Hour ||
		b.DailyRetention.D() != 8760*time.Hour || b.MonthlyRetention != 0 {
		t.Fatalf("buckets: %+v", b)
	}
	d := Default().Buckets
	if !d.Preallocate || d.PreallocateRate != flusher.DefaultPreallocateRate || d.PreallocateMinHits != 0 ||
		d.MinuteRetention.D() != 48*time.Hour || d.DailyRetention != 0 || d.MonthlyRetention != 0 {
		t.Fatalf("defaults: %+v", d)
	}
}

func TestBucketLifecycleErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"preallocate_rate = 0.0", `t.toml:2: buckets.preallocate_rate: 0: must be more than 0`},
		{"preallocate_rate = -5.0", `t.toml:2: buckets.preallocate_rate: -5: must be more than 0`},
		{"preallocate_min_hits = -1", `t.toml:2: buckets.preallocate_min_hits: -1: must be 0 (each level's break-even) or more`},
		{`minute_retention = "-1h"`, `t.toml:2: buckets.minute_retention: "-1h0m0s": must be "0" (keep) or at least 1h`},
		{`daily_retention = "30m"`, `t.toml:2: buckets.daily_retention: "30m0s": must be "0" (keep) or at least 1h`},
		{`monthly_retention = "-720h"`, `t.toml:2: buckets.monthly_retention: "-720h0m0s"`},
		{`minute_retention = 48`, `buckets.minute_retention`},
		{`daily_retention = "1"`, `no unit`},
	} {
		_, err := Parse("t.toml", []byte("[buckets]\n"+tc.src+"\n[[source]]\nsite = \"a\"\npaths = [\"/a\"]\nformat = \"common\"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.src, err, tc.want)
		}
	}
	// Preallocation off: its rate is not checked.
	if _, err := Parse("t.toml", []byte("[buckets]\npreallocate = false\npreallocate_rate = 0.0\n[[source]]\nsite = \"a\"\npaths = [\"/a\"]\nformat = \"common\"\n")); err != nil {
		t.Errorf("preallocate off, rate 0: %v", err)
	}
}

func TestCoarseInterval(t *testing.T) {
	src := "[flush]\ninterval = \"10s\"\ncoarse_interval = %q\n[[source]]\nsite = \"s\"\npaths = [\"/x\"]\nformat = \"common\"\n"
	c, err := Parse("t.toml", fmt.Appendf(nil, src, "5m"))
	if err != nil || c.Flush.CoarseInterval.D() != 5*time.Minute {
		t.Fatalf("5m: %v, %v", c.Flush.CoarseInterval, err)
	}
	if c, err := Parse("t.toml", fmt.Appendf(nil, src, "0")); err != nil || c.Flush.CoarseInterval != 0 {
		t.Fatalf("0: %v, %v", c.Flush.CoarseInterval, err)
	}
	_, err = Parse("t.toml", fmt.Appendf(nil, src, "5s"))
	if err == nil || !strings.Contains(err.Error(), `t.toml:3: flush.coarse_interval: "5s": must be "0" (off) or at least flush.interval (10s)`) {
		t.Fatalf("5s: %v", err)
	}
}

// rotated and follow_symlinks: decoded, off and empty by default, and a
// rotated glob that is not an absolute glob is an error naming the key.
func TestSourceRotatedAndSymlinks(t *testing.T) {
	src := "[[source]]\nsite = \"s\"\npaths = [\"/var/log/nginx/access.log\"]\nformat = \"combined\"\n"
	c, err := Parse("t.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Sources[0]; s.Rotated != nil || s.FollowSymlinks {
		t.Errorf("defaults: rotated %q, follow_symlinks %v", s.Rotated, s.FollowSymlinks)
	}
	c, err = Parse("t.toml", []byte(src+"rotated = [\"/var/log/nginx/old/access.log*\"]\nfollow_symlinks = true\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Sources[0]; len(s.Rotated) != 1 || s.Rotated[0] != "/var/log/nginx/old/access.log*" || !s.FollowSymlinks {
		t.Errorf("decoded: rotated %q, follow_symlinks %v", s.Rotated, s.FollowSymlinks)
	}
	for _, bad := range []string{`"old/access.log*"`, `"/var/log/[old/x"`, `""`} {
		_, err := Parse("t.toml", []byte(src+"rotated = ["+bad+"]\n"))
		if err == nil || !strings.Contains(err.Error(), "t.toml:5: source[0].rotated:") {
			t.Errorf("rotated = [%s]: %v", bad, err)
		}
	}
}
