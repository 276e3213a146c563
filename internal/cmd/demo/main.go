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
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/logtally/logtally/internal/mongotest"
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
		if got, err = sum(ctx, db.Collection("monthly"), "total"); err != nil {
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

func sum(ctx context.Context, c *mongo.Collection, field string) (int64, error) {
	cur, err := c.Find(ctx, bson.D{})
	if err != nil {
		return 0, err
	}
	var docs []bson.M
	if err := cur.All(ctx, &docs); err != nil {
		return 0, err
	}
	var n int64
	for _, d := range docs {
		v, _ := d[field].(int64)
		n += v
	}
	return n, nil
}

func show(ctx context.Context, db *mongo.Database) error {
	for _, name := range []string{"minutes", "daily", "monthly"} {
		n, err := db.Collection(name).CountDocuments(ctx, bson.D{})
		if err != nil {
			return err
		}
		fmt.Printf("collection %-8s %3d buckets\n", name, n)
	}
	cur, err := db.Collection("monthly").Find(ctx, bson.D{})
	if err != nil {
		return err
	}
	var months []bson.M
	if err := cur.All(ctx, &months); err != nil {
		return err
	}
	sort.Slice(months, func(i, j int) bool { return months[i]["total"].(int64) > months[j]["total"].(int64) })
	fmt.Println("\nmonthly buckets (page, total, non-zero days):")
	for _, m := range months {
		meta := asM(m["metadata"])
		fmt.Printf("  %-40s %5d  %s\n", meta["page"], m["total"], nonZero(asM(m["daily"])))
	}
	var day bson.M
	if err := db.Collection("daily").FindOne(ctx, bson.D{}, options.FindOne().SetSort(bson.D{{Key: "daily", Value: -1}})).Decode(&day); err != nil {
		return err
	}
	fmt.Printf("\nbusiest daily bucket %s: daily=%d hourly(non-zero)=%s\n", day["_id"], day["daily"], nonZero(asM(day["hourly"])))
	var minute bson.M
	if err := db.Collection("minutes").FindOne(ctx, bson.D{}, options.FindOne().SetSort(bson.D{{Key: "totalViews", Value: -1}})).Decode(&minute); err != nil {
		return err
	}
	fmt.Printf("busiest minute bucket %s: totalViews=%d seconds(non-zero)=%s applied=%v\n",
		minute["_id"], minute["totalViews"], nonZero(asM(minute["seconds"])), minute["applied"])
	fmt.Printf("  its measures (non-zero): %s\n", nonZeroNamed(asM(minute["measures"])))
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
