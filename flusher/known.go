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
// pass holds at most knownMax entries; past that, buckets written are not
// remembered until older ones are forgotten. After a restart it is empty.
type known struct {
	seed maphash.Seed
	mu   sync.Mutex
	sets [donePass]knownSet
}

type knownSet struct {
	ids    map[uint64]int64 // _id's hash → the bucket's end (Unix seconds)
	latest int64            // the latest end among the buckets written
	pruned int64            // latest when entries were last forgotten
}

// knownMax bounds the entries per pass (about 40 bytes each).
const knownMax = 1 << 17

// knownKeep is, per pass, how long (seconds of the data's clock) a
// bucket is remembered after its end: an hour of minute buckets, two
// days of daily buckets and site totals, two months of monthly buckets.
var knownKeep = [donePass]int64{minutePass: 3600, dailyPass: 2 * 86400, monthlyPass: 62 * 86400, sitePass: 2 * 86400}

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
	for i := range n {
		e := end(i)
		if written && e > s.latest {
			s.latest = e
		}
		if len(s.ids) < knownMax {
			s.ids[maphash.String(k.seed, id(i))] = e
		}
	}
	keep := knownKeep[p]
	if s.latest-s.pruned >= keep/4 || (len(s.ids) >= knownMax && s.latest > s.pruned) {
		for h, e := range s.ids {
			if e < s.latest-keep {
				delete(s.ids, h)
			}
		}
		s.pruned = s.latest
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
