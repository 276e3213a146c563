// Package benchutil holds what the bench commands share: the embedded
// server in its own process, the load average, the monthly
// buckets' total (the check that every hit arrived) and number grouping.
package benchutil

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/logtally/logtally/bucket"
)

// MonthlyTotal sums the views of the monthly documents in c: the page
// buckets' totals and the tails' entries (bucket.Level.Views).
func MonthlyTotal(c *mongo.Collection) (int64, error) {
	ctx := context.Background()
	cur, err := c.Find(ctx, bson.D{})
	if err != nil {
		return 0, err
	}
	defer cur.Close(ctx)
	var n int64
	for cur.Next(ctx) {
		v, err := bucket.Monthly.Views(cur.Current)
		if err != nil {
			return 0, err
		}
		n += v
	}
	return n, cur.Err()
}

// StartServer builds internal/cmd/demo into tmp and runs it with -serve
// in another process (the embedded MongoDB-wire server, so that its CPU is
// not the bench's); it returns a stop func and the URI the server prints.
// Run it from the module's root.
func StartServer(tmp string) (stop func(), uri string, err error) {
	demo := filepath.Join(tmp, "demo")
	if out, err := exec.Command("go", "build", "-o", demo, "./internal/cmd/demo").CombinedOutput(); err != nil {
		return nil, "", fmt.Errorf("build server: %v\n%s", err, out)
	}
	srv := exec.Command(demo, "-serve")
	out, err := srv.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	srv.Stderr = os.Stderr
	if err := srv.Start(); err != nil {
		return nil, "", err
	}
	stop = func() { srv.Process.Signal(syscall.SIGTERM); srv.Wait() }
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		stop()
		return nil, "", fmt.Errorf("server did not print its URI: %w", err)
	}
	return stop, strings.TrimSpace(line), nil
}

// Loadavg returns /proc/loadavg's first three fields ("unknown" where
// there is none): other work on the machine slows wall times down.
func Loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
