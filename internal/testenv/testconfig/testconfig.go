// Package testconfig is the one configuration builder of the tests that
// run logtally whole (cmd/logtally's, daemon's) and of the bench commands:
// config's defaults, the settings those tests share, and each test's
// overrides, written as the TOML file logtally reads (a bench sets its
// config.Config itself and writes it with WriteFile). A test writes TOML by hand only when the text
// is the point (a config error's message and line).
//
// It is apart from testenv because config imports most of the module's
// packages, whose own tests use testenv.
package testconfig

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/logtally/logtally/config"
)

// New returns config.Default() with the settings the end-to-end tests
// share, then each override applied in order:
//
//	state_dir = dir/state, instance "" (the host name)
//	shutdown_timeout = "60s", lease_ttl = "3s"
//	[http] listen = "" (no endpoint)
//	[mongo] timeout = "5s"
//	[buffer] commit_interval = "50ms"
//	[flush] interval = "100ms", max_ops = 16 (the embedded server), max_backoff = "200ms"
//	[buckets] minute_retention = "0" (the test lines are often older than the default 48h)
//
// and no source (see Source).
func New(dir string, overrides ...func(*config.Config)) config.Config {
	c := config.Default()
	c.StateDir = filepath.Join(dir, "state")
	c.ShutdownTimeout = config.Duration(60 * time.Second)
	c.LeaseTTL = config.Duration(3 * time.Second)
	c.HTTP.Listen = ""
	c.Mongo.Timeout = config.Duration(5 * time.Second)
	c.Buffer.CommitInterval = config.Duration(50 * time.Millisecond)
	c.Flush.Interval = config.Duration(100 * time.Millisecond)
	c.Flush.MaxOps = 16
	c.Flush.MaxBackoff = config.Duration(200 * time.Millisecond)
	c.Buckets.MinuteRetention = 0
	for _, o := range overrides {
		o(&c)
	}
	return c
}

// Source returns a [[source]] counting the lines of paths, in the combined
// format, for site.
func Source(site string, paths ...string) config.Source {
	return config.Source{Site: site, Paths: paths, Format: "combined"}
}

// Mongo returns an override that sets [mongo] uri and database.
func Mongo(uri, database string) func(*config.Config) {
	return func(c *config.Config) { c.Mongo.URI, c.Mongo.Database = uri, database }
}

// Sources returns an override that appends sources.
func Sources(sources ...config.Source) func(*config.Config) {
	return func(c *config.Config) { c.Sources = append(c.Sources, sources...) }
}

// Write writes c to path as TOML and returns path. Only the keys whose
// value is not config.Default()'s are written (in a [[source]], those not
// the zero Source's), so the file reads as what the test sets; the
// [[source]] tables come last.
func Write(t testing.TB, path string, c config.Config) string {
	t.Helper()
	if err := WriteFile(path, c); err != nil {
		t.Fatal(err)
	}
	return path
}

// WriteFile is Write for a program (the bench commands): it returns the
// error.
func WriteFile(path string, c config.Config) error {
	text, err := Text(c)
	if err != nil {
		return err
	}
	return os.WriteFile(path, text, 0o600)
}

// WriteSources writes sources at path as an included file holds them
// ([[source]] tables only), and returns path.
func WriteSources(t testing.TB, path string, sources ...config.Source) string {
	t.Helper()
	text, err := sourcesText(sources)
	return write(t, path, text, err)
}

// write writes text, made with err, to path and returns path.
func write(t testing.TB, path string, text []byte, err error) string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, text, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Edit reads the config file at path (as Write wrote it: its included
// files are not read), applies overrides and writes it again: for a test
// that changes a daemon's config between runs or before a reload.
func Edit(t testing.TB, path string, overrides ...func(*config.Config)) {
	t.Helper()
	c := config.Default()
	if _, err := toml.DecodeFile(path, &c); err != nil {
		t.Fatal(err)
	}
	for _, o := range overrides {
		o(&c)
	}
	Write(t, path, c)
}

// Text is c as Write writes it.
func Text(c config.Config) ([]byte, error) {
	sources := c.Sources
	c.Sources = nil
	main, err := asMap(c)
	if err != nil {
		return nil, err
	}
	defaults, err := asMap(config.Default())
	if err != nil {
		return nil, err
	}
	prune(main, defaults)
	var out bytes.Buffer
	if err := toml.NewEncoder(&out).Encode(main); err != nil {
		return nil, err
	}
	text, err := sourcesText(sources)
	if err != nil {
		return nil, err
	}
	if out.Len() > 0 && len(text) > 0 {
		out.WriteByte('\n')
	}
	out.Write(text)
	return out.Bytes(), nil
}

// sourcesText is the [[source]] tables of sources, each without the keys
// a zero Source has.
func sourcesText(sources []config.Source) ([]byte, error) {
	zero, err := asMap(config.Source{})
	if err != nil {
		return nil, err
	}
	var tables []map[string]any
	for _, s := range sources {
		m, err := asMap(s)
		if err != nil {
			return nil, err
		}
		prune(m, zero)
		tables = append(tables, m)
	}
	if len(tables) == 0 {
		return nil, nil
	}
	var out bytes.Buffer
	err = toml.NewEncoder(&out).Encode(map[string]any{"source": tables})
	return out.Bytes(), err
}

// asMap is v encoded as TOML and decoded again, as logtally's reader sees
// it: durations and sizes as their text.
func asMap(v any) (map[string]any, error) {
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(v); err != nil {
		return nil, err
	}
	m := map[string]any{}
	if _, err := toml.NewDecoder(&b).Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// prune deletes from m the keys whose value is the same in base, and the
// tables left empty.
func prune(m, base map[string]any) {
	for _, k := range slices.Collect(maps.Keys(m)) {
		v := m[k]
		if sub, ok := v.(map[string]any); ok {
			if bsub, ok := base[k].(map[string]any); ok {
				prune(sub, bsub)
			}
			if len(sub) == 0 {
				delete(m, k)
			}
			continue
		}
		if b, ok := base[k]; ok && reflect.DeepEqual(v, b) {
			delete(m, k)
		}
	}
}
