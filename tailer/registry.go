package tailer

import (
	"cmp"
	"errors"
	"io"
	"slices"
	"sync"

	"github.com/logtally/logtally/stream"
)

// Registry: the files claimed by followers.

// registry holds the files a Tailer's followers claim, by identity, and
// the index of their first bytes (heads.go). A file is read by the
// follower that claims it, and by no other: a rescan, a rotated
// generation, a copy or a restored checkpoint claims a file before its
// follower runs. Lock order: registry.mu before published.mu and
// headIndex.mu.
type registry struct {
	mu sync.Mutex
	// files holds every claimed file: a follower, or nil for an identity
	// reserved until a retired checkpoint's Done chunk has been sent.
	files map[stream.FileID]*follower
	heads headIndex // the claimed followers' heads
}

func newRegistry() *registry {
	return &registry{files: make(map[stream.FileID]*follower)}
}

// claimCopy registers fl unless its file is claimed by a follower that has
// read from it; a fresh follower that has not is told to stop.
func (r *registry) claimCopy(fl *follower) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if cur, ok := r.files[fl.id]; ok {
		if cur == nil || !cur.steal() {
			return false
		}
		r.heads.drop(cur)
	}
	r.files[fl.id] = fl
	r.heads.set(fl, fl.head)
	return true
}

// claim registers fl unless its file is already claimed.
func (r *registry) claim(fl *follower) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.files[fl.id]; ok {
		return false
	}
	r.files[fl.id] = fl
	r.heads.set(fl, fl.head)
	return true
}

// hold registers fl, a resumed checkpoint's file whose identity was
// reserved.
func (r *registry) hold(fl *follower) {
	r.mu.Lock()
	r.files[fl.id] = fl
	r.mu.Unlock()
	r.heads.set(fl, fl.head)
}

func (r *registry) claimed(id stream.FileID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.files[id]
	return ok
}

// release forgets id if it is held by fl (nil for a reservation).
func (r *registry) release(id stream.FileID, fl *follower) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if cur, ok := r.files[id]; ok && cur == fl {
		delete(r.files, id)
		if fl != nil {
			r.heads.drop(fl)
		}
	}
}

// unclaimed returns the files of fis nobody follows.
func (r *registry) unclaimed(fis []fileInfo) []*fileInfo {
	var out []*fileInfo
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range fis {
		if _, ok := r.files[fis[i].id]; !ok {
			out = append(out, &fis[i])
		}
	}
	return out
}

// register claims the files start planned and reserves the identities of
// the waiting checkpoints and of the checkpoints to retire.
func (r *registry) register(plan []*follower, waiting map[stream.FileID]stream.Checkpoint) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id := range waiting {
		r.files[id] = nil
	}
	for _, fl := range plan {
		r.files[fl.id] = fl
		if fl.decided.adopt != nil {
			r.files[fl.decided.adopt.id] = fl.decided.adopt
		}
		if fl.decided.retire != nil {
			if _, ok := r.files[fl.decided.retire.File]; !ok {
				r.files[fl.decided.retire.File] = nil
			}
		}
	}
}

// indexHeads indexes the heads of the followers start registered.
func (r *registry) indexHeads(plan []*follower) {
	for _, fl := range plan {
		r.heads.set(fl, fl.head)
		if c := fl.decided.adopt; c != nil {
			r.heads.set(c, c.head)
		}
	}
}

// copyOf reads the first bytes of f and compares them with the followed
// files' heads but self's (see headIndex.match). A read error is neither.
func (r *registry) copyOf(f io.ReaderAt, self *follower) (full, partial bool) {
	var buf [stream.FingerprintSize]byte
	n, err := f.ReadAt(buf[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return false, false
	}
	return r.heads.match(buf[:n], self)
}

// bases returns the paths where the followed files were found, but those
// atMatch says a look found there as glob matches.
func (r *registry) bases(atMatch func(stream.FileID, string) bool) []string {
	var out []string
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, fl := range r.files {
		if fl != nil && !atMatch(id, fl.base) {
			out = append(out, fl.base)
		}
	}
	return out
}

// followed returns the followed files, each under the path it was last
// seen at, sorted by path; reserved identities are not listed.
func (r *registry) followed() []File {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]File, 0, len(r.files))
	for id, fl := range r.files {
		if fl != nil {
			out = append(out, File{Path: fl.pubPath(), ID: id})
		}
	}
	slices.SortFunc(out, func(a, b File) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.ID.Dev, b.ID.Dev), cmp.Compare(a.ID.Ino, b.ID.Ino))
	})
	return out
}

// paths returns the paths of the followed files, sorted.
func (r *registry) paths() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var paths []string
	for _, fl := range r.files {
		if fl != nil {
			paths = append(paths, fl.pubPath())
		}
	}
	slices.Sort(paths)
	return paths
}
