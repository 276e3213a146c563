package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// `logtally state` reads a buffer on a read-only file system (a state dir
// mounted read-only, a backup): it writes nothing.
func TestStateReadOnlyDir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("read-only state dir test skipped: a read-only bind mount needs root (root ignores file modes)")
	}
	conf, bufPath, logPath := stateDir(t, "mongodb://127.0.0.1:1/", "")
	dir := filepath.Dir(bufPath)
	before, err := os.ReadFile(bufPath)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "--bind", dir, dir).CombinedOutput(); err != nil {
		t.Skipf("mount --bind: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	if out, err := exec.Command("mount", "-o", "remount,ro,bind", dir).CombinedOutput(); err != nil {
		t.Skipf("remount read-only: %v: %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "probe"), nil, 0o600); err == nil {
		t.Skip("the bind mount is not read-only")
	}
	stdout, stderr, code := runCmd(t, "state", "-config", conf)
	if code != 0 {
		t.Fatalf("exit %d on a read-only state dir:\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"logtally is not running: state read from " + bufPath, "pending      1 keys, 7 hits", logPath} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in\n%s", want, stdout)
		}
	}
	if after, _ := os.ReadFile(bufPath); string(after) != string(before) {
		t.Error("the buffer file changed")
	}
}
