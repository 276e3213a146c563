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

// sketchVersion is the first byte of a stored sketch: then its precision,
// its registers, the registers sent.
const sketchVersion = 1

// VisitorKey returns the buffer key of site's sketch of the salt period
// starting at start: the start (8 bytes, ordered) then the site.
func VisitorKey(start int64, site []byte) string {
	k := binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(site)), uint64(start)^(1<<63))
	return string(append(k, site...))
}

// DecodeVisitorKey splits a VisitorKey.
func DecodeVisitorKey(k []byte) (start int64, site []byte, err error) {
	if len(k) < 8 {
		return 0, nil, fmt.Errorf("bad visitor key %x", k)
	}
	return int64(binary.BigEndian.Uint64(k) ^ (1 << 63)), k[8:], nil
}

// decodeSketch splits a stored sketch into its precision, registers and
// sent registers (aliasing v).
func decodeSketch(v []byte) (p uint8, regs, sent []byte, err error) {
	if len(v) < 2 || v[0] != sketchVersion || v[1] > 18 || len(v) != 2+2<<v[1] {
		return 0, nil, nil, fmt.Errorf("bad stored sketch (%d bytes)", len(v))
	}
	n := 1 << v[1]
	return v[1], v[2 : 2+n], v[2+n:], nil
}

// putSketches merges sketches (VisitorKey -> sketch) into tx's visitors.
func putSketches(tx *bolt.Tx, sketches map[string]*visitor.Sketch) error {
	vb := tx.Bucket(bktVisitors)
	for k, s := range sketches {
		s.Dense()
		n := 1 << s.P
		v := make([]byte, 2+2*n)
		v[0], v[1] = sketchVersion, s.P
		if old := vb.Get([]byte(k)); old != nil {
			p, regs, sent, err := decodeSketch(old)
			if err != nil {
				return fmt.Errorf("visitors of key %x: %w", k, err)
			}
			if p != s.P {
				return fmt.Errorf("visitors of key %x: precision %d, stored %d", k, s.P, p)
			}
			copy(v[2:], regs)
			copy(v[2+n:], sent)
		}
		regs := v[2 : 2+n]
		for i, r := range s.R {
			regs[i] = max(regs[i], r)
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
	Start int64 // the salt period's start
	P     uint8
	Regs  []Register
}

// VisitorRises returns, per site and period, the registers that rose
// since they were last sent (MarkVisitorsSent), in key order.
func (b *Buffer) VisitorRises() ([]VisitorRise, error) {
	var out []VisitorRise
	err := b.view(func(tx *bolt.Tx) error {
		vb := tx.Bucket(bktVisitors)
		if vb == nil {
			return nil
		}
		return vb.ForEach(func(k, v []byte) error {
			start, site, err := DecodeVisitorKey(k)
			if err != nil {
				return err
			}
			p, regs, sent, err := decodeSketch(v)
			if err != nil {
				return fmt.Errorf("visitors of %s: %w", site, err)
			}
			var rs []Register
			for i, r := range regs {
				if r > sent[i] {
					rs = append(rs, Register{uint32(i), r})
				}
			}
			if len(rs) > 0 {
				out = append(out, VisitorRise{Site: string(site), Start: start, P: p, Regs: rs})
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("read visitors: %w", err)
	}
	return out, nil
}

// MarkVisitorsSent records rs as sent: each register's sent value becomes
// at least what rs says.
func (b *Buffer) MarkVisitorsSent(rs []VisitorRise) error {
	err := b.update(func(tx *bolt.Tx) error {
		vb := tx.Bucket(bktVisitors)
		for _, r := range rs {
			k := []byte(VisitorKey(r.Start, []byte(r.Site)))
			old := vb.Get(k)
			if old == nil {
				continue // dropped meanwhile
			}
			v := bytes.Clone(old)
			_, _, sent, err := decodeSketch(v)
			if err != nil {
				return fmt.Errorf("visitors of %s: %w", r.Site, err)
			}
			for _, g := range r.Regs {
				sent[g.I] = max(sent[g.I], g.R)
			}
			if err := vb.Put(k, v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("mark visitors sent: %w", err)
	}
	return nil
}

// DropVisitors deletes the sketches of the periods that started before
// before whose registers were all sent, and returns how many it deleted.
func (b *Buffer) DropVisitors(before int64) (int, error) {
	n := 0
	err := b.update(func(tx *bolt.Tx) error {
		c := tx.Bucket(bktVisitors).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			start, _, err := DecodeVisitorKey(k)
			if err != nil {
				return err
			}
			if start >= before {
				break // keys are ordered by start
			}
			_, regs, sent, err := decodeSketch(v)
			if err != nil || !allSent(regs, sent) {
				continue
			}
			if err := c.Delete(); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("drop visitors: %w", err)
	}
	return n, nil
}

func allSent(regs, sent []byte) bool {
	for i := range regs {
		if regs[i] > sent[i] {
			return false
		}
	}
	return true
}

// SaltEntry is a salt the host holds: its period, key and the time it must
// be forgotten.
type SaltEntry struct {
	ID      string // visitor.Period.ID
	Salt    visitor.Salt
	Expires time.Time
}

// PutSalt stores e (replacing an entry of the same period).
func (b *Buffer) PutSalt(e SaltEntry) error {
	v := append(e.Salt[:0:0], e.Salt[:]...)
	v = binary.BigEndian.AppendUint64(v, uint64(e.Expires.UnixNano()))
	err := b.update(func(tx *bolt.Tx) error { return tx.Bucket(bktSalts).Put([]byte(e.ID), v) })
	if err != nil {
		return fmt.Errorf("put salt %s: %w", e.ID, err)
	}
	return nil
}

// Salts returns the salts stored.
func (b *Buffer) Salts() ([]SaltEntry, error) {
	var out []SaltEntry
	err := b.view(func(tx *bolt.Tx) error {
		sb := tx.Bucket(bktSalts)
		if sb == nil {
			return nil
		}
		return sb.ForEach(func(k, v []byte) error {
			if len(v) != 16+8 {
				return fmt.Errorf("bad salt %s", k)
			}
			e := SaltEntry{ID: string(k), Expires: time.Unix(0, int64(binary.BigEndian.Uint64(v[16:])))}
			copy(e.Salt[:], v)
			out = append(out, e)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("read salts: %w", err)
	}
	return out, nil
}

// DeleteSalt forgets the salt of period id.
func (b *Buffer) DeleteSalt(id string) error {
	err := b.update(func(tx *bolt.Tx) error { return tx.Bucket(bktSalts).Delete([]byte(id)) })
	if err != nil {
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
func (b *Buffer) VisitorEstimates(start int64, limit int) ([]VisitorEstimate, error) {
	var out []VisitorEstimate
	prefix := []byte(VisitorKey(start, nil))
	err := b.view(func(tx *bolt.Tx) error {
		vb := tx.Bucket(bktVisitors)
		if vb == nil {
			return nil
		}
		c := vb.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if limit > 0 && len(out) == limit {
				break
			}
			p, regs, _, err := decodeSketch(v)
			if err != nil {
				return fmt.Errorf("visitors of %s: %w", k[8:], err)
			}
			s := visitor.NewSketch(p)
			copy(s.R, regs)
			out = append(out, VisitorEstimate{Site: string(k[8:]), Estimate: s.Estimate(), P: p})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read visitors: %w", err)
	}
	return out, nil
}
