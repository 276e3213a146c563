package tailer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtally/logtally/fnv1a"
	"github.com/logtally/logtally/stream"
)

func TestLocate(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "access.log")
	content := strings.Repeat("line of the log\n", 100)
	os.WriteFile(log, []byte(content), 0o644)
	st, _ := os.Stat(log)
	id, _, _ := statID(st)
	h := fnv1a.Extend(fnv1a.Offset, []byte(content[:stream.FingerprintSize]))
	cp := stream.Checkpoint{Source: "s", Path: log, File: id, Offset: 800, FPLen: stream.FingerprintSize, FPSum: h}
	globs := []string{filepath.Join(dir, "*.log")}

	if loc, ok := Locate(globs, cp); !ok || loc.Path != log || loc.ID != id {
		t.Fatalf("Locate at its path: %+v %v", loc, ok)
	}
	// Rotated away: found under its rotated name by identity.
	os.Rename(log, log+".1")
	os.WriteFile(log, []byte("new file\n"), 0o644)
	if loc, ok := Locate(globs, cp); !ok || loc.Path != log+".1" || loc.ID != id {
		t.Fatalf("Locate after a rotation: %+v %v", loc, ok)
	}
	// Rotated again while the base file is missing for a moment (renamed,
	// not yet created), and the checkpoint's path is stale.
	os.Rename(log+".1", log+".2")
	os.Remove(log)
	stale := cp
	stale.Path = log + ".1"
	if loc, ok := Locate(globs[:0:0], stale); ok {
		t.Fatalf("Locate without globs found %+v", loc)
	}
	if loc, ok := Locate([]string{log}, stale); !ok || loc.Path != log+".2" || loc.ID != id {
		t.Fatalf("Locate with the base file missing: %+v %v", loc, ok)
	}
	os.Rename(log+".2", log+".1")
	os.WriteFile(log, []byte("new file\n"), 0o644)
	// Restored from a backup (a copy: another inode): found by fingerprint.
	data, _ := os.ReadFile(log + ".1")
	os.WriteFile(log+"-20261123", data, 0o644) // before the removal: a new inode
	os.Remove(log + ".1")
	loc, ok := Locate(globs, cp)
	if !ok || loc.Path != log+"-20261123" || loc.ID == id {
		t.Fatalf("Locate of a restored copy: %+v %v", loc, ok)
	}
	// Shorter than the checkpoint's offset, or other first bytes: not it.
	short := cp
	short.Offset = int64(len(data)) + 1
	if loc, ok := Locate(globs, short); ok {
		t.Fatalf("Locate found a file shorter than the offset: %+v", loc)
	}
	other := cp
	other.FPSum++
	if loc, ok := Locate(globs, other); ok {
		t.Fatalf("Locate found a file with other first bytes: %+v", loc)
	}
}
