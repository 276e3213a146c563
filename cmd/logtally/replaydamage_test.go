package main

import (
	"bytes"
	"compress/bzip2"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Issue 16, item 2: a truncated archive is an error naming the file and the
// offset reached, exits non-zero, counts only the whole lines before the
// damage, and the intact archive replayed afterwards completes it exactly.
func TestReplayTruncatedArchives(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	e := newReplayEnv(t)
	type kind struct {
		name, ext string
		compress  func([]byte) []byte
		// decompress is the library's own reader: what it gives of a
		// damaged file before its error is the reference.
		decompress func([]byte) []byte
	}
	kinds := []kind{
		{"gzip", "gz", func(b []byte) []byte {
			var out bytes.Buffer
			w := gzip.NewWriter(&out)
			w.Write(b)
			w.Close()
			return out.Bytes()
		}, func(b []byte) []byte {
			var out bytes.Buffer
			if r, err := gzip.NewReader(bytes.NewReader(b)); err == nil {
				io.Copy(&out, r)
			}
			return out.Bytes()
		}},
		{"zstd", "zst", func(b []byte) []byte {
			var out bytes.Buffer
			w, _ := zstd.NewWriter(&out, zstd.WithWindowSize(1<<17)) // several blocks
			w.Write(b)
			w.Close()
			return out.Bytes()
		}, func(b []byte) []byte {
			var out bytes.Buffer
			if r, err := zstd.NewReader(bytes.NewReader(b)); err == nil {
				io.Copy(&out, r)
				r.Close()
			}
			return out.Bytes()
		}},
	}
	if _, err := exec.LookPath("bzip2"); err == nil {
		kinds = append(kinds, kind{"bzip2", "bz2", func(b []byte) []byte {
			cmd := exec.Command("bzip2", "-1", "-c") // 100 kB blocks: several
			cmd.Stdin = bytes.NewReader(b)
			out, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			return out
		}, func(b []byte) []byte {
			var out bytes.Buffer
			io.Copy(&out, bzip2.NewReader(bytes.NewReader(b)))
			return out.Bytes()
		}})
	} else {
		t.Log("no bzip2 command (Go has no bzip2 writer): bzip2 not tested")
	}
	for i, k := range kinds {
		data := lines(i*3000, 3000)
		whole := k.compress(data)
		truth := filepath.Join(e.truth, k.name)
		for _, cut := range []int{12, len(whole) / 3, len(whole) * 2 / 3, len(whole) - 3} {
			ref := k.decompress(whole[:cut])
			counted := ref[:bytes.LastIndexByte(ref, '\n')+1]
			path := filepath.Join(e.arch, fmt.Sprintf("cut%d.%s", cut, k.ext))
			os.WriteFile(path, whole[:cut], 0o644)
			out, stderr, code := runCmd(t, "replay", "-config", e.conf, "-site", replaySite, "-format", "combined", path)
			want := fmt.Sprintf("%s (%s): damaged at decompressed byte %d: unexpected EOF", path, k.name, len(ref))
			if code == 0 || !strings.Contains(stderr, want) {
				t.Errorf("%s cut at %d of %d: exit %d, want an error %q\n%s\n%s", k.name, cut, len(whole), code, want, out, stderr)
			}
			wantStatus(t, out, "damaged", 1)
			os.WriteFile(truth, counted, 0o644)
			e.check(fmt.Sprintf("%s cut at %d of %d: the %d whole lines of %d bytes", k.name, cut, len(whole), bytes.Count(counted, []byte("\n")), len(ref)), filepath.Join(e.truth, "*"))
		}
		intact := filepath.Join(e.arch, "intact."+k.ext)
		os.WriteFile(intact, whole, 0o644)
		e.replay(e.conf, "-site", replaySite, "-format", "combined", intact)
		os.WriteFile(truth, data, 0o644)
		e.check(k.name+" intact after its damaged copies", filepath.Join(e.truth, "*"))
	}
}
