// Command demo runs logtally's main job on the sample logs in
// testdata/sample against an embedded MongoDB-compatible server (FerretDB,
// SQLite backend, temp dir), so it works on a machine without MongoDB, and
// prints the buckets it wrote. It builds and runs the real logtally binary;
// logtally itself does not link FerretDB.
//
// With -serve it only runs the embedded server and prints its URI, for
// benchmarks that want the database in another process.
package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/internal/benchutil"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/parser"
)

func main() {
	serve := flag.Bool("serve", false, "only run the embedded server and print its URI until interrupted")
	logs := flag.String("logs", "testdata/sample/access.log", "log files to count (glob)")
	site := flag.String("site", "semicomplete.com", "site name for the sample log")
	flag.Parse()
	if err := run(*serve, *logs, *site); err != nil {
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		os.Exit(1)
	}
}

func run(serve bool, logs, site string) error {
	tmp, err := os.MkdirTemp("", "logtally-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	if err := os.Mkdir(filepath.Join(tmp, "db"), 0o700); err != nil {
		return err
	}
	uri, stop, err := mongotest.Embedded(ctx, filepath.Join(tmp, "db"), quiet)
	if err != nil {
		return fmt.Errorf("start embedded server: %w", err)
	}
	defer stop()
	if serve {
		fmt.Println(uri)
		<-ctx.Done()
		return nil
	}

	files, err := filepath.Glob(logs)
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no log files match %q (run from the repository root)", logs)
	}
	want, err := countHits(files, site)
	if err != nil {
		return err
	}
	fmt.Printf("embedded server: %s\nlogs: %s (%d hits)\n", uri, strings.Join(files, ", "), want)

	bin := filepath.Join(tmp, "logtally")
	build := exec.Command("go", "build", "-o", bin, "./cmd/logtally")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build logtally: %w", err)
	}
	abs, _ := filepath.Abs(logs)
	conf := filepath.Join(tmp, "logtally.toml")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(`state_dir = %q
shutdown_timeout = "30s"
[mongo]
uri = %q
database = "demo"
[buffer]
commit_interval = "200ms"
[flush]
interval = "1s"
max_ops = 32
[buckets]
# The sample log is from 2015: keep its minute buckets (the default 48h
# would expire them at once).
minute_retention = "0"
[[source]]
site = %q
paths = [%q]
format = "combined"
`, filepath.Join(tmp, "state"), uri, site, abs)), 0o600); err != nil {
		return err
	}
	daemon := exec.Command(bin, "run", "-config", conf, "-log-level", "warn")
	daemon.Stdout, daemon.Stderr = os.Stdout, os.Stderr
	if err := daemon.Start(); err != nil {
		return err
	}
	fmt.Printf("running: %s\n", strings.Join(daemon.Args, " "))

	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		return err
	}
	defer client.Disconnect(context.Background())
	db := client.Database("demo")
	start := time.Now()
	var got int64
	for got != want {
		if ctx.Err() != nil || time.Since(start) > 3*time.Minute {
			daemon.Process.Kill()
			return fmt.Errorf("counted %d of %d hits before giving up", got, want)
		}
		time.Sleep(500 * time.Millisecond)
		if got, err = benchutil.MonthlyTotal(db.Collection("monthly")); err != nil {
			got = -1
		}
	}
	fmt.Printf("all %d hits in MongoDB after %.1fs; stopping logtally with SIGTERM\n", got, time.Since(start).Seconds())
	daemon.Process.Signal(syscall.SIGTERM)
	if err := daemon.Wait(); err != nil {
		return fmt.Errorf("logtally exited: %w", err)
	}
	return show(ctx, db)
}

