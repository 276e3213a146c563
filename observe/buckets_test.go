package observe

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/flusher"
	"github.com/logtally/logtally/pipeline"
)

// The bucket lifecycle (expiry modes, preallocation counters) is in
// /metrics and /status.
func TestBucketLifecycleShown(t *testing.T) {
	f := sampleFake()
	f.stats.Flusher.Expiry = []flusher.ExpiryStats{
		{Level: "minute", Collection: "minutes", Retention: 48 * time.Hour, Mode: flusher.ExpiryDeleteMany, Runs: 3, Deleted: 42},
		{Level: "daily", Collection: "daily", Mode: flusher.ExpiryOff},
		{Level: "monthly", Collection: "monthly", Mode: flusher.ExpiryOff},
		{Level: "daily", Collection: "sites", Retention: 72 * time.Hour, Mode: flusher.ExpiryTTL},
		{Level: "daily", Collection: "visitors", Retention: 72 * time.Hour, Mode: flusher.ExpiryDeleteMany, Deleted: 7},
		{Level: "monthly", Collection: "visitors", Mode: flusher.ExpiryOff},
	}
	f.stats.Flusher.LateBuckets = 2
	f.stats.Flusher.Prealloc = flusher.PreallocStats{Created: 120, Existing: 5, Dropped: 1, Failures: 4, Tracked: 9}
	f.status.Buckets = &pipeline.BucketsStatus{
		Expiry:      []pipeline.ExpiryStatus{{Level: "minute", Collection: "minutes", Retention: "48h0m0s", Mode: "deletemany", Deleted: 42}},
		Preallocate: true, Preallocation: f.stats.Flusher.Prealloc, LateBuckets: 2,
	}
	s := newServer(t, f, Config{Version: "v"})
	_, body, _ := get(t, s.Handler(), "/metrics")
	for _, want := range []string{
		`logtally_bucket_expiry_mode{collection="minutes",level="minute",mode="deletemany"} 1`,
		`logtally_bucket_expiry_mode{collection="daily",level="daily",mode="off"} 1`,
		`logtally_bucket_expiry_mode{collection="sites",level="daily",mode="ttl"} 1`,
		`logtally_bucket_expiry_mode{collection="visitors",level="daily",mode="deletemany"} 1`,
		`logtally_bucket_expiry_mode{collection="visitors",level="monthly",mode="off"} 1`,
		`logtally_expired_buckets_deleted_total{collection="minutes",level="minute"} 42`,
		`logtally_expired_buckets_deleted_total{collection="visitors",level="daily"} 7`,
		`logtally_late_buckets_created_total 2`,
		`logtally_preallocated_buckets_total{result="created"} 120`,
		`logtally_preallocated_buckets_total{result="existing"} 5`,
		`logtally_preallocated_buckets_total{result="dropped"} 1`,
		`logtally_preallocation_failures_total 4`,
		`logtally_preallocation_tracked_pages 9`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("no %q in /metrics", want)
		}
	}
	_, body, _ = get(t, s.Handler(), "/status")
	var rep StatusReport
	if err := json.Unmarshal([]byte(body), &rep); err != nil {
		t.Fatal(err)
	}
	if b := rep.Buckets; b == nil || len(b.Expiry) != 1 || b.Expiry[0].Mode != "deletemany" || b.Preallocation.Created != 120 || !b.Preallocate {
		t.Errorf("buckets in /status: %+v", rep.Buckets)
	}
	for _, k := range []string{`"mode": "deletemany"`, `"retention": "48h0m0s"`, `"created": 120`, `"late_buckets": 2`} {
		if !strings.Contains(body, k) {
			t.Errorf("no %s in\n%s", k, body)
		}
	}
}
