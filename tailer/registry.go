package tailer

import (
	"github.com/logtally/logtally/stream"
)

// Registry: the files claimed by followers.

// claimCopy registers fl unless its file is claimed by a follower that has
// read from it; a fresh follower that has not is told to stop.
func (t *Tailer) claimCopy(fl *follower) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if cur, ok := t.files[fl.id]; ok {
		if cur == nil || !cur.steal() {
			return false
		}
		t.fcfg.heads.drop(cur)
	}
	t.files[fl.id] = fl
	t.fcfg.heads.set(fl, fl.head)
	return true
}

// claim registers fl unless its file is already claimed.
func (t *Tailer) claim(fl *follower) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.files[fl.id]; ok {
		return false
	}
	t.files[fl.id] = fl
	t.fcfg.heads.set(fl, fl.head)
	return true
}

func (t *Tailer) claimed(id stream.FileID) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.files[id]
	return ok
}

// release forgets id if it is held by fl (nil for a reservation).
func (t *Tailer) release(id stream.FileID, fl *follower) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if cur, ok := t.files[id]; ok && cur == fl {
		delete(t.files, id)
		if fl != nil {
			t.fcfg.heads.drop(fl)
		}
	}
}
