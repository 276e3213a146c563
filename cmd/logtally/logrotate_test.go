package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// logtally check suggests `rotated` for a file logrotate moves into an
// olddir: a stanza's own olddir, relative to the file's directory, or the
// global one; noolddir and other stanzas give none.
func TestOlddirHints(t *testing.T) {
	conf := `# global
olddir /var/log/archive
/var/log/a.log {
    daily
}
/var/log/nginx/*.log "/var/log/x.log" {
    olddir old
    copytruncate
}
/var/log/b.log {
    noolddir
}
`
	rules := parseLogrotate("/etc/logrotate.d/t", []byte(conf))
	got := olddirHints(rules, []string{"/var/log/nginx/access.log", "/var/log/a.log", "/var/log/b.log", "/var/log/c.log"})
	if len(got) != 2 {
		t.Fatalf("hints %q", got)
	}
	if !strings.Contains(got[0], `rotated = ["/var/log/nginx/old/access.log*"]`) || !strings.Contains(got[1], `rotated = ["/var/log/archive/a.log*"]`) {
		t.Errorf("hints %q", got)
	}
}

// The hint shows in check's output for a source without rotated.
func TestCheckSuggestsRotated(t *testing.T) {
	dir, logs := checkSetup(t)
	root := filepath.Join(dir, "etc")
	os.MkdirAll(filepath.Join(root, "logrotate.d"), 0o755)
	os.WriteFile(filepath.Join(root, "logrotate.d", "nginx"), []byte(logs+"/*.log {\n  olddir old\n}\n"), 0o644)
	old := logrotateRoot
	logrotateRoot = root
	t.Cleanup(func() { logrotateRoot = old })
	conf := writeCheckConfig(t, dir, deadMongo(t), []string{filepath.Join(logs, "*.log")})
	var stdout, stderr strings.Builder
	cmdCheck([]string{"-config", conf}, &stdout, &stderr) // MongoDB is down: an error, after the files
	out := stdout.String()
	if !strings.Contains(out, "warning: ") || !strings.Contains(out, "olddir") || !strings.Contains(out, filepath.Join(logs, "old")) {
		t.Errorf("no olddir hint:\n%s", out)
	}
}
