package observe

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

func TestTap(t *testing.T) {
	var out bytes.Buffer
	tap := NewTap(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelError}))
	log := slog.New(tap).With("instance", "web-1")
	flusher := log.With("component", "flusher")
	flusher.Warn("flush failed", "attempt", 1, "err", "connection refused")
	flusher.Warn("flush failed", "attempt", 2, "err", "connection refused")
	log.With("component", "aggregator").WithGroup("line").Warn("malformed line skipped", "path", "/var/log/a.log", "text", strings.Repeat("x", 400))
	log.Error("no component", slog.Group("g", "k", "v"))
	log.Info("not kept")
	log.With("component", "tailer").Info("not kept either")

	// The wrapped handler's level still applies to what it writes...
	if got := out.String(); strings.Contains(got, "flush failed") || !strings.Contains(got, "no component") {
		t.Errorf("written:\n%s", got)
	}
	// ...but warnings are kept for /status.
	if !tap.Enabled(context.Background(), slog.LevelWarn) || tap.Enabled(context.Background(), slog.LevelInfo) {
		t.Error("Enabled: want warnings on, info off")
	}
	ps := tap.Problems()
	if len(ps) != 3 {
		t.Fatalf("problems: %+v", ps)
	}
	by := map[string]Problem{}
	for _, p := range ps {
		by[p.Component] = p
	}
	if p := by["flusher"]; p.Message != "flush failed" || p.Level != "WARN" || p.Attrs["attempt"] != "2" || p.Attrs["err"] != "connection refused" || len(p.Attrs) != 2 {
		t.Errorf("flusher: %+v", p)
	}
	if p := by["aggregator"]; p.Attrs["line.path"] != "/var/log/a.log" || len(p.Attrs["line.text"]) != maxAttrLen+3 {
		t.Errorf("aggregator: %+v", p)
	}
	if p := by["logtally"]; p.Level != "ERROR" || p.Attrs["g.k"] != "v" {
		t.Errorf("no component: %+v", p)
	}
	// Newest first.
	for i := 1; i < len(ps); i++ {
		if ps[i].Time.After(ps[i-1].Time) {
			t.Errorf("order: %+v", ps)
		}
	}
}

// Attributes that could carry a file's contents are never kept for
// /status, whatever logs them.
func TestTapDropsContentAttrs(t *testing.T) {
	tap := NewTap(slog.DiscardHandler)
	slog.New(tap).With("component", "aggregator").WithGroup("g").Warn("malformed line skipped",
		"path", "/var/log/a.log", "line", "root:SECRETHASH", "prefix", "SECRETHASH", "data", []byte("SECRETHASH"))
	ps := tap.Problems()
	if len(ps) != 1 || ps[0].Attrs["g.path"] != "/var/log/a.log" || len(ps[0].Attrs) != 1 {
		t.Fatalf("problems: %+v", ps)
	}
}
