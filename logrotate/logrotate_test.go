package logrotate

import (
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
	rules := Parse("/etc/logrotate.d/t", []byte(conf))
	got := OlddirHints(rules, []string{"/var/log/nginx/access.log", "/var/log/a.log", "/var/log/b.log", "/var/log/c.log"})
	if len(got) != 2 {
		t.Fatalf("hints %q", got)
	}
	if !strings.Contains(got[0], `rotated = ["/var/log/nginx/old/access.log*"]`) || !strings.Contains(got[1], `rotated = ["/var/log/archive/a.log*"]`) {
		t.Errorf("hints %q", got)
	}
}