// countHits parses the files the way logtally does, to know when it is done.
func countHits(files []string, site string) (int64, error) {
	p, err := parser.New(parser.Config{Format: "combined", Site: site})
	if err != nil {
		return 0, err
	}
	var n int64
	var h parser.Hit
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return 0, err
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if p.Parse(sc.Bytes(), &h) == parser.OK {
				n++
			}
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// pageOf returns a document's page field (a page, or a tail's or plan's
// marker).
func pageOf(l bucket.Level, d bson.M) string {
	if l == bucket.Minute {
		p, _ := d["page"].(string)
		return p
	}
	p, _ := asM(d["metadata"])["page"].(string)
	return p
}

func show(ctx context.Context, db *mongo.Database) error {
	for _, l := range []bucket.Level{bucket.Minute, bucket.Daily, bucket.Monthly} {
		name := bucket.Collections{}.Name(l)
		var docs []bson.M
		cur, err := db.Collection(name).Find(ctx, bson.D{})
		if err != nil {
			return err
		}
		if err := cur.All(ctx, &docs); err != nil {
			return err
		}
		var pages, tails, plans int
		for _, d := range docs {
			switch p := pageOf(l, d); {
			case p == bucket.PlanPage:
				plans++
			case bucket.IsMarker(p):
				tails++
			default:
				pages++
			}
		}
		fmt.Printf("collection %-8s %3d buckets of hot pages, %3d tails (the cold pages' counts), %3d plans\n", name, pages, tails, plans)
	}
	cur, err := db.Collection("monthly").Find(ctx, bson.D{})
	if err != nil {
		return err
	}
	var months []bson.M
	if err := cur.All(ctx, &months); err != nil {
		return err
	}
	months = slices.DeleteFunc(months, func(m bson.M) bool { return bucket.IsMarker(pageOf(bucket.Monthly, m)) })
	sort.Slice(months, func(i, j int) bool { return months[i]["total"].(int64) > months[j]["total"].(int64) })
	fmt.Println("\nmonthly buckets of the hot pages (page, total, non-zero days):")
	for _, m := range months {
		fmt.Printf("  %-40s %5d  %s\n", pageOf(bucket.Monthly, m), m["total"], nonZero(asM(m["daily"])))
	}
	// The cold pages: their entries in the monthly tails, views per day.
	type cold struct {
		page  string
		views int64
		days  map[int]int64
	}
	byPage := map[string]*cold{}
	cur, err = db.Collection("monthly").Find(ctx, bson.D{{Key: "metadata.page", Value: bson.D{{Key: "$regex", Value: "^~[0-9]"}}}})
	if err != nil {
		return err
	}
	for cur.Next(ctx) {
		err := bucket.Monthly.DecodeTail(cur.Current, func(c *bucket.TailCell) {
			e := byPage[c.Page]
			if e == nil {
				e = &cold{page: c.Page, days: map[int]int64{}}
				byPage[c.Page] = e
			}
			v := int64(c.V[measure.Views])
			e.views += v
			e.days[time.Unix(c.From, 0).UTC().Day()] += v
		})
		if err != nil {
			return err
		}
	}
	if err := cur.Err(); err != nil {
		return err
	}
	colds := slices.SortedFunc(maps.Values(byPage), func(a, b *cold) int { return cmp.Or(cmp.Compare(b.views, a.views), strings.Compare(a.page, b.page)) })
	fmt.Printf("\ncold pages, in the monthly tails (%d pages; page, views, views per day), the first 10:\n", len(colds))
	for _, c := range colds[:min(10, len(colds))] {
		days := slices.Sorted(maps.Keys(c.days))
		parts := make([]string, len(days))
		for i, d := range days {
			parts[i] = fmt.Sprintf("%d:%d", d, c.days[d])
		}
		fmt.Printf("  %-40s %5d  {%s}\n", c.page, c.views, strings.Join(parts, " "))
	}
	// A hot page's daily and minute buckets, where a page reached the
	// level's break-even (bucket.Level.BreakEven: 331 hits a day, 1,257
	// an hour); else the busiest tail of the level.
	var day bson.M
	err = db.Collection("daily").FindOne(ctx, bson.D{{Key: "daily", Value: bson.D{{Key: "$exists", Value: true}}}}, options.FindOne().SetSort(bson.D{{Key: "daily", Value: -1}})).Decode(&day)
	switch {
	case err == nil:
		fmt.Printf("\nbusiest daily bucket %s: daily=%d hourly(non-zero)=%s\n", day["_id"], day["daily"], nonZero(asM(day["hourly"])))
	case errors.Is(err, mongo.ErrNoDocuments):
		fmt.Printf("\nno daily bucket of a hot page: no page reached %d hits in a day (the daily tails hold them by hour)\n", bucket.Daily.BreakEven())
	default:
		return err
	}
	var minute bson.M
	err = db.Collection("minutes").FindOne(ctx, bson.D{{Key: "seconds", Value: bson.D{{Key: "$exists", Value: true}}}}, options.FindOne().SetSort(bson.D{{Key: "totalViews", Value: -1}})).Decode(&minute)
	switch {
	case err == nil:
		fmt.Printf("busiest minute bucket %s: totalViews=%d seconds(non-zero)=%s applied=%v\n",
			minute["_id"], minute["totalViews"], nonZero(asM(minute["seconds"])), minute["applied"])
		fmt.Printf("  its measures (non-zero): %s\n", nonZeroNamed(asM(minute["measures"])))
	case errors.Is(err, mongo.ErrNoDocuments):
		fmt.Printf("no minute bucket of a hot page: no page reached %d hits in an hour (the minute tails hold them by minute)\n", bucket.Minute.BreakEven())
	default:
		return err
	}
	cur, err = db.Collection("sites").Find(ctx, bson.D{})
	if err != nil {
		return err
	}
	var sites []bson.M
	if err := cur.All(ctx, &sites); err != nil {
		return err
	}
	fmt.Println("\nsites (one document per site and day: views and measures; people = views - bot_*):")
	for _, d := range sites {
		fmt.Printf("  %s: views=%d %s\n", d["_id"], d["views"], nonZeroNamed(asM(d["measures"])))
	}
	return nil
}

// nonZeroNamed lists the non-zero integer fields of m by name.
func nonZeroNamed(m bson.M) string {
	var parts []string
	for k, v := range m {
		var n int64
		switch v := v.(type) {
		case int32:
			n = int64(v)
		case int64:
			n = v
		}
		if n != 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", k, n))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

func nonZero(m bson.M) string {
	keys := make([]int, 0, len(m))
	for k, v := range m {
		if n, ok := v.(int64); ok && n != 0 {
			i, _ := strconv.Atoi(k)
			keys = append(keys, i)
		}
	}
	sort.Ints(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d:%d", k, m[strconv.Itoa(k)])
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// asM returns an embedded document as a map (the driver decodes embedded
// documents of a bson.M as bson.D).
func asM(v any) bson.M {
	switch v := v.(type) {
	case bson.M:
		return v
	case bson.D:
		m := bson.M{}
		for _, e := range v {
			m[e.Key] = e.Value
		}
		return m
	}
	return bson.M{}
}
