package benchutil

import (
	"fmt"
	"os"
	"strings"
)

// Config is the logtally.toml a bench runs logtally with: one source,
// one MongoDB database. Empty fields are left to logtally's defaults.
type Config struct {
	StateDir, Instance string
	ShutdownTimeout    string // e.g. "5m"
	URI, Database      string
	Timeout            string // [mongo] timeout
	FlushInterval      string
	MaxOps             int
	// KeepMinutes keeps the minute buckets of any age: a bench's lines
	// are older than the default 48 h.
	KeepMinutes bool
	Listen      string // [http] listen; empty: no HTTP endpoints
	// Sections is further TOML ([visitors], [dimensions], …), written
	// before the source.
	Sections           string
	Site, Path, Format string // the [[source]]
}

// Write writes c to path, readable by its owner only.
func (c Config) Write(path string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "state_dir = %q\ninstance = %q\n", c.StateDir, c.Instance)
	if c.ShutdownTimeout != "" {
		fmt.Fprintf(&b, "shutdown_timeout = %q\n", c.ShutdownTimeout)
	}
	fmt.Fprintf(&b, "[mongo]\nuri = %q\ndatabase = %q\n", c.URI, c.Database)
	if c.Timeout != "" {
		fmt.Fprintf(&b, "timeout = %q\n", c.Timeout)
	}
	b.WriteString("[flush]\n")
	if c.FlushInterval != "" {
		fmt.Fprintf(&b, "interval = %q\n", c.FlushInterval)
	}
	if c.MaxOps > 0 {
		fmt.Fprintf(&b, "max_ops = %d\n", c.MaxOps)
	}
	if c.KeepMinutes {
		b.WriteString("[buckets]\nminute_retention = \"0\"\n")
	}
	fmt.Fprintf(&b, "[http]\nlisten = %q\n", c.Listen)
	if c.Sections != "" {
		b.WriteString(strings.TrimSuffix(c.Sections, "\n") + "\n")
	}
	fmt.Fprintf(&b, "[[source]]\nsite = %q\npaths = [%q]\n", c.Site, c.Path)
	if c.Format != "" {
		fmt.Fprintf(&b, "format = %q\n", c.Format)
	}
	return os.WriteFile(path, []byte(b.String()), 0o600)
}
