package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/logtally/logtally/dims"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/salts"
	"github.com/logtally/logtally/visitor"

	"github.com/BurntSushi/toml"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/flusher"
	"github.com/logtally/logtally/pipeline"
	"github.com/logtally/logtally/record"
	"github.com/logtally/logtally/redact"
	"github.com/logtally/logtally/tailer"
)

// Config is the whole configuration file.
type Config struct {
	// Include lists the globs of the included files, each holding
	// [[source]] tables only; relative globs are resolved against the main
	// file's directory. Default DefaultInclude. Read by Load, not Parse.
	Include []string `toml:"include"`
	// Files are the files read, the main file first, then the included
	// ones in the order their sources were appended. Set by Load and Parse.
	Files []string `toml:"-"`
	// Instance names this host in logs and in its progress record in
	// MongoDB; it must be unique among the hosts writing to one database.
	// Default: the host name.
	Instance string `toml:"instance"`
	// StateDir holds buffer.db.
	StateDir string `toml:"state_dir"`
	// ShutdownTimeout bounds the final flush on SIGTERM.
	ShutdownTimeout Duration `toml:"shutdown_timeout"`
	// MaxProcs is how many cores `logtally run` uses at once at most (Go's
	// GOMAXPROCS); 0: all the machine's (or its cgroup's). The GOMAXPROCS
	// environment variable, when set, wins. Default DefaultMaxProcs.
	MaxProcs int `toml:"max_procs"`
	// MaxLineBytes is the longest line counted, '\n' not included, by the
	// daemon, replay and the dry run alike; longer lines are skipped and
	// counted as too long.
	MaxLineBytes Size `toml:"max_line_bytes"`
	// MaxOpenFiles is the most log files `logtally run` keeps open at
	// once, shared equally by the sources; past it, quiet files are closed
	// and polled by path, and opened again when they change (see
	// tailer.Config.MaxOpenFiles). Default tailer.DefaultMaxOpenFiles.
	MaxOpenFiles int `toml:"max_open_files"`
	// LeaseTTL is how long this instance's lease on its progress record
	// lasts without renewal: a restart with a lost state dir waits up to
	// this long after a crash before it rebuilds the state.
	LeaseTTL Duration `toml:"lease_ttl"`
	// Mongo is the database connection.
	Mongo Mongo `toml:"mongo"`
	// Buffer configures the on-disk buffer.
	Buffer Buffer `toml:"buffer"`
	// Flush configures writing to MongoDB.
	Flush Flush `toml:"flush"`
	// Buckets names the collections.
	Buckets Buckets `toml:"buckets"`
	// HTTP configures the metrics, health and status endpoints.
	HTTP HTTP `toml:"http"`
	// Log configures the daemon's log.
	Log Log `toml:"log"`
	// Visitors configures the unique visitors.
	Visitors Visitors `toml:"visitors"`
	// Sources are the log files to follow, one [[source]] table each.
	Sources []Source `toml:"source"`
	// SiteAliases maps a host found in the lines (lowercase, without port)
	// to the site it counts for, for sources with site = "{host}".
	SiteAliases map[string]string `toml:"site_aliases"`
	// Dashboard configures the web page (logtally serve).
	Dashboard Dashboard `toml:"dashboard"`
	// Geo names the country and ASN databases.
	Geo Geo `toml:"geo"`
	// Dimensions turns on the counts by where traffic comes from.
	Dimensions Dimensions `toml:"dimensions"`
	// readsOnly: the file is loaded by a command that only reads the
	// buckets (LoadReader): it needs no [[source]].
	readsOnly bool
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
	// CoarseInterval, when not 0, writes the daily and monthly buckets
	// only this often; the batches in between go to the minute buckets
	// (see flusher.Config.CoarseInterval).
	CoarseInterval Duration `toml:"coarse_interval"`
}

