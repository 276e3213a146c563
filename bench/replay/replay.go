package main

// One replay into a fresh state dir and database, and its figures.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/internal/benchutil"
	"github.com/logtally/logtally/internal/testenv/testconfig"
)

// dbFigures are a replay's database figures: its summary's database line
// and hits, and the hits found in the monthly buckets.
type dbFigures struct {
	ops, updates, inserts, finds, buckets int64
	hits, inDB                            int64
}

// replayOnce runs one `logtally replay` of files into a new database with
// a new state dir, reads its figures and the monthly buckets' total, and
// drops the database. A replay whose summary lacks the figures, or whose
// summary or buckets do not hold the want hits the files have (every line
// is a hit), fails (the sample's err).
func (b *bench) replayOnce(files []string, want int64) (sample, dbFigures) {
	s, f, err := b.replayFigures(files, want)
	if err != nil && s.err == nil {
		s.err = err
	}
	return s, f
}

// replayFigures is replayOnce returning its error apart.
func (b *bench) replayFigures(files []string, want int64) (sample, dbFigures, error) {
	b.n++
	dir := filepath.Join(b.tmp, fmt.Sprintf("replay-%d", b.n))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return sample{}, dbFigures{}, err
	}
	defer os.RemoveAll(dir)
	dbName := fmt.Sprintf("replaybench_%d_%d", time.Now().UnixNano(), b.n)
	conf := filepath.Join(dir, "logtally.toml")
	// The source's paths match none of the replayed files: they are
	// replayed with -site and -format.
	c := config.Default()
	c.StateDir, c.Instance, c.ShutdownTimeout = filepath.Join(dir, "state"), "bench", config.Duration(5*time.Minute)
	c.Mongo.URI, c.Mongo.Database, c.Mongo.Timeout = b.uri, dbName, config.Duration(time.Minute)
	c.Flush.Interval, c.Flush.MaxOps = config.Duration(time.Second), b.o.maxOps
	c.Buckets.MinuteRetention = 0 // the generated lines are older than the default 48h
	c.HTTP.Listen = ""
	c.Sources = []config.Source{{Site: site, Paths: []string{filepath.Join(dir, "live", "live.log")}, Format: format}}
	if err := testconfig.WriteFile(conf, c); err != nil {
		return sample{}, dbFigures{}, err
	}
	defer b.client.Database(dbName).Drop(context.Background())
	args := []string{"replay", "-config", conf, "-site", site, "-format", format}
	if b.o.jobs > 0 && len(files) > 1 {
		args = append(args, "-jobs", strconv.Itoa(b.o.jobs))
	}
	s := b.measureWatching(files, nil, b.bin, append(args, files...)...)
	if s.err != nil {
		return s, dbFigures{}, s.err
	}
	var f dbFigures
	r, err := benchutil.ParseReplaySummary(s.stdout)
	if err != nil {
		return s, f, err
	}
	f.ops, f.updates, f.inserts, f.finds, f.buckets, f.hits = r.Ops, r.Updates, r.Inserts, r.Finds, r.BucketWrites, r.Hits
	if f.inDB, err = benchutil.MonthlyTotal(b.client.Database(dbName).Collection(monthlyCollection)); err != nil {
		return s, f, fmt.Errorf("reading the monthly buckets: %v", err)
	}
	if f.inDB != want || f.hits != want {
		return s, f, fmt.Errorf("%d hits in the monthly buckets, the summary says %d, the files have %d", f.inDB, f.hits, want)
	}
	return s, f, nil
}
