package dashboard

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// vendorDir holds the vendored files and VERSION, which refresh.sh writes:
// their version, licence and a "sha256<TAB>hex<TAB>file" line per file.
const vendorDir = "static/vendor"

// vendorUnhashed are the files of vendorDir that are the project's own,
// not vendored: the record and the script that writes it.
var vendorUnhashed = []string{"VERSION", "refresh.sh"}

// checkVendored recomputes the SHA-256 of every file VERSION records in
// dir of fsys and returns a problem per mismatch (naming the file), per
// recorded file missing and per file of dir not recorded.
func checkVendored(fsys fs.FS, dir string) []string {
	rec, err := fs.ReadFile(fsys, path.Join(dir, "VERSION"))
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	fields := map[string]string{}
	recorded := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(rec))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if f[0] != "sha256" {
			if len(f) == 2 {
				fields[f[0]] = f[1]
			} else {
				problems = append(problems, fmt.Sprintf("VERSION line %d: %q is not \"key<TAB>value\"", n, line))
			}
			continue
		}
		if len(f) != 3 || len(f[1]) != 2*sha256.Size || path.Base(f[2]) != f[2] {
			problems = append(problems, fmt.Sprintf("VERSION line %d: %q is not \"sha256<TAB>hex<TAB>file\"", n, line))
			continue
		}
		name := f[2]
		if recorded[name] {
			problems = append(problems, fmt.Sprintf("VERSION line %d: %s recorded twice", n, name))
		}
		recorded[name] = true
		data, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: recorded in VERSION but not readable: %v", name, err))
			continue
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != f[1] {
			problems = append(problems, fmt.Sprintf("%s: SHA-256 %x, VERSION records %s (re-vendor with refresh.sh, never by hand)", name, sum, f[1]))
		}
	}
	for _, k := range []string{"name", "version", "licence", "integrity"} {
		if fields[k] == "" {
			problems = append(problems, fmt.Sprintf("VERSION has no %s", k))
		}
	}
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return append(problems, err.Error())
	}
	for _, e := range entries {
		if !recorded[e.Name()] && !slices.Contains(vendorUnhashed, e.Name()) {
			problems = append(problems, fmt.Sprintf("%s: in %s but its SHA-256 is not recorded in VERSION", e.Name(), dir))
		}
	}
	return problems
}

// The vendored files embedded in the binary are the ones VERSION records
// (uPlot's script, style and licence): a file edited by hand, or replaced
// without refresh.sh, fails here naming it.
func TestVendoredHashes(t *testing.T) {
	for _, p := range checkVendored(static, vendorDir) {
		t.Error(p)
	}
	// The record names what the page loads and links.
	rec, _ := fs.ReadFile(static, vendorDir+"/VERSION")
	for _, name := range []string{"uPlot.iife.min.js", "uPlot.min.css", "LICENSE"} {
		if !bytes.Contains(rec, []byte("\t"+name+"\n")) {
			t.Errorf("VERSION records no SHA-256 of %s", name)
		}
	}
}

// checkVendored finds a changed byte, a file missing and one unrecorded.
func TestCheckVendoredFindsChanges(t *testing.T) {
	copyOf := func() fstest.MapFS {
		m := fstest.MapFS{}
		err := fs.WalkDir(static, vendorDir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := fs.ReadFile(static, p)
			m[p] = &fstest.MapFile{Data: data}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if p := checkVendored(copyOf(), vendorDir); len(p) != 0 {
		t.Fatalf("the copy: %q", p)
	}

	m := copyOf()
	js := m[vendorDir+"/uPlot.iife.min.js"]
	js.Data = slices.Clone(js.Data)
	js.Data[len(js.Data)/2] ^= 1
	if p := checkVendored(m, vendorDir); len(p) != 1 || !strings.HasPrefix(p[0], "uPlot.iife.min.js: SHA-256 ") {
		t.Errorf("a byte of uPlot.iife.min.js changed: %q", p)
	}

	m = copyOf()
	delete(m, vendorDir+"/uPlot.min.css")
	m[vendorDir+"/extra.js"] = &fstest.MapFile{Data: []byte("x")}
	p := checkVendored(m, vendorDir)
	if len(p) != 2 || !strings.HasPrefix(p[0], "uPlot.min.css: recorded in VERSION but not readable") ||
		!strings.HasPrefix(p[1], "extra.js: in static/vendor but its SHA-256 is not recorded") {
		t.Errorf("uPlot.min.css gone, extra.js added: %q", p)
	}
}
