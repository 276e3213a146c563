package buffer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckDir(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "file")
	os.WriteFile(file, nil, 0o600)
	for _, tc := range []struct {
		name, dir, want string
	}{
		{"existing", tmp, ""},
		{"creatable", filepath.Join(tmp, "a", "b"), ""},
		{"a file", file, "is not a directory"},
		{"under a file", filepath.Join(file, "state"), "cannot be created"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			locked, err := CheckDir(tc.dir, "buffer.db")
			if locked {
				t.Error("locked")
			}
			if tc.want == "" && err != nil {
				t.Fatalf("CheckDir: %v", err)
			}
			if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("CheckDir: %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(tmp, "a")); !os.IsNotExist(err) {
		t.Error("CheckDir created a directory")
	}

	// A buffer open in this process holds the lock, as a running daemon's
	// would.
	b, err := Open(filepath.Join(tmp, "buffer.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if locked, err := CheckDir(tmp, "buffer.db"); err != nil || !locked {
		t.Errorf("CheckDir with the buffer open = %v, %v; want locked", locked, err)
	}
	b.Close()
	if locked, err := CheckDir(tmp, "buffer.db"); err != nil || locked {
		t.Errorf("CheckDir after close = %v, %v; want unlocked", locked, err)
	}
}