// Buckets is the [buckets] table: collection names.
type Buckets struct {
	// Minute is the per-minute bucket collection.
	Minute string `toml:"minute"`
	// Daily is the per-day bucket collection.
	Daily string `toml:"daily"`
	// Monthly is the per-month bucket collection.
	Monthly string `toml:"monthly"`
	// Sites is the collection of the sites' daily totals.
	Sites string `toml:"sites"`
	// Visitors is the collection of the visitor registers.
	Visitors string `toml:"visitors"`
	// Preallocate creates, ahead of time, the next period's buckets of
	// the pages active in the current one. Default true.
	Preallocate bool `toml:"preallocate"`
	// PreallocateRate bounds preallocation, in buckets per second.
	PreallocateRate float64 `toml:"preallocate_rate"`
	// PreallocateMinHits is the hits a page needs in a period (an hour
	// for the minute buckets, a day, a month) to be hot in the next: its
	// own buckets, preallocated; the other pages' counts go to their
	// site's tails. 0 (the default): each level's break-even
	// (flusher.Config.PreallocateMinHits).
	PreallocateMinHits int `toml:"preallocate_min_hits"`
	// MinuteRetention is how long minute buckets are kept; 0 keeps them.
	MinuteRetention Duration `toml:"minute_retention"`
	// DailyRetention is how long daily buckets are kept; 0 keeps them.
	DailyRetention Duration `toml:"daily_retention"`
	// MonthlyRetention is how long monthly buckets are kept; 0 keeps them.
	MonthlyRetention Duration `toml:"monthly_retention"`
}

// Collections returns the collection names of b.
func (b Buckets) Collections() bucket.Collections {
	return bucket.Collections{Minute: b.Minute, Daily: b.Daily, Monthly: b.Monthly, Sites: b.Sites, Visitors: b.Visitors}
}

// HTTP is the [http] table.
type HTTP struct {
	// Listen is the host:port of the HTTP endpoints (/metrics, /healthz,
	// /status); empty disables them. Default DefaultHTTPListen.
	Listen string `toml:"listen"`
	// UnhealthyAfter is how long /healthz lets hits wait with nothing
	// written to MongoDB, or reading stay paused on a full buffer, before
	// it answers 503 (the daemon goes on counting into the buffer). Zero:
	// pipeline.DefaultUnhealthyAfter(flush.interval), five flush
	// intervals and at least a minute.
	UnhealthyAfter Duration `toml:"unhealthy_after"`
	// Hosts are the names the endpoints may be asked by (the Host
	// header) beside IP addresses, localhost and Listen's own name: a
	// guard against DNS rebinding, where a web page in the operator's
	// browser reads a service of the host or its network under its own
	// name. A Prometheus or load balancer reaching the endpoints by
	// another name needs it here.
	Hosts []string `toml:"hosts"`
}

// Visitors is the [visitors] table.
type Visitors struct {
	// Enabled counts unique visitors (keyed hashes of site, address and
	// user agent in HyperLogLog registers; no address or user agent is
	// stored). Default true.
	Enabled bool `toml:"enabled"`
	// SaltPeriod is "day" (default) or "month": how long one salt keys the
	// visitors, so how long a visitor counts once. "month" makes monthly
	// uniques possible and is less private: a salt, the link between a
	// register and an address, lives a month.
	SaltPeriod string `toml:"salt_period"`
	// SaltGrace is how long a salt is kept after its period ends, for late
	// lines. Default salts.DefaultGrace.
	SaltGrace Duration `toml:"salt_grace"`
	// Pages counts each page's visitors too (a sparse sketch per page and
	// period beside the site's). Default true; off saves the CPU of a
	// second sketch per line and the pages' documents.
	Pages bool `toml:"pages"`
}

// Period returns the salt period (Validate checked it).
func (v Visitors) Period() visitor.Period {
	p, _ := visitor.ParsePeriod(v.SaltPeriod)
	return p
}

// Log is the [log] table.
type Log struct {
	// Format is "text" (logfmt-style key=value) or "json". Default
	// DefaultLogFormat.
	Format string `toml:"format"`
	// Level is the least level logged: "debug", "info", "warn" or
	// "error". Default DefaultLogLevel.
	Level string `toml:"level"`
}

