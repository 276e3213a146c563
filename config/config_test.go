package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const good = `
instance = "web-1"
state_dir = "/tmp/lt"
shutdown_timeout = "5s"

[mongo]
uri = "mongodb://u:secret@db:27017"
write_concern = 2
journal = false
timeout = "3s"

[buffer]
commit_interval = "500ms"
max_size = "64MiB"

[flush]
interval = "2s"
max_ops = 500
max_backoff = "30s"

[buckets]
minute = "m"

[[source]]
site = "www.example.com"
paths = ["/var/log/nginx/access.log"]
format = "combined"

[[source]]
name = "api"
site = "api.example.com"
paths = ["/var/log/nginx/api*.log"]
format = "common"
`

func TestParseGood(t *testing.T) {
	c, err := Parse("t.toml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if c.Instance != "web-1" || c.StateDir != "/tmp/lt" || c.ShutdownTimeout.D() != 5*time.Second {
		t.Fatalf("top level: %+v", c)
	}
	if c.Mongo.WriteConcern != "2" || c.Mongo.Journal || c.Mongo.Timeout.D() != 3*time.Second || c.Mongo.Database != "logtally" {
		t.Fatalf("mongo: %+v", c.Mongo)
	}
	if c.Buffer.MaxSize != 64<<20 || c.Buffer.CommitInterval.D() != 500*time.Millisecond {
		t.Fatalf("buffer: %+v", c.Buffer)
	}
	if c.Flush.MaxOps != 500 || c.Flush.Interval.D() != 2*time.Second || c.Flush.MaxBackoff.D() != 30*time.Second {
		t.Fatalf("flush: %+v", c.Flush)
	}
	// Unset keys keep their defaults.
	if c.Buckets != (Buckets{Minute: "m", Daily: "daily", Monthly: "monthly"}) {
		t.Fatalf("buckets: %+v", c.Buckets)
	}
	if len(c.Sources) != 2 || c.Sources[0].Name != "www.example.com" || c.Sources[1].Name != "api" || c.Sources[1].Format != "common" {
		t.Fatalf("sources: %+v", c.Sources)
	}
	if got := c.Mongo.Redacted(); strings.Contains(got, "secret") || !strings.Contains(got, "u:xxxxx@db") {
		t.Fatalf("Redacted() = %q", got)
	}
}

func TestErrorsNameKeyAndLine(t *testing.T) {
	src := `state_dir = "/tmp/x"
[mongo]
uri = "mongodb://localhost"
timout = "3s"

[flush]
interval = 10
max_ops = 0

[[source]]
site = "a"
paths = ["/x"]
format = "combined"

[[source]]
site = "b"
paths = ["/y["]
format = "apache"
colour = "red"
`
	cases := []struct {
		name, src string
		want      []string
	}{
		{"unknown keys", strings.Replace(src, "interval = 10", `interval = "10s"`, 1), []string{"t.toml:4: mongo.timout: unknown key", "t.toml:19: source.colour: unknown key"}},
		{"bare number duration", strings.Replace(src, "timout", "timeout", 1) + "", []string{"t.toml:7:", "flush.interval", "no unit"}},
		{"bad values", strings.NewReplacer("timout", "timeout", "interval = 10", `interval = "10s"`, `colour = "red"`, "").Replace(src),
			[]string{"t.toml:8: flush.max_ops: 0: must be from 1 to 100000", `t.toml:17: source[1].paths: "/y[": not a valid glob`, `t.toml:18: source[1].format: "apache": must be one of combined, common`}},
		{"wrong type", `state_dir = 5`, []string{"t.toml:1: state_dir: incompatible types"}},
		{"syntax", "[mongo\nuri = 1", []string{"t.toml:2:", "table name"}},
		{"no source", `state_dir = "/x"`, []string{"source: at least one [[source]] is needed"}},
		{"bad size", "[buffer]\nmax_size = \"1 furlong\"\n", []string{"t.toml:2:", "buffer.max_size", "unknown unit"}},
		{"write concern", "[mongo]\nwrite_concern = \"most\"\n", []string{`t.toml:2: mongo.write_concern: "most"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("t.toml", []byte(tc.src))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
		})
	}
}

func TestURIFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "uri")
	if err := os.WriteFile(f, []byte("mongodb://user:pw@h:1/\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := "[mongo]\nuri_file = \"" + f + "\"\n[[source]]\nsite=\"s\"\npaths=[\"/x\"]\nformat=\"common\"\n"
	c, err := Parse("t.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if c.Mongo.URI != "mongodb://user:pw@h:1/" {
		t.Fatalf("URI = %q", c.Mongo.URI)
	}
	_, err = Parse("t.toml", []byte(strings.Replace(src, f, f+".missing", 1)))
	if err == nil || !strings.Contains(err.Error(), "t.toml:2: mongo.uri_file:") {
		t.Fatalf("missing uri_file: %v", err)
	}
}

func TestSize(t *testing.T) {
	for in, want := range map[string]Size{"1GiB": 1 << 30, "512MiB": 512 << 20, "2GB": 2e9, "1048576": 1 << 20, "1.5KiB": 1536} {
		var s Size
		if err := s.UnmarshalText([]byte(in)); err != nil || s != want {
			t.Errorf("%q -> %d, %v; want %d", in, s, err, want)
		}
	}
	if Size(1<<30).String() != "1GiB" {
		t.Errorf("String() = %s", Size(1<<30))
	}
}

// The example config shipped in systemd/ must load.
func TestExampleConfigLoads(t *testing.T) {
	c, err := Load("../systemd/logtally.toml")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Sources) == 0 {
		t.Fatal("example config has no source")
	}
}
