package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/internal/benchutil"
	"github.com/logtally/logtally/internal/testenv/testconfig"
)

// Running `logtally replay` of the log into the server, and the
// figures of its summary.

// replayed is a replay's summary figures and wall time.
type replayed struct {
	ops, updates, inserts, finds, buckets, roundTrips, plans int64
	hits                                                     int64
	// From the replay's last stats log line: the batches written, and
	// the inserts that met an existing document (the summary's inserts
	// count them, the stats line's do not).
	batches, insertDups int64
	wall                time.Duration
	out                 string
}

// statsRe is the flusher's stats log line, the last of which replay
// reads.
var statsRe = regexp.MustCompile(`msg=stats .*\bbatches=(\d+) .*\binserts=(\d+) `)

// replay runs `logtally replay` of the log into dbName with a new state
// dir and returns its summary's figures.
func replay(ctx context.Context, o settings, bin, tmp, uri, dbName, logPath string, lf logFigures) (replayed, error) {
	var r replayed
	dir := filepath.Join(tmp, "replay")
	if err := os.MkdirAll(filepath.Join(dir, "state"), 0o700); err != nil {
		return r, err
	}
	c := config.Default()
	c.Visitors.Enabled = o.visitors
	if o.visitors {
		// The salts are kept until a week from now: the grace runs from
		// the end of the log's first day.
		firstEnd := time.Unix(lf.days[0], 0).Add(24 * time.Hour)
		grace := time.Since(firstEnd) + 7*24*time.Hour
		grace = grace.Truncate(time.Hour) + time.Hour
		if err := seedSalts(filepath.Join(dir, "state", "buffer.db"), lf.days, firstEnd.Add(grace)); err != nil {
			return r, fmt.Errorf("seed the salts: %w", err)
		}
		c.Visitors.SaltGrace = config.Duration(grace)
	}
	conf := filepath.Join(dir, "logtally.toml")
	// The source's path matches no file: the log is replayed with -site
	// and -format, its page rules the defaults.
	c.StateDir, c.Instance, c.ShutdownTimeout = filepath.Join(dir, "state"), "bench", config.Duration(5*time.Minute)
	c.Mongo.URI, c.Mongo.Database, c.Mongo.Timeout = uri, dbName, config.Duration(2*time.Minute)
	c.Flush.Interval, c.Flush.MaxOps = config.Duration(time.Second), o.maxOps
	c.Buckets.MinuteRetention = 0 // keep the minute buckets (the log is older than the default 48h)
	c.HTTP.Listen = ""
	c.Dimensions.Enabled = o.dimensions
	c.Geo.CountryDB, c.Geo.ASNDB = o.countryDB, o.asnDB
	c.Sources = []config.Source{{Site: o.site, Paths: []string{filepath.Join(dir, "live", "live.log")}, Format: o.format}}
	if err := testconfig.WriteFile(conf, c); err != nil {
		return r, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "replay", "-config", conf, "-log-level", "info", "-site", o.site, "-format", o.format, logPath)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r.wall = time.Since(start)
	r.out = stdout.String()
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("killed after -timeout %s", o.timeout)
		}
		return r, fmt.Errorf("logtally replay: %v\n%s%s", err, tail(stdout.String(), 20), tail(stderr.String(), 20))
	}
	f, err := benchutil.ParseReplaySummary(r.out)
	if err != nil {
		return r, err
	}
	r.ops, r.updates, r.inserts, r.finds, r.buckets, r.roundTrips, r.plans, r.hits = f.Ops, f.Updates, f.Inserts, f.Finds, f.BucketWrites, f.RoundTrips, f.Plans, f.Hits
	if all := statsRe.FindAllStringSubmatch(stderr.String(), -1); len(all) > 0 {
		last := all[len(all)-1]
		r.batches, _ = strconv.ParseInt(last[1], 10, 64)
		inserts, _ := strconv.ParseInt(last[2], 10, 64)
		r.insertDups = r.inserts - inserts
	} else {
		r.batches, r.insertDups = -1, -1
	}
	return r, nil
}
