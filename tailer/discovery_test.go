package tailer

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestDiscover: Discover lists the files a Tailer with the same globs
// follows at start: regular, uncompressed, each file once by identity.
func TestDiscover(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.log"), filepath.Join(dir, "b.log")
	appendLines(t, a, "a", 0, 3)
	appendLines(t, b, "b", 0, 3)
	if err := os.Link(a, filepath.Join(dir, "link.log")); err != nil { // a.log again
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "old.log"), 0o755); err != nil {
		t.Fatal(err)
	}
	appendLines(t, filepath.Join(dir, "c.log.gz"), "c", 0, 3)
	globs := []string{filepath.Join(dir, "*.log*"), a, filepath.Join(dir, "none", "*.log")}

	files, err := Discover(globs)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0] != (File{a, idOf(t, a)}) || files[1] != (File{b, idOf(t, b)}) {
		t.Fatalf("Discover = %v, want a.log and b.log", files)
	}

	h := start(t, Config{Source: "s", Paths: globs})
	<-h.tl.Started()
	h.waitFor("both files read", countLines(6))
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	if got := h.tl.Files(); !slices.Equal(got, paths) {
		t.Errorf("the tailer follows %q, Discover said %q", got, paths)
	}

	if _, err := Discover([]string{"["}); err == nil {
		t.Error("Discover accepted a bad pattern")
	}
}

// TestDiscoverStatError: a match that cannot be examined (here a symlink
// loop) is left out and its error returned with the other files.
func TestDiscoverStatError(t *testing.T) {
	dir := t.TempDir()
	a, loop := filepath.Join(dir, "a.log"), filepath.Join(dir, "loop.log")
	appendLines(t, a, "a", 0, 1)
	if err := os.Symlink(loop, loop); err != nil {
		t.Fatal(err)
	}
	files, err := Discover([]string{filepath.Join(dir, "*.log")})
	var pe *fs.PathError
	if len(files) != 1 || files[0].Path != a || !errors.As(err, &pe) || pe.Path != loop {
		t.Errorf("Discover = %v, %v; want a.log and the stat error of loop.log", files, err)
	}
}

func TestSourceFilesHolds(t *testing.T) {
	src := SourceFiles{Paths: []string{"/l/*.log", "/m/access.log"}, Rotated: []string{"/old/access.log*"}}
	for path, want := range map[string]bool{
		"/l/a.log":            true,  // a glob match
		"/l/a.log.1":          true,  // its rotated name
		"/l/a.log-20260201":   true,  // and the dated one
		"/l/a.log.2.gz":       false, // compressed
		"/m/access.log":       true,  // a literal glob
		"/m/access.log.1":     true,  // its rotated name
		"/m/error.log":        false, // another file beside it
		"/old/access.log.3":   true,  // a rotated glob's match
		"/old/other.log":      false,
		"/l/sub/a.log":        false, // * does not cross a separator
		"/elsewhere/a.log":    false,
		"/l/a.txt":            false,
		"/old/access.log.zst": false,
	} {
		if got := src.Holds(path); got != want {
			t.Errorf("Holds(%q) = %v, want %v", path, got, want)
		}
	}
}
