package testconfig

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/logtally/logtally/config"
)

// What Write writes, config.Load reads back as the Config it was given,
// and the file holds only what differs from the defaults.
func TestWriteReadsBack(t *testing.T) {
	dir := t.TempDir()
	max := 3
	want := New(dir, Mongo("mongodb://127.0.0.1:1/", "db"), Sources(Source("a.test", filepath.Join(dir, "a.log"))), func(c *config.Config) {
		c.Instance = "web-1"
		c.HTTP.Listen = "127.0.0.1:9999"
		c.Visitors.Enabled = false
		c.Buckets.DailyRetention = config.Duration(48 * 3600e9)
		s := Source("{host}", filepath.Join(dir, "b.log"))
		s.Name, s.MaxSites, s.Format, s.LogFormat = "b", &max, "nginx", `$host [$time_local] "$request" $status`
		c.Sources = append(c.Sources, s)
		c.SiteAliases = map[string]string{"www.b.test": "b.test"}
	})
	path := Write(t, filepath.Join(dir, "logtally.toml"), want)
	got, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if enc(t, got) != enc(t, want) {
		t.Errorf("read back:\n%s\nwant:\n%s", enc(t, got), enc(t, want))
	}
	text, err := Text(want)
	if err != nil {
		t.Fatal(err)
	}
	s := string(text)
	for _, key := range []string{"journal", "database = \"logtally\"", "preallocate", "max_open_files", "[log]", "follow_symlinks"} {
		if strings.Contains(s, key) {
			t.Errorf("the file has %s, a default:\n%s", key, s)
		}
	}
	if i := strings.LastIndex(s, "[[source]]"); i < 0 || strings.Contains(s[i:], "\n[") && !strings.Contains(s[i:], "[source.") {
		t.Errorf("the file does not end with its [[source]] tables:\n%s", s)
	}
	t.Logf("\n%s", s)
}

// enc is c as TOML, without what Load adds (Files, the default names).
func enc(t *testing.T, c config.Config) string {
	c.Files = nil
	for i := range c.Sources {
		if c.Sources[i].Name == c.Sources[i].Site {
			c.Sources[i].Name = ""
		}
	}
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(c); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
