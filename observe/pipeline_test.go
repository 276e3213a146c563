package observe

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/flusher"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/pipeline"
	"github.com/logtally/logtally/tailer"
)

// The real pipeline is a Source.
var _ Source = (*pipeline.Pipeline)(nil)

// A real pipeline against the test server, through the Server: the
// counters, the file lag, the acknowledged batch and the health are the
// pipeline's own.
func TestRealPipeline(t *testing.T) {
	dir := t.TempDir()
	db := mongotest.Start(t).Database(t)
	logPath := filepath.Join(dir, "access.log")
	var b []byte
	for i := range 30 {
		b = fmt.Appendf(b, "10.0.0.1 - - [01/Feb/2026:10:00:%02d +0000] \"GET /p%d HTTP/1.1\" 200 10 \"-\" \"t\"\n", i, i%3)
	}
	b = append(b, "garbage\n"...)
	if err := os.WriteFile(logPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	tap := NewTap(slog.DiscardHandler)
	p, err := pipeline.New(pipeline.Config{
		BufferPath:      filepath.Join(dir, "state", "buffer.db"),
		Buffer:          buffer.Options{LockTimeout: time.Second},
		Flush:           flusher.Config{DB: db, Interval: 30 * time.Millisecond, MaxOps: 32, Timeout: 5 * time.Second, MaxBackoff: 100 * time.Millisecond},
		CommitInterval:  10 * time.Millisecond,
		ShutdownTimeout: 10 * time.Second,
		Instance:        "web-1",
		Sources: []pipeline.Source{{
			Name: "web", Paths: []string{logPath},
			Parser: parser.Config{Format: "combined", Site: "example.com"},
			Tailer: tailer.Config{PollInterval: 10 * time.Millisecond, RescanInterval: 50 * time.Millisecond},
		}},
		Logger: slog.New(tap),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	defer func() {
		cancel()
		<-done
		p.Close(context.Background())
	}()

	s, err := New(Config{Listen: "127.0.0.1:0", Source: p, Version: "test", MongoURI: "mongodb://u:s3cret@db/", Tap: tap})
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	if !testenv.Until(60*time.Second, func() bool {
		st := p.Stats()
		return st.Flusher.Hits == 30 && st.PendingHits == 0
	}) {
		t.Fatalf("timed out waiting for the 30 hits to be flushed: %+v", p.Stats())
	}

	if code, body, _ := get(t, h, "/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("GET /healthz: %d %q", code, body)
	}
	_, metrics, _ := get(t, h, "/metrics")
	for _, want := range []string{
		`logtally_lines_total{source="web"} 31` + "\n",
		`logtally_hits_total{site="example.com"} 30` + "\n",
		`logtally_malformed_lines_total{reason="fields"} 1` + "\n",
		"logtally_flushed_hits_total 30\n",
		"logtally_buffer_pending_hits 0\n",
		`logtally_file_lag_bytes{source="web"} 0` + "\n",
		`logtally_files_followed{source="web"} 1` + "\n",
		"logtally_last_acked_batch_sealed_timestamp_seconds ",
		`logtally_mongo_operations_total{op="bulk_write"} `,
		"logtally_last_flush_timestamp_seconds ",
		`logtally_flush_duration_seconds_bucket{le="+Inf"} `,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("no %q in /metrics", want)
		}
	}
	if strings.Contains(metrics, `logtally_mongo_operations_total{op="bulk_write"} 0`) {
		t.Error("no bulk write counted")
	}

	code, body, _ := get(t, h, "/status")
	if code != 200 {
		t.Fatalf("GET /status: %d %s", code, body)
	}
	var rep StatusReport
	if err := json.Unmarshal([]byte(body), &rep); err != nil {
		t.Fatal(err)
	}
	// The writer number is the buffer's, claimed before its first batch.
	if rep.Instance != "web-1" || rep.BufferID == "" || rep.Writer == 0 || rep.Writer != p.Buffer().Number() || rep.Health != "ok" || rep.LastAcked == nil || rep.InFlight != nil ||
		rep.LastCommit.IsZero() || rep.Mongo != "mongodb://u:xxxxx@db/" {
		t.Errorf("status:\n%s", body)
	}
	if len(rep.Sources) != 1 || len(rep.Sources[0].Files) != 1 {
		t.Fatalf("sources:\n%s", body)
	}
	f := rep.Sources[0].Files[0]
	if f.Path != logPath || f.Offset != int64(len(b)) || f.Size != int64(len(b)) || f.Lag != 0 || !f.Checkpoint || !f.Followed {
		t.Errorf("file: %+v (size %d)", f, len(b))
	}
	if !slices.ContainsFunc(rep.Problems, func(p Problem) bool {
		return p.Component == "aggregator" && p.Message == "malformed line skipped" && p.Attrs["reason"] == "malformed: bad fields"
	}) {
		t.Errorf("problems: %+v", rep.Problems)
	}

	// Lines written and not yet read show as lag; a file renamed away is
	// still found (among path.*), and a new file is followed from 0.
	if err := os.Rename(logPath, logPath+".1"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(logPath, []byte("10.0.0.1 - - [01/Feb/2026:10:01:00 +0000] \"GET /new HTTP/1.1\" 200 10 \"-\" \"t\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var st pipeline.Status
	if !testenv.Until(60*time.Second, func() bool {
		var err error
		if st, err = p.Status(); err != nil {
			t.Fatal(err)
		}
		return p.Stats().Flusher.Hits == 31 && len(st.Sources[0].Files) == 2 && st.Sources[0].Files[1].Checkpoint
	}) {
		t.Fatalf("timed out waiting for the rotation: %+v", st)
	}
	if f := st.Sources[0].Files[1]; f.Path != logPath+".1" || f.Offset != int64(len(b)) || f.Lag != 0 {
		t.Errorf("rotated file: %+v", f)
	}
	if testing.Verbose() {
		_, body, _ := get(t, h, "/status")
		t.Logf("GET /status:\n%s", body)
	}
}

// ReadStatus shows where a batch in flight resumes, read from the
// flusher's resume point (a pass byte, then the next key).
func TestReadStatusResume(t *testing.T) {
	buf := testenv.OpenBuffer(t, filepath.Join(t.TempDir(), "buffer.db"), buffer.Options{})
	sec := time.Date(2026, 2, 1, 10, 0, 5, 0, time.UTC).Unix()
	key := buffer.AppendKey(nil, []byte("example.com"), []byte("/p"), sec)
	if err := buf.Commit(buffer.Commit{Counts: buffer.CountsOf(map[string]measure.Vector{string(key): measure.OfViews(3)})}); err != nil {
		t.Fatal(err)
	}
	batch, err := buf.Seal(buffer.Seal{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		progress []byte
		want     string
	}{
		{nil, "start"},
		{[]byte{0}, "minute pass, from its first bucket"},
		{append([]byte{1}, key...), `daily pass, from site "example.com" page "/p" at 2026-02-01T10:00:05Z`},
		{append([]byte{2}, key...), `monthly pass, from site "example.com" page "/p" at 2026-02-01T10:00:05Z`},
		{[]byte{3}, "sites pass (the sites' daily totals)"},
		{[]byte{4}, "every pass written, acknowledgement pending"},
		{[]byte{9, 1}, "0x0901 (unknown: written again from the start)"},
	} {
		if tc.progress != nil {
			if err := buf.SaveProgress(batch.ID, tc.progress); err != nil {
				t.Fatal(err)
			}
		}
		st, err := pipeline.ReadStatus(buf)
		if err != nil {
			t.Fatal(err)
		}
		if st.InFlight == nil || st.InFlight.ID != batch.ID || st.InFlight.Hits != 3 || st.InFlight.Resume != tc.want {
			t.Errorf("progress %x: in flight %+v, want resume %q", tc.progress, st.InFlight, tc.want)
		}
		if st.PendingHits != 3 || st.PendingKeys != 1 || st.LastAcked != nil || st.Sources == nil || len(st.Sources) != 0 {
			t.Errorf("status %+v", st)
		}
	}

	// A minute-only batch is written once its minute pass is.
	if err := buf.Ack(batch.ID); err != nil {
		t.Fatal(err)
	}
	if err := buf.Commit(buffer.Commit{Counts: buffer.CountsOf(map[string]measure.Vector{string(key): measure.OfViews(2)})}); err != nil {
		t.Fatal(err)
	}
	if batch, err = buf.Seal(buffer.Seal{MinuteOnly: true}); err != nil || batch == nil || !batch.MinuteOnly {
		t.Fatalf("Seal minute-only: %+v, %v", batch, err)
	}
	for _, tc := range []struct {
		progress []byte
		want     string
	}{
		{[]byte{0}, "minute pass, from its first bucket"},
		{[]byte{1}, "every pass written, acknowledgement pending"},
	} {
		if err := buf.SaveProgress(batch.ID, tc.progress); err != nil {
			t.Fatal(err)
		}
		st, err := pipeline.ReadStatus(buf)
		if err != nil {
			t.Fatal(err)
		}
		if st.InFlight == nil || st.InFlight.Resume != tc.want {
			t.Errorf("minute-only batch, progress %x: in flight %+v, want resume %q", tc.progress, st.InFlight, tc.want)
		}
	}
}