// Defaults of the keys no package of logtally takes with a default of its
// own: their values go to cmd/logtally (the state dir, the MongoDB client,
// the HTTP address, the logger), which config cannot import. Every other
// key's default is the constant of the package that takes the value and
// applies it to a zero value, used here by name and written nowhere else:
// pipeline.DefaultCommitInterval, pipeline.DefaultShutdownTimeout,
// tailer.DefaultMaxLineBytes, tailer.DefaultMaxOpenFiles,
// record.DefaultLeaseTTL,
// buffer.DefaultMaxSize, flusher.DefaultInterval, flusher.DefaultMaxOps,
// flusher.DefaultMaxBackoff, flusher.DefaultTimeout (mongo.timeout), the
// flusher's collection names and preallocation settings.
const (
	// DefaultMaxProcs is max_procs: one core. A sidecar stays out of the
	// web server's way, and the daemon does its work on one goroutine at a
	// time anyway (tailers hand chunks to one aggregator); on one core the
	// hand-offs cost no thread wake-ups and the lines stay in the core's
	// cache, so a catch-up takes about a tenth less CPU.
	DefaultMaxProcs = 1
	// DefaultStateDir is state_dir, the directory of buffer.db.
	DefaultStateDir = "/var/lib/logtally"
	// DefaultMongoURI is mongo.uri.
	DefaultMongoURI = "mongodb://localhost:27017"
	// DefaultDatabase is mongo.database.
	DefaultDatabase = "logtally"
	// DefaultWriteConcern is mongo.write_concern.
	DefaultWriteConcern = "majority"
	// DefaultJournal is mongo.journal.
	DefaultJournal = true
	// DefaultHTTPListen is http.listen: loopback only, so that the
	// endpoints are not reachable from other hosts unless configured.
	DefaultHTTPListen = "127.0.0.1:9464"
	// DefaultLogFormat is log.format.
	DefaultLogFormat = "text"
	// DefaultLogLevel is log.level.
	DefaultLogLevel = "info"
)

// DefaultInclude is include: one file per site in sites.d beside the main
// file. A missing directory or no match means no included file.
var DefaultInclude = []string{"sites.d/*.toml"}

// Default returns the configuration with every default set and no sources.
// Instance is the host name.
func Default() Config {
	host, _ := os.Hostname()
	return Config{
		Include:         slices.Clone(DefaultInclude),
		Instance:        host,
		StateDir:        DefaultStateDir,
		MaxProcs:        DefaultMaxProcs,
		ShutdownTimeout: Duration(pipeline.DefaultShutdownTimeout),
		MaxLineBytes:    Size(tailer.DefaultMaxLineBytes),
		MaxOpenFiles:    tailer.DefaultMaxOpenFiles,
		LeaseTTL:        Duration(record.DefaultLeaseTTL),
		Mongo: Mongo{
			URI:          DefaultMongoURI,
			Database:     DefaultDatabase,
			WriteConcern: DefaultWriteConcern,
			Journal:      DefaultJournal,
			Timeout:      Duration(flusher.DefaultTimeout),
		},
		Buffer: Buffer{
			CommitInterval: Duration(pipeline.DefaultCommitInterval),
			MaxSize:        Size(buffer.DefaultMaxSize),
		},
		Flush: Flush{
			Interval:   Duration(flusher.DefaultInterval),
			MaxOps:     flusher.DefaultMaxOps,
			MaxBackoff: Duration(flusher.DefaultMaxBackoff),
		},
		Buckets: Buckets{
			Minute:   bucket.DefaultMinuteCollection,
			Daily:    bucket.DefaultDailyCollection,
			Monthly:  bucket.DefaultMonthlyCollection,
			Sites:    bucket.DefaultSiteCollection,
			Visitors: bucket.DefaultVisitorCollection,
			// Preallocation and retention defaults: see [buckets] in
			// docs/buckets.md.
			Preallocate:     true,
			PreallocateRate: flusher.DefaultPreallocateRate,
			MinuteRetention: Duration(48 * time.Hour),
		},
		HTTP:       HTTP{Listen: DefaultHTTPListen},
		Dimensions: Dimensions{Values: dims.DefaultValues},
		Visitors:   Visitors{Enabled: true, SaltPeriod: "day", SaltGrace: Duration(salts.DefaultGrace), Pages: true},
		Dashboard:  Dashboard{Listen: DefaultDashboardListen, Top: DefaultDashboardTop},
		Log:        Log{Format: DefaultLogFormat, Level: DefaultLogLevel},
	}
}

// Load reads the file at path over the defaults, then the files its
// include globs match (see include.go), reads mongo.uri_file if set, and
// validates the result. Every problem found is in the error, one per line,
// each naming the file, the line where it can be found, and the key.
func Load(path string) (Config, error) { return load(path, false) }

// LoadReader is Load for the commands that only read the buckets (query,
// serve): a file without [[source]] is valid, so that a host that runs
// no daemon (a central dashboard) needs only [mongo], [buckets] and
// [dashboard].
func LoadReader(path string) (Config, error) { return load(path, true) }

