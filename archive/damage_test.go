package archive

import (
	"bytes"
	"compress/bzip2"
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

	"github.com/logtally/logtally/stream"
)

// compressAll returns data gzipped, zstd-compressed and (when the bzip2
// command is there: Go has no bzip2 writer) bzip2-compressed, by kind.
func compressAll(t *testing.T, data []byte) map[Compression][]byte {
	t.Helper()
	var gz, zs bytes.Buffer
	gw := gzip.NewWriter(&gz)
	gw.Write(data)
	gw.Close()
	zw, _ := zstd.NewWriter(&zs, zstd.WithWindowSize(1<<17))
	zw.Write(data)
	zw.Close()
	out := map[Compression][]byte{Gzip: gz.Bytes(), Zstd: zs.Bytes()}
	cmd := exec.Command("bzip2", "-1", "-c") // 100 kB blocks: several
	cmd.Stdin = bytes.NewReader(data)
	if bz, err := cmd.Output(); err == nil {
		out[Bzip2] = bz
	} else {
		t.Logf("no bzip2 command (%v): bzip2 not tested", err)
	}
	return out
}

// decompressed returns what the library's own decompressor gives of a
// (damaged) file before its error: the reference, independent of Open.
func decompressed(t *testing.T, kind Compression, data []byte) []byte {
	t.Helper()
	var r io.Reader
	switch kind {
	case Gzip:
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil
		}
		r = zr
	case Zstd:
		zr, err := zstd.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil
		}
		defer zr.Close()
		r = zr
	case Bzip2:
		r = bzip2.NewReader(bytes.NewReader(data))
	}
	var out bytes.Buffer
	io.Copy(&out, r)
	return out.Bytes()
}

// streamLines runs Stream and returns the bytes of the lines it sent.
func streamLines(t *testing.T, path string, head []byte, from int64, live bool) ([]byte, int64, error) {
	t.Helper()
	out := make(chan stream.Chunk)
	var c Counters
	var end int64
	var err error
	go func() {
		end, err = Stream(context.Background(), path, "src", head, from, live, 1<<20, out, &c)
		close(out)
	}()
	var got bytes.Buffer
	pos := from
	for ch := range out {
		if ch.Start != pos {
			t.Fatalf("%s: chunk at %d, want %d", path, ch.Start, pos)
		}
		got.Write(ch.Data)
		pos = ch.Checkpoint.Offset
		ch.Release()
	}
	if pos != max(end, from) && got.Len() > 0 {
		t.Fatalf("%s: last checkpoint %d, end %d", path, pos, end)
	}
	return got.Bytes(), end, err
}

// A truncated archive (gzip, zstd, bzip2; cut mid-line, mid-block, in its
// header, just before its trailer) is an error naming the file and the
// decompressed offset reached: Stream sends the whole lines before the
// damage and not the cut-off one (the dry run counts the same lines:
// dryrun's TestDamagedArchiveDryRun), and the intact archive streamed from where the damaged one stopped completes it
// exactly.
func TestDamagedArchiveStopsAtLastWholeLine(t *testing.T) {
	var b bytes.Buffer
	for i := range 6000 {
		fmt.Fprintf(&b, "10.0.0.%d - - [01/Mar/2026:10:%02d:%02d +0000] \"GET /p%d HTTP/1.1\" 200 1 \"-\" \"t\"\n", i%250, i/60%60, i%60, i%3)
	}
	plain := b.Bytes()
	dir := t.TempDir()
	for kind, whole := range compressAll(t, plain) {
		intact := filepath.Join(dir, "intact."+string(kind))
		os.WriteFile(intact, whole, 0o644)
		for _, cut := range []int{len(whole) - 1, len(whole) - 5, len(whole) * 2 / 3, len(whole) / 3, 40, 12} {
			name := fmt.Sprintf("%s cut at %d of %d", kind, cut, len(whole))
			ref := decompressed(t, kind, whole[:cut])
			wantLines := ref[:bytes.LastIndexByte(ref, '\n')+1]
			path := filepath.Join(dir, fmt.Sprintf("cut%d.%s", cut, kind))
			os.WriteFile(path, whole[:cut], 0o644)

			head, _, herr := Head(path)
			if herr != nil && !IsDamaged(herr) {
				t.Fatalf("%s: head: %v", name, herr)
			}
			got, end, err := streamLines(t, path, head, 0, false)
			var d *DamagedError
			if !errors.As(err, &d) || d.Path != path || d.Offset != int64(len(ref)) {
				t.Fatalf("%s: err %v, want a DamagedError at %d", name, err, len(ref))
			}
			if !bytes.Contains([]byte(err.Error()), []byte(fmt.Sprintf("%s (%s): damaged at decompressed byte %d", path, kind, len(ref)))) {
				t.Errorf("%s: error %q", name, err)
			}
			if !bytes.Equal(got, wantLines) || end != int64(len(wantLines)) {
				t.Fatalf("%s: sent %d bytes to %d, want the %d bytes of whole lines", name, len(got), end, len(wantLines))
			}

			// The intact archive, from where it stopped, sends the rest.
			ihead, _, _ := Head(intact)
			rest, iend, err := streamLines(t, intact, ihead, end, false)
			if err != nil || iend != int64(len(plain)) || !bytes.Equal(append(bytes.Clone(got), rest...), plain) {
				t.Fatalf("%s: the intact archive from %d: %d bytes to %d, %v", name, end, len(rest), iend, err)
			}
		}
	}
}

// A corrupt archive (a byte changed in the middle) is damaged too. (What
// the decompressor gave before its checksum failed, at the end of a gzip
// member or a zstd frame, was already sent: a checksum cannot be checked
// earlier.)
func TestCorruptArchiveIsDamaged(t *testing.T) {
	var b bytes.Buffer
	for i := range 20000 {
		fmt.Fprintf(&b, "line %d of a log, %d\n", i, i*7919%1000)
	}
	dir := t.TempDir()
	for kind, whole := range compressAll(t, b.Bytes()) {
		bad := bytes.Clone(whole)
		bad[len(bad)/2] ^= 0x55
		path := filepath.Join(dir, "bad."+string(kind))
		os.WriteFile(path, bad, 0o644)
		head, _, _ := Head(path)
		got, end, err := streamLines(t, path, head, 0, false)
		if !IsDamaged(err) || int64(len(got)) != end || got[len(got)-1] != '\n' {
			t.Errorf("%s corrupt: %d bytes to %d, %v", kind, len(got), end, err)
		}
	}
}

// A live stream (a copy of a followed file) leaves its unterminated last
// line to the tailer; a finished one counts it.
func TestStreamLiveLeavesUnterminatedLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.log")
	os.WriteFile(path, []byte("one\ntwo\nthr"), 0o644)
	head, _, _ := Head(path)
	got, end, err := streamLines(t, path, head, 0, true)
	if err != nil || string(got) != "one\ntwo\n" || end != 8 {
		t.Errorf("live: %q to %d, %v", got, end, err)
	}
	got, end, err = streamLines(t, path, head, 4, false)
	if err != nil || string(got) != "two\nthr" || end != 11 {
		t.Errorf("finished: %q to %d, %v", got, end, err)
	}
}
