package benchutil

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/logtally/logtally/config"
)

// What Config writes is a logtally.toml that logtally loads, with each
// field where the bench meant it.
func TestConfigLoads(t *testing.T) {
	dir := t.TempDir()
	c := Config{
		StateDir: filepath.Join(dir, "state"), Instance: "bench", ShutdownTimeout: "5m",
		URI: "mongodb://127.0.0.1:27017", Database: "db_1", Timeout: "120s",
		FlushInterval: "1s", MaxOps: 32, KeepMinutes: true, Listen: "127.0.0.1:9999",
		Sections: "[dimensions]\nenabled = true",
		Site:     "example.com", Path: filepath.Join(dir, "live.log"), Format: "combined",
	}
	path := filepath.Join(dir, "logtally.toml")
	if err := c.Write(path); err != nil {
		t.Fatal(err)
	}
	got, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.StateDir != c.StateDir || got.Instance != "bench" || time.Duration(got.ShutdownTimeout) != 5*time.Minute ||
		got.Mongo.URI != c.URI || got.Mongo.Database != "db_1" || time.Duration(got.Mongo.Timeout) != 2*time.Minute ||
		time.Duration(got.Flush.Interval) != time.Second || got.Flush.MaxOps != 32 ||
		got.Buckets.MinuteRetention != 0 || got.HTTP.Listen != c.Listen || !got.Dimensions.Enabled ||
		len(got.Sources) != 1 || got.Sources[0].Site != "example.com" || got.Sources[0].Format != "combined" ||
		len(got.Sources[0].Paths) != 1 || got.Sources[0].Paths[0] != c.Path {
		t.Errorf("loaded %+v", got)
	}
	// Without KeepMinutes, the default retention stays.
	c.KeepMinutes = false
	if err := c.Write(path); err != nil {
		t.Fatal(err)
	}
	if got, err := config.Load(path); err != nil || got.Buckets.MinuteRetention == 0 {
		t.Errorf("without KeepMinutes: minute_retention %v, %v", got.Buckets.MinuteRetention, err)
	}
}
