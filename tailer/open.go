package tailer

import (
	"cmp"
	"errors"
	"io"
	"log/slog"
	"os"
	"slices"

	"github.com/logtally/logtally/fnv1a"
	"github.com/logtally/logtally/stream"
)

// Opening: a file opened as a follower, at its checkpoint or where the
// ledger says its stream is counted (Config.Counted).

// openFollower opens path and checks it is still the file id.
func (pr *prospector) openFollower(path string, id stream.FileID, cp stream.Checkpoint) (*follower, error) {
	f, st, err := openID(pr.disc.open, path, id)
	if err != nil {
		return nil, err
	}
	if pr.cfg.Counted != nil {
		cp = pr.ledger.counted(f, path, st.Size(), cp)
	}
	fpLen, fpSum := cp.FPLen, cp.FPSum
	if fpLen == 0 {
		fpSum = fnv1a.Offset
	}
	head := make([]byte, fpLen)
	n, _ := f.ReadAt(head, 0) // a short read shows as a fingerprint mismatch later
	head = head[:n]
	pr.slots.open.Add(1)
	fl := &follower{
		cfg: &pr.fcfg, log: pr.log, out: pr.out,
		f: f, id: id, path: path, base: path,
		off: cp.Offset, pos: cp.Offset,
		fpLen: fpLen, fpSum: fpSum, head: head,
		stream: cp.Stream,
		pub:    published{path: path},
	}
	if fl.stream == 0 { // a new file, or a checkpoint of an older logtally
		fl.stream = stream.NewID()
	}
	fl.setTail(nil)
	pr.slots.planOpened(fl)
	return fl, nil
}

// ledgerView asks the ledger (Config.Counted) where a file's stream is
// counted, and takes a position only where the file's bytes pass its tail
// check.
type ledgerView struct {
	ask func(head []byte) []Position // Config.Counted
	log *logger
}

// lineEndAt reports whether off is a line end of f (size bytes): the byte
// before it is '\n'.
func lineEndAt(f *os.File, off, size int64) bool {
	if off <= 0 || off > size {
		return false
	}
	var b [1]byte
	n, _ := f.ReadAt(b[:], off-1)
	return n == 1 && b[0] == '\n'
}

// counted returns the checkpoint a file starts from: cp (a restored
// checkpoint, or one at 0 for a file found without one), or, when
// the ledger (Config.Counted) says its stream is counted further (a replay of a copy of
// it, or an earlier run that forgot it), that offset (countedAt). A
// restored checkpoint whose file no longer begins with its fingerprint, or
// is shorter than its offset, is left as it is: the rotation rules settle
// it.
func (lv *ledgerView) counted(f *os.File, path string, size int64, cp stream.Checkpoint) stream.Checkpoint {
	if size < cp.Offset {
		return cp
	}
	var buf [stream.FingerprintSize]byte
	n, err := f.ReadAt(buf[:min(int64(stream.FingerprintSize), size)], 0)
	if n == 0 || err != nil && !errors.Is(err, io.EOF) {
		return cp
	}
	head := buf[:n]
	restored := cp.FPLen > 0
	if restored && !stream.Same(cp, head) {
		return cp
	}
	off := lv.countedAt(f, path, size, lv.ask(head))
	if off <= cp.Offset {
		return cp
	}
	if restored {
		lv.log.Info("checkpoint behind the ledger (a copy of the file was counted): starting where the ledger says",
			"path", path, "checkpoint", cp.Offset, "offset", off, "size", size)
	} else {
		lv.log.Info("file already counted in part: starting where the ledger says", "path", path, "offset", off, "size", size)
	}
	cp.Offset = off
	cp.FPLen = int(min(off, stream.FingerprintSize))
	cp.FPSum = fnv1a.Extend(fnv1a.Offset, buf[:cp.FPLen])
	return cp
}

// countedAt returns the furthest of ps that is a position of the file f
// (size bytes, at path), 0 when none is. A position is the file's when it
// lies within the file and the file's bytes that end there pass its tail
// check (one without a check, an older logtally's: when it is a line end
// of the file). One beyond the file's end cannot be checked and is not
// taken: the file begins like a stream counted further, but a new file
// with the same first lines is shorter too. Each position not taken is
// logged with the rule that decided.
func (lv *ledgerView) countedAt(f *os.File, path string, size int64, ps []Position) int64 {
	slices.SortFunc(ps, func(a, b Position) int { return cmp.Compare(b.Offset, a.Offset) })
	for _, p := range ps {
		switch {
		case p.Offset <= 0:
			return 0
		case p.Offset > size:
			lv.log.Info("the ledger says a stream beginning like this file is counted further than the file is long: another file, or a shorter copy, not moved there (its bytes there cannot be compared)",
				"path", path, "ledger", p.Offset, "size", size)
			continue
		case p.TailLen == 0:
			if lineEndAt(f, p.Offset, size) {
				return p.Offset
			}
			lv.log.Info("the ledger says a stream beginning like this file is counted to an offset that is not a line end of it: another file, not moved there",
				"path", path, "ledger", p.Offset, "size", size)
			continue
		}
		ok, err := stream.TailMatches(f, stream.Checkpoint{Offset: p.Offset, TailLen: p.TailLen, TailSum: p.TailSum})
		if err != nil {
			lv.log.logErr("tail "+path, slog.LevelWarn, "cannot read the file where the ledger says it is counted: not moved there", "path", path, "err", err)
			continue
		}
		if ok {
			return p.Offset
		}
		lv.log.Info("the ledger says a stream beginning like this file is counted to an offset where this file's bytes differ: another file, not moved there (tail check)",
			"path", path, "ledger", p.Offset, "size", size)
	}
	return 0
}
