package flusher

import (
	"hash/maphash"
	"sync"
)

// known remembers, per pass, the buckets this flusher wrote or
// preallocated lately (by a hash of their _id), so that the write path
// sends the others, which are most likely new, straight to an insert of
// their whole document (applyOnce). It is a hint only: a bucket wrongly
// thought new meets a duplicate key on insert and takes the guarded
// update; one wrongly thought to exist (expired since, or a hash
// collision) does not match the update and takes the three-step path.
// Either way it counts once; only the number of operations changes.
//
// Entries are forgotten as the data moves on: those whose bucket ended
// more than knownKeep before the latest bucket written at that pass (the
// data's clock, so a replay of old logs forgets as a live daemon does). A
// pass holds at most knownMax entries; a full pass forgets its oldest
// buckets first (the keep halved until a quarter is free), so the buckets
// of the current period, written again and again, stay remembered; only
// when the current period alone fills it are buckets not remembered.
// After a restart it is empty.
type known struct {
	seed maphash.Seed
	mu   sync.Mutex
	sets [donePass]knownSet
}

type knownSet struct {
	ids     map[uint64]int64 // _id's hash → the bucket's end (Unix seconds)
	latest  int64            // the latest end among the buckets written
	pruned  int64            // latest when entries were last forgotten
	evicted int64            // latest when a full set last forgot its oldest
}

// knownMax bounds the entries per pass (about 40 bytes each).
const knownMax = 1 << 17

// knownKeep is, per pass, how long (seconds of the data's clock) a
// bucket is remembered after its end, for late lines: 10 minutes of minute
// buckets, 6 hours of daily buckets and site totals, 2 days of monthly
// buckets. A bucket written after that costs one operation more (the
// insert that meets it).
var knownKeep = [donePass]int64{minutePass: 600, dailyPass: 6 * 3600, monthlyPass: 2 * 86400, sitePass: 6 * 3600}

func newKnown() *known { return &known{seed: maphash.MakeSeed()} }

// has reports whether the bucket id of pass p is remembered.
func (k *known) has(p pass, id string) bool {
	h := maphash.String(k.seed, id)
	k.mu.Lock()
	_, ok := k.sets[p].ids[h]
	k.mu.Unlock()
	return ok
}

// add remembers buckets of pass p, which exist now: written by this
// flusher (written true: their ends move the data's clock) or created
// ahead of time (preallocated). id(i) and end(i) are the i-th bucket's
// _id and end, for i below n.
func (k *known) add(p pass, n int, id func(int) string, end func(int) int64, written bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	s := &k.sets[p]
	if s.ids == nil {
		s.ids = map[uint64]int64{}
	}
	keep := knownKeep[p]
	for i := range n {
		e := end(i)
		if written && e > s.latest {
			s.latest = e
		}
		if len(s.ids) >= knownMax && s.latest > s.evicted {
			// Full: forget the oldest first, halving the keep, until a
			// quarter is free or only the latest period is left; once per
			// move of the data's clock, not per bucket.
			for w := keep; len(s.ids) > knownMax*3/4 && w > 0; w /= 2 {
				s.forget(s.latest - w)
			}
			if len(s.ids) > knownMax*3/4 {
				s.forget(s.latest)
			}
			s.evicted, s.pruned = s.latest, s.latest
		}
		if len(s.ids) < knownMax {
			s.ids[maphash.String(k.seed, id(i))] = e
		}
	}
	if s.latest-s.pruned >= keep/4 {
		s.forget(s.latest - keep)
		s.pruned = s.latest
	}
}

// forget drops the entries of buckets that ended before cutoff.
func (s *knownSet) forget(cutoff int64) {
	for h, e := range s.ids {
		if e < cutoff {
			delete(s.ids, h)
		}
	}
}

// size returns the entries remembered, all passes together.
func (k *known) size() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := 0
	for i := range k.sets {
		n += len(k.sets[i].ids)
	}
	return n
}
