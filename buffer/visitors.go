package buffer

// Visitors: each host keeps, per site and salt period, the HyperLogLog
// sketch of the visitors it read (package visitor) and the registers it
// has sent to MongoDB. Commit merges new registers in with the counts and
// the checkpoints, in one transaction; the flusher sends the registers
// that rose (VisitorRises) before it acknowledges a batch and then marks
// them sent. A register is a maximum: sending it twice, or a rebuilt
// buffer sending it again, changes nothing.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/logtally/logtally/visitor"
)

var (
	bktVisitors = []byte("visitors") // VisitorKey -> sketchState
	bktSalts    = []byte("salts")    // period id -> salt and expiry
)

// sketchVersion is the first byte of a stored sketch: then the uvarint
// length of the registers' encoding, that encoding and the encoding of the
// registers sent (visitor.Sketch.AppendBinary: dense or sparse, whichever
// is shorter; a page's sketch is mostly sparse).
const sketchVersion = 2

// VisitorKey returns the buffer key of the sketch of site (page empty) or
// of one of its pages, for the salt period starting at start: the start
// (8 bytes, ordered), then the site's length, the site and the page.
func VisitorKey(start int64, site, page []byte) string {
	k := binary.BigEndian.AppendUint64(make([]byte, 0, 10+len(site)+len(page)), uint64(start)^(1<<63))
	k = binary.AppendUvarint(k, uint64(len(site)))
	return string(append(append(k, site...), page...))
}

// AppendVisitorKey is VisitorKey appending to dst (no allocation when dst
// has room).
func AppendVisitorKey(dst []byte, start int64, site, page []byte) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(start)^(1<<63))
	dst = binary.AppendUvarint(dst, uint64(len(site)))
	return append(append(dst, site...), page...)
}

// DecodeVisitorKey splits a VisitorKey.
func DecodeVisitorKey(k []byte) (start int64, site, page []byte, err error) {
	if len(k) < 9 {
		return 0, nil, nil, fmt.Errorf("bad visitor key (%d bytes)", len(k))
	}
	start = int64(binary.BigEndian.Uint64(k) ^ (1 << 63))
	n, w := binary.Uvarint(k[8:])
	if w <= 0 || uint64(len(k)-8-w) < n {
		return 0, nil, nil, fmt.Errorf("bad visitor key (%d bytes)", len(k))
	}
	rest := k[8+w:]
	return start, rest[:n], rest[n:], nil
}

// decodeSketch returns a stored sketch's registers and registers sent.
func decodeSketch(v []byte) (regs, sent *visitor.Sketch, err error) {
	if len(v) < 2 || v[0] != sketchVersion {
		return nil, nil, fmt.Errorf("bad stored sketch (%d bytes)", len(v))
	}
	n, w := binary.Uvarint(v[1:])
	if w <= 0 || uint64(len(v)-1-w) < n {
		return nil, nil, fmt.Errorf("bad stored sketch (%d bytes)", len(v))
	}
	body := v[1+w:]
	if regs, err = visitor.Decode(body[:n]); err != nil {
		return nil, nil, err
	}
	if sent, err = visitor.Decode(body[n:]); err != nil {
		return nil, nil, err
	}
	if regs.P != sent.P {
		return nil, nil, fmt.Errorf("stored sketch of precision %d, sent %d", regs.P, sent.P)
	}
	return regs, sent, nil
}

// encodeSketch encodes regs and sent for storage.
func encodeSketch(regs, sent *visitor.Sketch) ([]byte, error) {
	r, err := regs.AppendBinary(nil)
	if err != nil {
		return nil, err
	}
	v := binary.AppendUvarint([]byte{sketchVersion}, uint64(len(r)))
	v = append(v, r...)
	return sent.AppendBinary(v)
}

// emptyLike returns an empty sketch of s's precision and form.
func emptyLike(s *visitor.Sketch) *visitor.Sketch {
	if s.IsSparse() {
		return visitor.NewSparse(s.P)
	}
	return visitor.NewSketch(s.P)
}

// putSketches merges sketches (VisitorKey -> sketch) into tx's visitors.
func putSketches(tx *bolt.Tx, sketches map[string]*visitor.Sketch) error {
	vb := tx.Bucket(bktVisitors)
	for k, s := range sketches {
		regs, sent := s.Clone(), emptyLike(s)
		if old := vb.Get([]byte(k)); old != nil {
			oregs, osent, err := decodeSketch(old)
			if err != nil {
				return fmt.Errorf("a visitor sketch stored in the buffer: %w", err)
			}
			if oregs.P != s.P {
				return fmt.Errorf("a visitor sketch stored in the buffer: precision %d, stored %d", s.P, oregs.P)
			}
			regs.Merge(oregs)
			sent = osent
		}
		v, err := encodeSketch(regs, sent)
		if err != nil {
			return fmt.Errorf("a visitor sketch stored in the buffer: %w", err)
		}
		if err := vb.Put([]byte(k), v); err != nil {
			return fmt.Errorf("put visitors: %w", err)
		}
	}
	return nil
}

// Register is one HyperLogLog register: its index and value.
type Register struct {
	I uint32
	R uint8
}

// VisitorRise is a sketch's registers above what was sent.
type VisitorRise struct {
	Site  string
	Page  string // empty: the site's sketch
	Start int64  // the salt period's start
	P     uint8
	Regs  []Register
}

