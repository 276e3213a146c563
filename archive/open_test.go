package archive

import (
	"bytes"
	"compress/bzip2"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Open tells the compression by the first bytes, not the name, and every
// kind reads back the same lines.
func TestOpenByMagicBytes(t *testing.T) {
	bz, err := os.ReadFile("../testdata/compressed/access.log.bz2")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(bzip2.NewReader(bytes.NewReader(bz)))
	if err != nil || len(plain) == 0 {
		t.Fatalf("fixture: %v", err)
	}
	var gz, zs bytes.Buffer
	gw := gzip.NewWriter(&gz)
	gw.Write(plain[:len(plain)/2])
	gw.Close()
	gw = gzip.NewWriter(&gz) // a second member, as `cat a.gz b.gz` makes
	gw.Write(plain[len(plain)/2:])
	gw.Close()
	zw, _ := zstd.NewWriter(&zs)
	zw.Write(plain)
	zw.Close()

	dir := t.TempDir()
	for _, tc := range []struct {
		name string // deliberately misleading names
		data []byte
		want Compression
	}{
		{"plain.gz", plain, Plain},
		{"gzip.log", gz.Bytes(), Gzip},
		{"zstd.log.1", zs.Bytes(), Zstd},
		{"bzip2.gz", bz, Bzip2},
	} {
		path := filepath.Join(dir, tc.name)
		os.WriteFile(path, tc.data, 0o644)
		r, kind, err := Open(path)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if kind != tc.want || !bytes.Equal(got, plain) {
			t.Errorf("%s: kind %s, %d bytes; want %s, %d bytes", tc.name, kind, len(got), tc.want, len(plain))
		}
	}
	// A corrupt gzip is an error naming the file, not a silent empty read.
	bad := filepath.Join(dir, "bad.gz")
	os.WriteFile(bad, []byte{0x1f, 0x8b, 0, 0}, 0o644)
	if r, _, err := Open(bad); err == nil {
		_, err = io.ReadAll(r)
		if err == nil {
			t.Error("a corrupt gzip read without error")
		}
	}
}
