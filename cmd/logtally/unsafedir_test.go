package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A state dir that others can write is refused by run, replay and check,
// naming its mode and owner.
func TestUnsafeStateDirRefused(t *testing.T) {
	dir, logs := checkSetup(t)
	conf := writeCheckConfig(t, dir, deadMongo(t), []string{filepath.Join(logs, "*.log")})
	state := filepath.Join(dir, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(state, 0o777); err != nil {
		t.Fatal(err)
	}
	want := state + " has mode 0777, owner "
	for _, args := range [][]string{
		{"check", "-config", conf},
		{"run", "-config", conf},
		{"replay", "-config", conf, "-site", "s", "-format", "combined", filepath.Join(logs, "a.log")},
	} {
		// Before the check, run and replay waited for MongoDB (no
		// buffer.db): give up on them after a while.
		cmd := command(args...)
		var out, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		timer := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
		cmd.Wait()
		timer.Stop()
		code := cmd.ProcessState.ExitCode()
		if code == 0 || !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), "chmod go-w "+state) {
			t.Errorf("%s: exit %d, want non-zero and %q:\n%s\n%s", args[0], code, want, out.String(), stderr.String())
		}
	}
	if _, err := os.Stat(filepath.Join(state, "buffer.db")); !os.IsNotExist(err) {
		t.Errorf("a buffer was created in the unsafe dir: %v", err)
	}
}