// VisitorRises returns, per site and period, the registers that rose
// since they were last sent (Tx.MarkVisitorsSent), in key order.
func (t *ReadTx) VisitorRises() ([]VisitorRise, error) {
	var out []VisitorRise
	vb := t.tx.Bucket(bktVisitors)
	if vb == nil {
		return nil, nil
	}
	err := vb.ForEach(func(k, v []byte) error {
		start, site, page, err := DecodeVisitorKey(k)
		if err != nil {
			return err
		}
		regs, sent, err := decodeSketch(v)
		if err != nil {
			return fmt.Errorf("visitors of %s%s: %w", site, page, err)
		}
		var rs []Register
		regs.RisenFrom(sent, func(i int, r uint8) { rs = append(rs, Register{uint32(i), r}) })
		if len(rs) > 0 {
			out = append(out, VisitorRise{Site: string(site), Page: string(page), Start: start, P: regs.P, Regs: rs})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read visitors: %w", err)
	}
	return out, nil
}

// MarkVisitorsSent records rs as sent: each register's sent value becomes
// at least what rs says.
func (t *Tx) MarkVisitorsSent(rs []VisitorRise) error {
	err := func() error {
		vb := t.tx.Bucket(bktVisitors)
		for _, r := range rs {
			k := []byte(VisitorKey(r.Start, []byte(r.Site), []byte(r.Page)))
			old := vb.Get(k)
			if old == nil {
				continue // dropped meanwhile
			}
			regs, sent, err := decodeSketch(old)
			if err != nil {
				return fmt.Errorf("visitors of %s%s: %w", r.Site, r.Page, err)
			}
			for _, g := range r.Regs {
				if _, err := sent.SetMax(int(g.I), g.R); err != nil {
					return fmt.Errorf("visitors of %s%s: %w", r.Site, r.Page, err)
				}
			}
			v, err := encodeSketch(regs, sent)
			if err != nil {
				return err
			}
			if err := vb.Put(k, v); err != nil {
				return err
			}
		}
		return nil
	}()
	if err != nil {
		return fmt.Errorf("mark visitors sent: %w", err)
	}
	return nil
}

// DropVisitors deletes the sketches of the periods that started before
// before whose registers were all sent, and returns how many it deleted.
func (t *Tx) DropVisitors(before int64) (int, error) {
	n := 0
	err := func() error {
		c := t.tx.Bucket(bktVisitors).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			start, _, _, err := DecodeVisitorKey(k)
			if err != nil {
				return err
			}
			if start >= before {
				break // keys are ordered by start
			}
			regs, sent, err := decodeSketch(v)
			if err != nil {
				continue
			}
			risen := false
			regs.RisenFrom(sent, func(int, uint8) { risen = true })
			if risen {
				continue
			}
			if err := c.Delete(); err != nil {
				return err
			}
			n++
		}
		return nil
	}()
	if err != nil {
		return 0, fmt.Errorf("drop visitors: %w", err)
	}
	return n, nil
}

// SaltEntry is a salt the host holds: its period, key and the time it must
// be forgotten.
type SaltEntry struct {
	ID      string // visitor.Period.ID
	Salt    visitor.Salt
	Expires time.Time
}

// PutSalt stores e (replacing an entry of the same period).
func (t *Tx) PutSalt(e SaltEntry) error {
	v := append(e.Salt[:0:0], e.Salt[:]...)
	v = binary.BigEndian.AppendUint64(v, uint64(e.Expires.UnixNano()))
	if err := t.tx.Bucket(bktSalts).Put([]byte(e.ID), v); err != nil {
		return fmt.Errorf("put salt %s: %w", e.ID, err)
	}
	return nil
}

// Salts returns the salts stored.
func (t *ReadTx) Salts() ([]SaltEntry, error) {
	var out []SaltEntry
	sb := t.tx.Bucket(bktSalts)
	if sb == nil {
		return nil, nil
	}
	err := sb.ForEach(func(k, v []byte) error {
		if len(v) != 16+8 {
			return fmt.Errorf("bad salt %s", k)
		}
		e := SaltEntry{ID: string(k), Expires: time.Unix(0, int64(binary.BigEndian.Uint64(v[16:])))}
		copy(e.Salt[:], v)
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read salts: %w", err)
	}
	return out, nil
}

// DeleteSalt forgets the salt of period id.
func (t *Tx) DeleteSalt(id string) error {
	if err := t.tx.Bucket(bktSalts).Delete([]byte(id)); err != nil {
		return fmt.Errorf("delete salt %s: %w", id, err)
	}
	return nil
}

// VisitorEstimate is this host's estimate of a site's visitors in one
// salt period, from the registers its buffer holds.
type VisitorEstimate struct {
	Site     string
	Estimate float64
	P        uint8 // the sketch's precision: its error is visitor.StdError(P)
}

// VisitorEstimates returns the estimates of the sketches of the period
// starting at start, the first limit sites in key order (limit <= 0:
// all). They count what this host read since its sketch began (a rebuilt
// buffer: since the rebuild), not the fleet's.
func (t *ReadTx) VisitorEstimates(start int64, limit int) ([]VisitorEstimate, error) {
	var out []VisitorEstimate
	vb := t.tx.Bucket(bktVisitors)
	if vb == nil {
		return nil, nil
	}
	prefix := binary.BigEndian.AppendUint64(nil, uint64(start)^(1<<63))
	c := vb.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if limit > 0 && len(out) == limit {
			break
		}
		_, site, page, err := DecodeVisitorKey(k)
		if err != nil {
			return nil, fmt.Errorf("read visitors: %w", err)
		}
		if len(page) > 0 {
			continue // a page's sketch
		}
		regs, _, err := decodeSketch(v)
		if err != nil {
			return nil, fmt.Errorf("read visitors: visitors of %s: %w", site, err)
		}
		out = append(out, VisitorEstimate{Site: string(site), Estimate: regs.Estimate(), P: regs.P})
	}
	return out, nil
}
