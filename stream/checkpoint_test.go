package stream

import (
	"encoding/hex"
	"hash/fnv"
	"slices"
	"testing"

	"github.com/logtally/logtally/fnv1a"
)

func TestCheckpointRoundTrip(t *testing.T) {
	for _, cp := range []Checkpoint{
		{},
		{Source: "web", Path: "/var/log/nginx/access.log", File: FileID{Dev: 2049, Ino: 1 << 40}, Offset: 1 << 35, FPLen: FingerprintSize, FPSum: 1<<64 - 1},
		{Source: "a\x00b", Path: "x", File: FileID{Ino: 7}, Offset: 12, FPLen: 12, FPSum: 99},
		{Source: "web", Path: "p", File: FileID{Dev: 1, Ino: 2}, Offset: 5000, FPLen: FingerprintSize, FPSum: 3, TailLen: TailSize, TailSum: 1<<64 - 2, Stream: 1<<64 - 3},
	} {
		b, err := cp.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if b[0] != checkpointVersion {
			t.Fatalf("version byte %d", b[0])
		}
		var got Checkpoint
		if err := got.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		if got != cp {
			t.Fatalf("got %+v, want %+v", got, cp)
		}
		for i := range b { // every truncation is an error, never a panic
			if err := new(Checkpoint).UnmarshalBinary(b[:i]); err == nil {
				t.Fatalf("truncated at %d accepted", i)
			}
		}
		if err := new(Checkpoint).UnmarshalBinary(append(slices.Clone(b), 0)); err == nil {
			t.Fatal("trailing byte accepted")
		}
		bad := slices.Clone(b)
		bad[0] = checkpointVersion + 1
		if err := new(Checkpoint).UnmarshalBinary(bad); err == nil {
			t.Fatal("unknown version accepted")
		}
	}
	if _, err := (Checkpoint{FPLen: FingerprintSize + 1}).MarshalBinary(); err == nil {
		t.Fatal("out-of-range FPLen marshalled")
	}
	if _, err := (Checkpoint{Offset: 10, TailLen: 11}).MarshalBinary(); err == nil {
		t.Fatal("tail longer than the offset marshalled")
	}
}

func TestCheckpointKey(t *testing.T) {
	a := Checkpoint{Source: "web", File: FileID{Dev: 1, Ino: 23}}
	b := Checkpoint{Source: "web", File: FileID{Dev: 12, Ino: 3}}
	c := Checkpoint{Source: "web2", File: FileID{Dev: 1, Ino: 23}}
	if a.Key() == b.Key() || a.Key() == c.Key() {
		t.Fatalf("keys collide: %q %q %q", a.Key(), b.Key(), c.Key())
	}
	moved := a
	moved.Offset, moved.Path = 100, "/elsewhere"
	if moved.Key() != a.Key() {
		t.Fatal("key depends on offset or path")
	}
}

func TestFNVMatchesStdlib(t *testing.T) {
	data := []byte("10.0.0.1 - - [01/Jan/2024:00:00:00 +0000] \"GET / HTTP/1.1\" 200 5\n")
	h := fnv.New64a()
	h.Write(data)
	if got := fnv1a.Extend(fnv1a.Extend(fnv1a.Offset, data[:10]), data[10:]); got != h.Sum64() {
		t.Fatalf("fnvExtend = %x, want %x", got, h.Sum64())
	}
}

// Checkpoints are stored (bbolt's checkpoints bucket, a batch's finished
// files): their encoding must read the same in every later version.
func TestCheckpointEncodingPinned(t *testing.T) {
	cp := Checkpoint{Source: "web", Path: "/l/a.log", File: FileID{Dev: 2049, Ino: 1 << 40}, Offset: 5000, FPLen: 1024, FPSum: 0xabc, TailLen: 1024, TailSum: 0xdef, Stream: 1<<64 - 1}
	const want = "020377656208" + "2f6c2f612e6c6f67" + "8110" + "808080808020" + "8827" + "8008" + "bc15" + "8008" + "ef1b" + "ffffffffffffffffff01"
	b, err := cp.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(b); got != want {
		t.Fatalf("encoding %s, want %s", got, want)
	}
	if got := hex.EncodeToString([]byte(cp.Key())); got != hex.EncodeToString([]byte("web\x002049:1099511627776")) {
		t.Fatalf("key %q", cp.Key())
	}
	// Version 1, an older logtally's: no tail check, no stream.
	v1, _ := hex.DecodeString("010377656208" + "2f6c2f612e6c6f67" + "8110" + "808080808020" + "8827" + "8008" + "bc15")
	var got Checkpoint
	if err := got.UnmarshalBinary(v1); err != nil {
		t.Fatal(err)
	}
	if old := (Checkpoint{Source: "web", Path: "/l/a.log", File: cp.File, Offset: 5000, FPLen: 1024, FPSum: 0xabc}); got != old {
		t.Fatalf("version 1: %+v, want %+v", got, old)
	}
}
