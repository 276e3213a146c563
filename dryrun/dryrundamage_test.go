package dryrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/logtally/logtally/archive"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/stream"
)

// compressAll returns data gzipped, zstd-compressed and (when the bzip2
// command is there: Go has no bzip2 writer) bzip2-compressed, by kind
// (archive's tests have the same).
func compressAll(t *testing.T, data []byte) map[archive.Compression][]byte {
	t.Helper()
	var gz, zs bytes.Buffer
	gw := gzip.NewWriter(&gz)
	gw.Write(data)
	gw.Close()
	zw, _ := zstd.NewWriter(&zs, zstd.WithWindowSize(1<<17))
	zw.Write(data)
	zw.Close()
	out := map[archive.Compression][]byte{archive.Gzip: gz.Bytes(), archive.Zstd: zs.Bytes()}
	cmd := exec.Command("bzip2", "-1", "-c") // 100 kB blocks: several
	cmd.Stdin = bytes.NewReader(data)
	if bz, err := cmd.Output(); err == nil {
		out[archive.Bzip2] = bz
	} else {
		t.Logf("no bzip2 command (%v): bzip2 not tested", err)
	}
	return out
}

// The dry run reads a truncated archive by the rule archive.Stream
// follows (archive's TestDamagedArchiveStopsAtLastWholeLine): the whole
// lines before the damage, and a *DamagedError at the same offset.
func TestDamagedArchiveDryRun(t *testing.T) {
	var b bytes.Buffer
	for i := range 6000 {
		fmt.Fprintf(&b, "10.0.0.%d - - [01/Mar/2026:10:%02d:%02d +0000] \"GET /p%d HTTP/1.1\" 200 1 \"-\" \"t\"\n", i%250, i/60%60, i%60, i%3)
	}
	dir := t.TempDir()
	for kind, whole := range compressAll(t, b.Bytes()) {
		for _, cut := range []int{len(whole) - 1, len(whole) - 5, len(whole) * 2 / 3, len(whole) / 3, 40, 12} {
			name := fmt.Sprintf("%s cut at %d of %d", kind, cut, len(whole))
			path := filepath.Join(dir, fmt.Sprintf("cut%d.%s", cut, kind))
			os.WriteFile(path, whole[:cut], 0o644)
			head, _, _ := archive.Head(path)
			out := make(chan stream.Chunk)
			var c archive.Counters
			var serr error
			go func() {
				_, serr = archive.Stream(context.Background(), path, "src", head, 0, false, 1<<20, out, &c)
				close(out)
			}()
			for ch := range out {
				ch.Release()
			}
			var want *archive.DamagedError
			if !errors.As(serr, &want) {
				t.Fatalf("%s: Stream: %v, want a DamagedError", name, serr)
			}

			p, _ := parser.New(parser.Config{Site: "s", Format: "combined"})
			dr := New(p, 1<<20, io.Discard)
			err := dr.ReadFile(path)
			var d *archive.DamagedError
			if !errors.As(err, &d) || d.Offset != want.Offset || dr.lines() != uint64(c.Lines.Load()) {
				t.Errorf("%s: dry run: %d lines, %v; want %d lines, damaged at %d", name, dr.lines(), err, c.Lines.Load(), want.Offset)
			}
		}
	}
}
