package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/buffer"
)

// recorder is a testing.TB that keeps its cleanups and errors.
type recorder struct {
	testing.TB
	cleanups []func()
	errs     []string
}

func (r *recorder) Helper()                      {}
func (r *recorder) Cleanup(f func())             { r.cleanups = append(r.cleanups, f) }
func (r *recorder) Errorf(f string, args ...any) { r.errs = append(r.errs, fmt.Sprintf(f, args...)) }

func (r *recorder) cleanup() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

// The cleanup of OpenBuffer fails the test for a file left inconsistent
// (cut short in place), and leaves a sound file, a file gone and another
// file put at the path alone.
func TestOpenBufferChecksAtCleanup(t *testing.T) {
	for _, tc := range []struct {
		what  string
		after func(path string) error
		fails bool
	}{
		{"sound", func(string) error { return nil }, false},
		{"cut short", func(path string) error { return os.Truncate(path, 4096) }, true},
		{"removed", os.Remove, false},
		{"replaced", func(path string) error {
			if err := os.WriteFile(path+".new", []byte("x"), 0o600); err != nil {
				return err
			}
			return os.Rename(path+".new", path)
		}, false},
	} {
		r := &recorder{TB: t}
		path := filepath.Join(t.TempDir(), "buffer.db")
		b := OpenBuffer(r, path, buffer.Options{})
		b.Close()
		if err := tc.after(path); err != nil {
			t.Fatal(err)
		}
		r.cleanup()
		if failed := len(r.errs) > 0; failed != tc.fails {
			t.Errorf("%s: errors %q, want failed %v", tc.what, r.errs, tc.fails)
		}
		if tc.fails && !strings.Contains(strings.Join(r.errs, ""), "the buffer file the test left") {
			t.Errorf("%s: %q does not say what is wrong", tc.what, r.errs)
		}
	}
}

func TestUntil(t *testing.T) {
	n := 0
	if !Until(time.Second, func() bool { n++; return n == 3 }) || n != 3 {
		t.Errorf("Until returned after %d looks, want true after 3", n)
	}
	begun := time.Now()
	if Until(30*time.Millisecond, func() bool { return false }) {
		t.Error("Until reported a condition that never held")
	}
	if d := time.Since(begun); d < 30*time.Millisecond {
		t.Errorf("Until gave up after %v, before its 30ms", d)
	}
}
