package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// The window issue 16 names: two hosts (two state dirs and instances)
// replaying the same archives at the same moment. Each stream is claimed in
// MongoDB's ledger before it is read: one replay counts it, the other waits
// and finds it counted (or resumes where the other left it). Every bucket
// is exact, and no claim is left.
func TestReplaySameArchivesOnTwoHostsAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	e := newReplayEnv(t)
	var files []string
	// The files share their day's and month's buckets: the two replays,
	// each counting a file at the same moment, update the same documents
	// (through the test server's proxy, one write at a time, as MongoDB
	// applies each update whole).
	for i := range 3 {
		files = append(files, e.archive(fmt.Sprintf("access.log.%d.gz", i+1), linesAt(i*6000, 6000, 10*time.Millisecond)))
	}
	confs := []string{e.conf, e.config("state2", "web-2")}
	type result struct {
		out bytes.Buffer
		err error
	}
	results := make([]*result, len(confs))
	// (Each is killed after 90 s: a replay waiting for ever fails the
	// test instead of hanging it.)
	start := make(chan struct{})
	done := make(chan struct{}, len(confs))
	for i, conf := range confs {
		r := &result{}
		results[i] = r
		// One file at a time, in opposite orders: each replay meets a
		// file the other holds while it holds one the other wants.
		order := slices.Clone(files)
		if i == 1 {
			slices.Reverse(order)
		}
		cmd := command(append([]string{"replay", "-config", conf, "-log-level", "info", "-jobs", "1"}, order...)...)
		cmd.Stdout, cmd.Stderr = &r.out, &r.out
		go func() {
			defer func() { done <- struct{}{} }()
			<-start
			if r.err = cmd.Start(); r.err != nil {
				return
			}
			timer := time.AfterFunc(90*time.Second, func() { cmd.Process.Kill() })
			defer timer.Stop()
			r.err = cmd.Wait()
		}()
	}
	close(start)
	for range confs {
		<-done
	}
	waited := false
	for i, r := range results {
		t.Logf("replay %d: %v\n%s", i, r.err, r.out.String())
		if r.err != nil {
			t.Errorf("replay %d: %v", i, r.err)
		}
		waited = waited || strings.Contains(r.out.String(), "being replayed by another logtally")
	}
	if !waited {
		t.Log("the two replays did not overlap on any file this time")
	}
	e.check("two replays of the same archives at once", filepath.Join(e.truth, "*"))
	n, err := e.db.Collection("ledger").CountDocuments(t.Context(), bson.D{{Key: "holder", Value: bson.D{{Key: "$exists", Value: true}}}})
	if err != nil || n != 0 {
		t.Errorf("%d claims left in the ledger (%v)", n, err)
	}
}
