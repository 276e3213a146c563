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
	b := openTest(t, filepath.Join(tmp, "buffer.db"), Options{})
	if locked, err := CheckDir(tmp, "buffer.db"); err != nil || !locked {
		t.Errorf("CheckDir with the buffer open = %v, %v; want locked", locked, err)
	}
	b.Close()
	if locked, err := CheckDir(tmp, "buffer.db"); err != nil || locked {
		t.Errorf("CheckDir after close = %v, %v; want unlocked", locked, err)
	}
}

// A state dir, a directory above it or a buffer file that someone other
// than this user and root can write or owns is refused, naming its mode
// and owner; a sticky directory above it (/tmp) is fine.
func TestCheckDirRefusesUnsafe(t *testing.T) {
	tmp := t.TempDir()
	mk := func(name string, mode os.FileMode) string {
		d := filepath.Join(tmp, name)
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, mode); err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, tc := range []struct {
		name, dir, want string
	}{
		{"0777", mk("open", 0o777), "has mode 0777, owner "},
		{"0770", mk("group", 0o770), ": its group (gid "},
		{"0703", mk("others", 0o703), ": every user can write in it"},
		{"sticky 1777 state dir", mk("sticky", os.ModeSticky|0o777), "has mode 0777"},
		{"under a 0777 dir", filepath.Join(mk("parent", 0o777), "state"), "parent has mode 0777"},
		{"under a 0777 dir, existing", mk("parent2/state", 0o750), "parent2 has mode 0777"},
		{"under a sticky dir", mk("sticky2/state", 0o750), ""},
		{"0750", mk("ok", 0o750), ""},
	} {
		if tc.name == "under a 0777 dir, existing" {
			os.Chmod(filepath.Join(tmp, "parent2"), 0o777)
		}
		if tc.name == "under a sticky dir" {
			os.Chmod(filepath.Join(tmp, "sticky2"), os.ModeSticky|0o777)
		}
		t.Run(tc.name, func(t *testing.T) {
			_, err := CheckDir(tc.dir, "buffer.db")
			if tc.want == "" && err != nil {
				t.Fatalf("CheckDir: %v", err)
			}
			if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "chmod go-w")) {
				t.Fatalf("CheckDir: %v, want %q", err, tc.want)
			}
		})
	}

	// The buffer file itself: writable by others, or not a regular file.
	dir := mk("buf", 0o750)
	db := filepath.Join(dir, "buffer.db")
	os.WriteFile(db, nil, 0o600)
	os.Chmod(db, 0o666)
	if _, err := CheckDir(dir, "buffer.db"); err == nil || !strings.Contains(err.Error(), "buffer.db has mode 0666") {
		t.Errorf("buffer.db 0666: %v", err)
	}
	os.Remove(db)
	os.Symlink(filepath.Join(tmp, "elsewhere"), db)
	if _, err := CheckDir(dir, "buffer.db"); err == nil || !strings.Contains(err.Error(), "is not a regular file") {
		t.Errorf("buffer.db a symlink: %v", err)
	}

	// Owned by another user (this test's files are, for a process of uid
	// 4242): refused; owned by root or by the process's user: accepted.
	defer func(f func() int) { geteuid = f }(geteuid)
	geteuid = func() int { return 4242 }
	if os.Geteuid() != 0 {
		if _, err := CheckDir(mk("mine", 0o750), "buffer.db"); err == nil || !strings.Contains(err.Error(), "not by this process's user (uid 4242) or root") {
			t.Errorf("another user's dir: %v", err)
		}
	} else {
		// Running as root the files are root's: accepted whoever runs.
		if _, err := CheckDir(mk("roots", 0o750), "buffer.db"); err != nil {
			t.Errorf("root's dir for uid 4242: %v", err)
		}
		d := mk("others-dir", 0o750)
		os.Chown(d, 4343, 4343)
		if _, err := CheckDir(d, "buffer.db"); err == nil || !strings.Contains(err.Error(), "others-dir is owned by uid 4343, not by this process's user (uid 4242) or root") {
			t.Errorf("another user's dir: %v", err)
		}
		geteuid = func() int { return 0 }
		if _, err := CheckDir(d, "buffer.db"); err != nil {
			t.Errorf("root using another user's (safe) dir: %v", err)
		}
	}
}
