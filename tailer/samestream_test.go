package tailer

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtally/logtally/fnv1a"
	"github.com/logtally/logtally/stream"
)

// A file resumed from a restored checkpoint that the ledger says is counted
// further (a copy of it was replayed while the daemon was down) starts
// there, and commits that checkpoint before reading on; a file whose first
// bytes changed is not moved by the ledger of its old stream.
func TestResumeTakesTheLedgerWhenAhead(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.log")
	b := filepath.Join(dir, "b.log")
	appendLines(t, a, "a", 0, 20)
	appendLines(t, b, "b", 0, 10)
	off := func(path string, lines int, tag string) int64 {
		return int64(len(strings.Join(want(tag, 0, lines), "\n")) + 1)
	}
	dataA, _ := os.ReadFile(a)
	dataB, _ := os.ReadFile(b)
	mk := func(path string, data []byte, at int64) stream.Checkpoint {
		n := int(min(at, stream.FingerprintSize))
		return stream.Checkpoint{Source: "web", Path: path, File: idOf(t, path), Offset: at, FPLen: n, FPSum: fnv1a.Extend(fnv1a.Offset, data[:n])}
	}
	cpA := mk(a, dataA, off(a, 12, "a"))
	cpB := mk(b, dataB, off(b, 4, "b"))
	// b.log was rewritten with other content: its checkpoint is stale.
	os.Remove(b)
	appendLines(t, b, "c", 0, 10)
	cpB.File = idOf(t, b)
	ledgerA := off(a, 16, "a")
	cfg := realCfg("web", filepath.Join(dir, "*.log"))
	cfg.Checkpoints = []stream.Checkpoint{cpA, cpB}
	tailA := Position{Offset: ledgerA}
	tailA.TailLen, tailA.TailSum = stream.TailOf(dataA[:ledgerA])
	cfg.Counted = func(head []byte) []Position {
		switch {
		case bytes.HasPrefix(head, dataA[:10]):
			// Another stream beginning the same way, counted further
			// than a.log's bytes match; this file's, with its tail
			// check; an older logtally's at a line end it is behind.
			other := tailA
			other.Offset, other.TailSum = off(a, 18, "a"), 1
			return []Position{other, tailA, {Offset: off(a, 14, "a")}}
		case bytes.HasPrefix(head, dataB[:10]):
			return []Position{{Offset: 1 << 30}} // the old b.log's stream: not this file
		}
		return nil
	}
	h := start(t, cfg)
	h.waitFor("a.log from line 16, the new b.log whole", countLines(4+10))
	cs := h.stop()
	checkChunks(t, cs)
	idA := idOf(t, a)
	sameLines(t, "a.log", linesOf(cs, idA), want("a", 16, 20))
	sameLines(t, "b.log", linesOf(cs, idOf(t, b)), want("c", 0, 10))
	for _, c := range cs {
		if c.Checkpoint.File == idA {
			if c.Start != ledgerA || len(c.Data) != 0 || c.Checkpoint.Offset != ledgerA {
				t.Fatalf("a.log's first chunk: start %d, %d bytes, checkpoint %d; want the jump to %d committed first", c.Start, len(c.Data), c.Checkpoint.Offset, ledgerA)
			}
			break
		}
	}
}
