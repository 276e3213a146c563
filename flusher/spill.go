package flusher

// Spills: a tail's share of a batch that the tail cannot take, written to
// documents of its own (bucket.Tail.Spill), so that no tail nears
// MongoDB's 16 MiB and no batch waits on one (docs/buckets.md, "Hot and
// cold pages").
//
// Why exactly once. Which documents hold a batch's counts of a tail T
// must be the same on every attempt at that batch (a retry, a resume, a
// rebuild, a batch sent twice), or some attempt would write them twice:
//   - A share that does not fit one update (Split: over part or statement
//     bytes) is decided from the batch and the plan alone, both fixed: it
//     goes to the spill in parts, every attempt, and T never sees it.
//   - Otherwise T's update is guarded and bounded: it applies only where
//     T lacks the batch and its size, with the update's growth, is within
//     the bound (bucket.Tail.Update), in one document write. T's size
//     only grows (every update adds its growth; expiry deletes whole
//     documents, past the retention, when the flusher no longer writes
//     that level), and so does its BSON: an update that finds no room, or
//     that the server refuses as too large (a refused update applied
//     nothing), finds none on any later attempt, nor does an update of
//     this batch still in flight from an earlier one. So T is judged full
//     only when it does not carry the batch and cannot ever take it, and
//     then every attempt judges it full.
//   - A spill document is the batch's and the part's alone (its marker
//     names the writer and the batch), inserted whole: an insert is
//     atomic, and a duplicate key means an earlier attempt put it in.
//
// A proactive bound kept in this process's memory (the bytes this host
// added to each tail) would not do: it is lost at a restart and unknown
// to the other writers, so two attempts could judge T differently, and an
// update of an earlier attempt still in flight could apply after a later
// attempt spilled. The bound is the tail's own size, in the document,
// tested by the server in the update's filter.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/logtally/logtally/bucket"
)

// tailBounds are the sizes a batch's writes of tails keep within, in
// bytes.
type tailBounds struct {
	// tail bounds a tail's size (bucket.Tail.Limit): its entries and
	// applied map, as its updates' growths add up.
	tail int64
	// part bounds one update's (or spill document's) growth: a batch's
	// entries of one tail as a new tail holds them.
	part int64
	// statement bounds the entries of one update's statement (their
	// dotted paths).
	statement int64
}

// defaultTailBounds keep a tail under a quarter of MongoDB's 16 MiB
// maximum document, and a batch's share of one tail in one update or
// spill document under a sixteenth of it. A tail's size counts every
// update's entries as if new, so a tail whose pages return batch after
// batch is judged full before its BSON reaches the bound.
var defaultTailBounds = tailBounds{tail: 4 << 20, part: 1 << 20, statement: 4 << 20}

// tailBounds returns the flusher's tail bounds (a test may set its own:
// hooks.tailBounds).
func (f *Flusher) tailBounds() tailBounds {
	if h := f.hooks; h != nil && h.tailBounds != nil {
		return *h.tailBounds
	}
	return defaultTailBounds
}

// spill is a tail's share of a batch that goes to spill documents: its
// parts, and why (for the log).
type spill struct {
	tail  *bucket.Tail
	parts []bucket.Tail
	why   string
}

// writeSpills inserts the spill documents of spills (each part's
// bucket.Tail.Spill) into pass p's collection, whole, at most chunk.ops
// per insertMany. A duplicate key is a spill an earlier attempt at this
// batch put in: it holds the same entries.
func (f *Flusher) writeSpills(ctx context.Context, p pass, g bucket.Guard, spills []spill) error {
	var docs []bucket.Tail
	for _, s := range spills {
		f.stats.tailSpills.Add(1)
		f.warnSpill(p, s)
		for i := range s.parts {
			docs = append(docs, s.parts[i].Spill(g, i))
		}
	}
	coll := f.colls[p]
	for len(docs) > 0 {
		n := min(len(docs), f.chunk.ops)
		raws := make([]any, n)
		ids := make([]string, n)
		for i := range n {
			raw, err := docs[i].Whole(g)
			if err != nil {
				return err
			}
			raws[i], ids[i] = raw, docs[i].ID
		}
		if h := f.hooks; h != nil && h.beforeSpill != nil {
			h.beforeSpill(p, ids)
		}
		ictx, cancel := context.WithTimeout(ctx, f.timeout)
		f.stats.insertCalls.Add(1)
		f.stats.spillDocs.Add(uint64(n))
		_, insErr := coll.InsertMany(ictx, raws, options.InsertMany().SetOrdered(false))
		cancel()
		dups, err := ignoreDuplicates(insErr)
		if err != nil {
			return fmt.Errorf("insert %d spill documents: %w", n, err)
		}
		f.stats.inserts.Add(uint64(n - dups))
		f.stats.insertDups.Add(uint64(dups))
		docs = docs[n:]
	}
	return nil
}

// spillWarnMax bounds the tails remembered as warned about.
const spillWarnMax = 4096

// spillWarnings remembers the tails whose spill was logged (by id, with
// their period's end), so that each is logged once.
type spillWarnings struct {
	mu   sync.Mutex
	seen map[string]int64
}

// warnSpill logs s at WARN, once per tail while remembered: its
// collection, level, period and shard, never its site or a page (both
// may come from the log's lines).
func (f *Flusher) warnSpill(p pass, s spill) {
	w := &f.spillWarned
	w.mu.Lock()
	_, seen := w.seen[s.tail.ID]
	if !seen {
		if w.seen == nil || len(w.seen) >= spillWarnMax {
			w.seen = map[string]int64{}
		}
		w.seen[s.tail.ID] = s.tail.End
	}
	w.mu.Unlock()
	if seen {
		return
	}
	f.log.Warn("a tail's share of a batch written to spill documents: "+s.why+"; the counts are exact, read with the tail's (docs/buckets.md, \"Hot and cold pages\")",
		"collection", f.colls[p].Name(), "level", s.tail.Level.String(),
		"period", time.Unix(s.tail.Start, 0).UTC().Format(time.RFC3339), "shard", s.tail.Shard,
		"pages", s.tail.Pages(), "spill_documents", len(s.parts))
}
