package config

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/pipeline"
	"github.com/logtally/logtally/visitor"
)

// MaxLineBytesLimit bounds max_line_bytes: a line is held in memory whole
// (the tailer and the dry run each keep one such buffer per file read).
const MaxLineBytesLimit Size = 64 << 20

// LogFormats lists the accepted values of log.format.
var LogFormats = []string{"text", "json"}

// LogLevels lists the accepted values of log.level, least severe first;
// each is also a valid slog.Level text.
var LogLevels = []string{"debug", "info", "warn", "error"}

// checkListen checks a host:port to listen on: the host may be empty (all
// interfaces), a name or an IP address; the port is a number from 1 to
// 65535.
func checkListen(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.New("must be host:port, e.g. 127.0.0.1:9464 or :9464")
	}
	if strings.ContainsAny(host, " /") {
		return errors.New("host must be a name or an IP address")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q must be a number from 1 to 65535", port)
	}
	return nil
}

// Validate checks every field and returns all problems, each a *FieldError,
// joined.
func (c *Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Problem: fmt.Sprintf(format, args...)})
	}
	if c.Instance == "" {
		bad("instance", "must not be empty (it names this host's progress record in MongoDB; default: the host name)")
	}
	if c.StateDir == "" {
		bad("state_dir", "must not be empty")
	}
	if c.ShutdownTimeout <= 0 {
		bad("shutdown_timeout", "%q: must be positive", c.ShutdownTimeout)
	}
	if c.MaxProcs < 0 {
		bad("max_procs", "%d: must be 0 (all cores) or more", c.MaxProcs)
	}
	if c.LeaseTTL.D() < 3*time.Second {
		bad("lease_ttl", "%q: must be at least 3s", c.LeaseTTL)
	}
	if c.MaxLineBytes <= 0 || c.MaxLineBytes > MaxLineBytesLimit {
		bad("max_line_bytes", "%q: must be between 1 and %s", c.MaxLineBytes, MaxLineBytesLimit)
	}
	if c.MaxOpenFiles < max(1, len(c.Sources)) {
		bad("max_open_files", "%d: must be at least 1 and at least the number of sources (%d): they share it equally", c.MaxOpenFiles, len(c.Sources))
	}
	if !strings.HasPrefix(c.Mongo.URI, "mongodb://") && !strings.HasPrefix(c.Mongo.URI, "mongodb+srv://") {
		bad("mongo.uri", "%q: must start with mongodb:// or mongodb+srv://", redactURI(c.Mongo.URI))
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
	if c.Dimensions.Values < 1 || c.Dimensions.Values > maxDimValues {
		bad("dimensions.values", "%d: must be 1 to %d", c.Dimensions.Values, maxDimValues)
	}
	if _, err := visitor.ParsePeriod(c.Visitors.SaltPeriod); err != nil {
		bad("visitors.salt_period", "%v", err)
	}
	if c.Visitors.SaltGrace < 0 {
		bad("visitors.salt_grace", "%q: must not be negative", c.Visitors.SaltGrace)
	}
	if c.Flush.CoarseInterval != 0 && c.Flush.CoarseInterval < c.Flush.Interval {
		bad("flush.coarse_interval", "%q: must be \"0\" (off) or at least flush.interval (%s)", c.Flush.CoarseInterval, c.Flush.Interval)
	}
	names := map[string]string{}
	for _, b := range []struct{ field, name string }{
		{"buckets.minute", c.Buckets.Minute}, {"buckets.daily", c.Buckets.Daily}, {"buckets.monthly", c.Buckets.Monthly},
		{"buckets.sites", c.Buckets.Sites}, {"buckets.visitors", c.Buckets.Visitors},
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
	b := c.Buckets
	if b.Preallocate {
		if !(b.PreallocateRate > 0 && b.PreallocateRate <= 100000) {
			bad("buckets.preallocate_rate", "%v: must be more than 0 and at most 100000 buckets per second when preallocate is on", b.PreallocateRate)
		}
	}
	if b.PreallocateMinHits < 0 {
		bad("buckets.preallocate_min_hits", "%d: must be 0 (each level's break-even) or more", b.PreallocateMinHits)
	}
	for _, r := range []struct {
		field string
		d     Duration
	}{{"buckets.minute_retention", b.MinuteRetention}, {"buckets.daily_retention", b.DailyRetention}, {"buckets.monthly_retention", b.MonthlyRetention}} {
		// Shorter than an hour, buckets would expire while ordinary
		// batches still write to them.
		if r.d < 0 || (r.d > 0 && r.d < Duration(time.Hour)) {
			bad(r.field, "%q: must be \"0\" (keep) or at least 1h", r.d)
		}
	}
	if c.HTTP.Listen != "" {
		if err := checkListen(c.HTTP.Listen); err != nil {
			bad("http.listen", "%q: %v (empty disables the endpoints)", c.HTTP.Listen, err)
		}
	}
	if u := c.HTTP.UnhealthyAfter; u < 0 || (u > 0 && u < 2*c.Flush.Interval) {
		bad("http.unhealthy_after", "%q: must be \"0\" (the default: %s, five flush intervals and at least %s) or at least twice flush.interval (%s)",
			u, pipeline.DefaultUnhealthyAfter(c.Flush.Interval.D()), pipeline.MinDefaultUnhealthyAfter, c.Flush.Interval)
	}
	checkHosts("http.hosts", c.HTTP.Hosts, bad)
	if !slices.Contains(LogFormats, c.Log.Format) {
		bad("log.format", "%q: must be one of %s", c.Log.Format, strings.Join(LogFormats, ", "))
	}
	if !slices.Contains(LogLevels, c.Log.Level) {
		bad("log.level", "%q: must be one of %s", c.Log.Level, strings.Join(LogLevels, ", "))
	}
	for _, g := range c.Include {
		if _, err := filepath.Match(g, ""); err != nil || g == "" {
			bad("include", "%q: not a valid glob", g)
		}
	}
	if len(c.Sources) == 0 && !c.readsOnly {
		bad("source", "at least one [[source]] is needed")
	}
	c.validateDashboard(bad)
	for _, k := range slices.Sorted(maps.Keys(c.SiteAliases)) {
		v := c.SiteAliases[k]
		if k == "" || k != strings.ToLower(k) || strings.ContainsAny(k, " /:{}") {
			bad("site_aliases", "%q: must be a lowercase host name without port", k)
		}
		if v == "" || strings.ContainsAny(v, "{}/\x00") {
			bad("site_aliases", "%q = %q: must map to a site name (no '/')", k, v)
		}
	}
	srcNames, srcSites := map[string]int{}, map[string]int{}
	for i := range c.Sources {
		c.Sources[i].aliases = c.SiteAliases
		s := c.Sources[i]
		f := fmt.Sprintf("source[%d].", i)
		j, dup := srcNames[s.Name]
		if dup && s.Name != "" {
			bad(f+"name", "%q: same name as %s; set a distinct name", s.Name, c.sourceRef(j, s.from, "name"))
		}
		srcNames[s.Name] = i
		// One file per site: a site's sources in two files (a copied
		// file whose site was not changed) is an error.
		if k, seen := srcSites[s.Site]; !seen {
			srcSites[s.Site] = i
		} else if o := c.Sources[k].from; !dup && s.Site != "" && s.Site != parser.SiteFromLine && o != nil && s.from != nil && o.name != s.from.name {
			bad(f+"site", "%q: also the site of %s; keep a site's sources in one file", s.Site, c.sourceRef(k, s.from, "site"))
		}
		if len(s.Paths) == 0 {
			bad(f+"paths", "at least one path or glob is needed")
		}
		for _, p := range s.Paths {
			if _, err := filepath.Match(p, ""); err != nil || p == "" {
				bad(f+"paths", "%q: not a valid glob", p)
			} else if d := kernelDir(p); d != "" {
				bad(f+"paths", "%q: under %s, whose files are not logs (they report a size of 0: not a line would be read)", p, d)
			}
		}
		for _, p := range s.Rotated {
			if _, err := filepath.Match(p, ""); err != nil || !filepath.IsAbs(p) {
				bad(f+"rotated", "%q: must be an absolute path or glob (where the source's rotated files go, e.g. \"/var/log/nginx/old/access.log*\")", p)
			} else if d := kernelDir(p); d != "" {
				bad(f+"rotated", "%q: under %s, whose files are not logs", p, d)
			}
		}
		badClass := map[string]bool{}
		for j, b := range s.Bots {
			if _, err := botclass.ParseClass(b.Class); err != nil {
				k := fmt.Sprintf("bots[%d].class", j)
				badClass[k] = true
				bad(f+k, "%q: must be search, ai, tool, bot or suspect", b.Class)
			}
		}
		if _, err := parser.New(s.Parser()); err != nil {
			for _, e := range unjoin(err) {
				var ce *parser.ConfigError
				if errors.As(e, &ce) {
					if badClass[ce.Field] {
						continue // named above
					}
					bad(f+ce.Field, "%s", ce.Problem)
				} else {
					bad(f+"format", "%v", e)
				}
			}
		}
	}
	return errors.Join(errs...)
}

// kernelDir returns "/proc" or "/sys" when the glob p (valid, relative
// to the working directory or absolute) can match a path under it, else
// "". Their files are the kernel's, report a size of 0 and would be
// followed without a line read. /dev is not refused: its devices are not
// regular files, which the tailers never follow, and /dev/shm is a tmpfs
// where a log may be.
func kernelDir(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return ""
	}
	first, _, _ := strings.Cut(strings.TrimPrefix(abs, "/"), "/")
	for _, d := range []string{"proc", "sys"} {
		if ok, _ := filepath.Match(first, d); ok {
			return "/" + d
		}
	}
	return ""
}

// ListenWarning returns, for an http.listen that is not a loopback address
// (all interfaces, a routable IP, or a host name other than localhost,
// which may resolve to anything), the warning `run` logs and `check`
// prints: the endpoints have no authentication, and /status shows file
// paths, the instance name and the sources to whoever reaches them. It
// returns "" for a loopback address or an empty (disabled) listen.
func (h HTTP) ListenWarning() string {
	if h.Listen == "" || isLoopback(h.Listen) {
		return ""
	}
	return fmt.Sprintf("http.listen %q is not a loopback address: /metrics, /healthz and /status are served "+
		"without authentication to every host that can reach it, and /status shows log file paths, "+
		"the instance name and recent warnings; listen on 127.0.0.1 and put a proxy with authentication "+
		"in front, or firewall the port", h.Listen)
}
