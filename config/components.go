package config

import (
	"cmp"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/dashboard"
	"github.com/logtally/logtally/flusher"
	"github.com/logtally/logtally/internal/hostcheck"
	"github.com/logtally/logtally/observe"
	"github.com/logtally/logtally/pipeline"
	"github.com/logtally/logtally/query"
	"github.com/logtally/logtally/tailer"
)

// The settings of the components the commands and the daemon build, made
// from the config: each mapping is written once, here.

// Connect returns a client for m, named app in MongoDB's logs. It does not
// wait for the server: the daemon starts and buffers while MongoDB is
// down.
func (m Mongo) Connect(app string) (*mongo.Client, *mongo.Database, error) {
	wc := &writeconcern.WriteConcern{Journal: &m.Journal}
	if n := m.WriteConcern.Nodes(); n >= 0 {
		wc.W = n
	} else {
		wc.W = "majority"
	}
	opts := options.Client().ApplyURI(m.URI).
		SetAppName(app).
		SetWriteConcern(wc).
		SetServerSelectionTimeout(m.Timeout.D()).
		SetConnectTimeout(m.Timeout.D())
	client, err := mongo.Connect(opts)
	if err != nil {
		return nil, nil, fmt.Errorf("mongo %s: %w", m.Redacted(), err)
	}
	return client, client.Database(m.Database), nil
}

// Retention is how long each level of buckets is kept.
func (b Buckets) Retention() bucket.Retention {
	return bucket.Retention{Minute: b.MinuteRetention.D(), Daily: b.DailyRetention.D(), Monthly: b.MonthlyRetention.D()}
}

// ControlSocket is the daemon's control socket in StateDir, where
// `logtally replay` hands it files.
func (c *Config) ControlSocket() string {
	return filepath.Join(c.StateDir, "control.sock")
}

// Source returns the source named name, or the only source when name is
// empty.
func (c *Config) Source(name string) (Source, error) {
	if name == "" {
		if len(c.Sources) != 1 {
			return Source{}, fmt.Errorf("the config has %d sources: choose one with -source NAME", len(c.Sources))
		}
		return c.Sources[0], nil
	}
	for _, s := range c.Sources {
		if s.Name == name {
			return s, nil
		}
	}
	return Source{}, fmt.Errorf("no source named %q in the config", name)
}

// Reader returns the reader of the buckets in db: their collections and
// retention, read at clk's time.
func (c *Config) Reader(db *mongo.Database, clk clock.Clock) *query.Reader {
	return &query.Reader{
		DB:          db,
		Clock:       clk,
		Collections: c.Buckets.Collections(),
		Retention:   c.Buckets.Retention(),
		SaltPeriod:  c.Visitors.Period(),
	}
}

// DashboardConfig returns the settings of the dashboard of the buckets in
// db served on listen: it refreshes about every flush interval.
func (c *Config) DashboardConfig(db *mongo.Database, listen string, clk clock.Clock, log *slog.Logger) dashboard.Config {
	d := c.Dashboard
	return dashboard.Config{Reader: c.Reader(db, clk), Refresh: c.Flush.Interval.D(), Top: d.Top,
		User: d.User, Password: d.Password, Hosts: hostcheck.Names(listen, d.Hosts), Logger: log}
}

// Pipeline returns the pipeline's settings: its buffer, flusher (writing
// to db), sources and timings.
func (c *Config) Pipeline(db *mongo.Database, clk clock.Clock, log *slog.Logger) pipeline.Config {
	pc := pipeline.Config{
		BufferPath: c.BufferPath(),
		Buffer:     buffer.Options{LockTimeout: 2 * time.Second, MaxSize: int64(c.Buffer.MaxSize)},
		Flush: flusher.Config{
			DB:                 db,
			Collections:        c.Buckets.Collections(),
			Interval:           c.Flush.Interval.D(),
			MaxOps:             c.Flush.MaxOps,
			MaxBackoff:         c.Flush.MaxBackoff.D(),
			CoarseInterval:     c.Flush.CoarseInterval.D(),
			Timeout:            c.Mongo.Timeout.D(),
			User:               c.Mongo.User(),
			Retention:          c.Buckets.Retention(),
			Preallocate:        c.Buckets.Preallocate,
			PreallocateRate:    c.Buckets.PreallocateRate,
			PreallocateMinHits: c.Buckets.PreallocateMinHits,
		},
		CommitInterval:  c.Buffer.CommitInterval.D(),
		Instance:        c.Instance,
		LeaseTTL:        c.LeaseTTL.D(),
		ShutdownTimeout: c.ShutdownTimeout.D(),
		UnhealthyAfter:  c.HTTP.UnhealthyAfter.D(),
		Clock:           clk,
		Logger:          log,
	}
	pc.Dims = c.DimsConfig() // the daemon sets Geo
	if c.Visitors.Enabled {
		pc.Visitors = &pipeline.Visitors{Period: c.Visitors.Period(), Grace: c.Visitors.SaltGrace.D(), Pages: c.Visitors.Pages}
	}
	for _, s := range c.Sources {
		pc.Sources = append(pc.Sources, pipeline.Source{
			Name: s.Name, Paths: s.Paths, Parser: s.Parser(),
			Tailer: tailer.Config{
				MaxLineBytes: int(c.MaxLineBytes), Rotated: s.Rotated, FollowSymlinks: s.FollowSymlinks,
				MaxOpenFiles: c.MaxOpenFiles / len(c.Sources), // at least 1: Validate
			},
		})
	}
	return pc
}

// Logger returns the process's logger, text or JSON as [log] format says,
// at level (or [log] level when level is ""), every line carrying the
// instance, and the tap /status reads the recent warnings from.
func (c Config) Logger(level string, w io.Writer) (*slog.Logger, *observe.Tap, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(cmp.Or(level, c.Log.Level))); err != nil {
		return nil, nil, fmt.Errorf("-log-level %q: %w", level, err)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if c.Log.Format == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	tap := observe.NewTap(h)
	return slog.New(tap).With("instance", c.Instance), tap, nil
}