func load(path string, readsOnly bool) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("read config: %w", err)
	}
	cfg, err := decode(path, data)
	if err != nil {
		return Config{}, err
	}
	if err := cfg.readIncludes(path); err != nil {
		return Config{}, err
	}
	cfg.readsOnly = readsOnly
	return cfg.finish(path, data)
}

// Parse is Load for a file already read, without its included files; name
// is used in messages.
func Parse(name string, data []byte) (Config, error) {
	cfg, err := decode(name, data)
	if err != nil {
		return Config{}, err
	}
	return cfg.finish(name, data)
}

// decodeError formats a TOML decoding error of the file name (holding
// data) with its line.
func decodeError(name string, data []byte, err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		msg, line := pe.Message, pe.Position.Line
		if !headerLine(data, line) && headerLine(data, line-1) && strings.Contains(msg, `got '\n'`) {
			line-- // a header cut short is reported at the next line
		}
		if headerLine(data, line) {
			// The parser's last key is in the table before this header.
			msg = "table header: " + msg
		} else if pe.LastKey != "" {
			msg = pe.LastKey + ": " + msg
		}
		return fmt.Errorf("%s:%d: %s", name, line, msg)
	}
	if m := decodeErrRe.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Errorf("%s:%s: %s: %s", name, m[1], m[2], m[3])
	}
	return fmt.Errorf("%s: %w", name, err)
}

// decode decodes the main file over the defaults; its sources are marked
// as defined in it.
func decode(name string, data []byte) (Config, error) {
	cfg := Default()
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&cfg)
	if err != nil {
		return Config{}, decodeError(name, data, err)
	}
	var errs []error
	for _, k := range md.Undecoded() {
		errs = append(errs, problem(name, data, k, &FieldError{Field: strings.Join(k, "."), Problem: "unknown key"}))
	}
	if len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}
	cfg.Files = []string{name}
	for i := range cfg.Sources {
		cfg.Sources[i].from = &origin{name: name, data: data, index: i}
	}
	return cfg, nil
}

// finish completes a decoded configuration whose main file is name: source
// names, site aliases, mongo.uri_file, dashboard.password_file, the [geo]
// files, and Validate, whose problems are reported in the file and at the
// line that defines them.
func (cfg Config) finish(name string, data []byte) (Config, error) {
	for i := range cfg.Sources {
		cfg.Sources[i].Name = cmp.Or(cfg.Sources[i].Name, cfg.Sources[i].Site)
		cfg.Sources[i].aliases = cfg.SiteAliases
	}
	if cfg.Mongo.URIFile != "" {
		b, err := os.ReadFile(cfg.Mongo.URIFile)
		if err != nil {
			return Config{}, problem(name, data, toml.Key{"mongo", "uri_file"},
				&FieldError{Field: "mongo.uri_file", Problem: fmt.Sprintf("%q: %v", cfg.Mongo.URIFile, err), Err: err})
		}
		cfg.Mongo.URI = strings.TrimSpace(string(b))
	}
	if err := cfg.readPassword(name, data); err != nil {
		return Config{}, err
	}
	if err := cfg.checkGeo(name, data); err != nil {
		return Config{}, err
	}
	if err := cfg.Validate(); err != nil {
		var fe *FieldError
		var out []error
		for _, e := range unjoin(err) {
			if errors.As(e, &fe) {
				out = append(out, cfg.locate(name, data, fe))
			} else {
				out = append(out, fmt.Errorf("%s: %w", name, e))
			}
		}
		return Config{}, errors.Join(out...)
	}
	return cfg, nil
}

// redactURI hides a password and credential options in a URI for
// messages.
func redactURI(uri string) string {
	r, _ := redact.URI(uri)
	return r
}

// Redacted returns the URI with its password and credential-bearing
// options replaced (see redact.URI), for logs.
func (m Mongo) Redacted() string { return redactURI(m.URI) }

// User returns the URI's user name, "" when it has none (never the
// password).
func (m Mongo) User() string {
	u, err := url.Parse(m.URI)
	if err != nil || u.User == nil {
		return ""
	}
	return u.User.Username()
}

// BufferFile is the buffer file's name inside state_dir.
const BufferFile = "buffer.db"

// BufferPath is the buffer file inside StateDir.
func (c *Config) BufferPath() string { return filepath.Join(c.StateDir, BufferFile) }
