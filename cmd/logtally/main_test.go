package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/geo"
	"github.com/logtally/logtally/internal/syncbuf"
	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/referrer"
)

// TestMain lets the tests run the real command as a subprocess: with
// LOGTALLY_MAIN set, the test binary is logtally.
func TestMain(m *testing.M) {
	if os.Getenv("LOGTALLY_MAIN") != "" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// command returns the logtally command with args, run from the test binary.
func command(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "LOGTALLY_MAIN=1")
	return cmd
}

func runCmd(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := command(args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func TestUsageAndConfigErrorsExit2WithOneLine(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte("[flush]\nmax_ops = 0\n[[source]]\nsite = \"s\"\npaths = [\"/x\"]\nformat = \"combined\"\n"), 0o600)
	cases := []struct {
		args []string
		want string
	}{
		{nil, "logtally: no command given"},
		{[]string{"frobnicate"}, `logtally: unknown command "frobnicate"`},
		{[]string{"run"}, "logtally: run: -config FILE is required"},
		{[]string{"run", "-config", bad}, "bad.toml:2: flush.max_ops: 0: must be from 1 to 100000"},
		{[]string{"check", "-config", filepath.Join(dir, "missing.toml")}, "logtally: read config:"},
	}
	for _, tc := range cases {
		_, stderr, code := runCmd(t, tc.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", tc.args, code, stderr)
		}
		if !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: stderr %q does not contain %q", tc.args, stderr, tc.want)
		}
		if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic") {
			t.Errorf("%v: stack trace on stderr: %q", tc.args, stderr)
		}
	}
}

// TestUsageNamesEveryFlag keeps the usage text true: every command the
// usage lists exists, and its entry names every flag its -h describes.
func TestUsageNamesEveryFlag(t *testing.T) {
	entries := map[string]string{} // command: its lines of the usage
	cmd := ""
	for _, line := range strings.Split(usage, "\n") {
		if strings.HasPrefix(line, "  ") && len(line) > 2 && line[2] != ' ' {
			cmd = strings.Fields(line)[0]
		} else if !strings.HasPrefix(line, "   ") {
			cmd = ""
		}
		if cmd != "" {
			entries[cmd] += line + "\n"
		}
	}
	for _, c := range []string{"run", "check", "state", "replay", "query", "verify", "version"} {
		if _, ok := entries[c]; !ok {
			t.Errorf("the usage does not list %s", c)
		}
	}
	for c, entry := range entries {
		var out, errb bytes.Buffer
		if code := run([]string{c, "-h"}, &out, &errb); code != 0 {
			t.Errorf("%s -h: exit %d: %s", c, code, errb.String())
			continue
		}
		for _, line := range strings.Split(errb.String(), "\n") {
			if !strings.HasPrefix(line, "  -") {
				continue
			}
			flag := strings.Fields(line)[0]
			if !strings.Contains(entry, flag+" ") && !strings.Contains(entry, flag+"\n") {
				t.Errorf("the usage's %s entry does not name %s:\n%s", c, flag, entry)
			}
		}
	}
}

func TestVersion(t *testing.T) {
	out, _, code := runCmd(t, "version")
	if code != 0 || !strings.HasPrefix(out, "logtally ") || !strings.Contains(out, "go1.") {
		t.Fatalf("version: exit %d, %q", code, out)
	}
	// The pinned lists built in, each as its package describes it.
	for name, v := range map[string]string{"bot lists": botclass.Version(), "referrer lists": referrer.Version(), "hosting networks": geo.HostingVersion()} {
		if !strings.Contains(v, "@") || !strings.Contains(out, "\n"+name+": "+v+"\n") {
			t.Errorf("version does not say the %s (%q):\n%s", name, v, out)
		}
	}
}

// TestBinaryDoesNotLinkFerretDB builds the real binary and checks its
// module list: the embedded test server must stay out of production.
func TestBinaryDoesNotLinkFerretDB(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped in -short mode")
	}
	bin := filepath.Join(t.TempDir(), "logtally")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command("go", "version", "-m", bin).CombinedOutput()
	if err != nil {
		t.Fatalf("go version -m: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "go.mongodb.org/mongo-driver/v2") {
		t.Fatalf("module list looks wrong (no mongo driver):\n%s", out)
	}
	if strings.Contains(string(out), "github.com/FerretDB/") {
		t.Fatalf("logtally links FerretDB:\n%s", out)
	}
}

// daemon runs logtally run with conf, its output in a syncbuf.
func daemon(t *testing.T, conf string) (*exec.Cmd, *syncbuf.Buffer) {
	t.Helper()
	out := &syncbuf.Buffer{}
	cmd := command("run", "-config", conf)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, out
}

// earlierBuffer leaves an empty buffer.db in stateDir, as an earlier run
// would: a start without one waits for MongoDB to read this instance's
// progress record.
func earlierBuffer(t *testing.T, stateDir string) {
	t.Helper()
	testenv.OpenBuffer(t, filepath.Join(stateDir, "buffer.db"), buffer.Options{}).Close()
}
