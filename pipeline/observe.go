package pipeline

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/flusher"
	"github.com/logtally/logtally/stream"
	"github.com/logtally/logtally/tailer"
)

// Read-only facts for the status endpoint and `logtally state`. Nothing
// here changes the buffer or the run.

// Status is what the buffer and the tailers hold now, for people (GET
// /status, `logtally state`). Offsets are those of the committed
// checkpoints: a tailer may have read up to a commit interval further.
type Status struct {
	// Instance is Config.Instance (empty for ReadStatus).
	Instance string `json:"instance,omitempty"`
	// BufferID is the buffer's id (the key of its writer number's claim).
	BufferID string `json:"buffer_id"`
	// Writer is the buffer's writer number, the key of its entries in the
	// buckets' guard (applied.<writer>); 0 before it is claimed.
	Writer int64 `json:"writer"`
	// BufferPath is the buffer file.
	BufferPath string `json:"buffer_path"`
	// BufferBytes is the live data in the buffer (Stats.BufferBytes).
	BufferBytes int64 `json:"buffer_bytes"`
	// LastCommit is when counts and checkpoints were last committed; zero
	// if never.
	LastCommit time.Time `json:"last_commit,omitzero"`
	// PendingKeys and PendingHits are the counts not yet acknowledged by
	// MongoDB, the batch in flight included (as in Stats).
	PendingKeys int    `json:"pending_keys"`
	PendingHits uint64 `json:"pending_hits"`
	// CoarseHits are hits acknowledged in the minute buckets and waiting
	// for a full batch to reach the daily and monthly ones
	// (flush.coarse_interval).
	CoarseHits uint64 `json:"coarse_hits,omitempty"`
	// InFlight is the sealed batch being written, or nil.
	InFlight *BatchStatus `json:"in_flight"`
	// LastAcked is the last batch MongoDB acknowledged, or nil.
	LastAcked *AckedStatus `json:"last_acked"`
	// Sources lists each source's files, by source name.
	Sources []SourceStatus `json:"sources"`
	// IndexesReady reports whether the bucket indexes exist (they are
	// retried in the background; counts are written meanwhile). Absent
	// for ReadStatus.
	IndexesReady *bool `json:"indexes_ready,omitempty"`
	// Buckets is the bucket lifecycle: expiry per collection and
	// preallocation. Absent for ReadStatus.
	Buckets *BucketsStatus `json:"buckets,omitempty"`
}

// BucketsStatus is the bucket lifecycle of a running flusher
// (flusher.Stats: Expiry, Prealloc, LateBuckets).
type BucketsStatus struct {
	// Expiry is each collection's retention and expiry mode ("off",
	// "pending", "ttl" or "deletemany"), minute, daily, monthly.
	Expiry []ExpiryStatus `json:"expiry"`
	// LateBuckets counts buckets created again for counts written after
	// their period had expired.
	LateBuckets uint64 `json:"late_buckets"`
	// ExpiredHits counts hits not written to a level whose bucket was
	// already past its retention (flusher.Stats.ExpiredHits).
	ExpiredHits uint64 `json:"expired_hits"`
	// Preallocate reports whether preallocation is on; Preallocation its
	// counters.
	Preallocate   bool                  `json:"preallocate"`
	Preallocation flusher.PreallocStats `json:"preallocation"`
}

// ExpiryStatus is one bucket collection's expiry.
type ExpiryStatus struct {
	Level      string `json:"level"`
	Collection string `json:"collection"`
	// Retention is the retention as a duration string; "0s" keeps.
	Retention string `json:"retention"`
	Mode      string `json:"mode"`
	// Deleted counts buckets deleted by the deleteMany fallback.
	Deleted uint64 `json:"deleted"`
}

// BatchStatus is the sealed batch in flight.
type BatchStatus struct {
	ID   string `json:"id"`
	Keys int    `json:"keys"`
	Hits uint64 `json:"hits"`
	// SealedAt is zero for a batch sealed by a logtally without snapshots.
	SealedAt time.Time `json:"sealed_at,omitzero"`
	// Resume says where writing the batch resumes, as the flusher
	// describes its own resume point (flusher.Resume.String): "start"
	// before its first acknowledged chunk, else the pass and the first
	// key not yet written, or that every pass is written.
	Resume string `json:"resume"`
}

// AckedStatus is the last acknowledged batch.
type AckedStatus struct {
	ID       string    `json:"id"`
	SealedAt time.Time `json:"sealed_at,omitzero"`
}

// SourceStatus is one source's files.
type SourceStatus struct {
	Name string `json:"name"`
	// LagBytes is the sum of the files' Lag, where it is known.
	LagBytes int64        `json:"lag_bytes"`
	Files    []FileStatus `json:"files"`
}

// FileStatus is one file of a source: a committed checkpoint, a file a
// tailer follows, or both.
type FileStatus struct {
	// Path is where the file is now, or where it was last seen.
	Path string `json:"path"`
	// File is its identity, "dev:ino".
	File string `json:"file"`
	// Offset is the committed checkpoint's offset (0 without one).
	Offset int64 `json:"offset"`
	// Size is the file's size now, and Lag the bytes after Offset
	// (never below 0); both -1 when the file was not found.
	Size int64 `json:"size"`
	Lag  int64 `json:"lag"`
	// Checkpoint reports a committed checkpoint for the file.
	Checkpoint bool `json:"checkpoint"`
	// Followed reports that a tailer follows the file now (Pipeline.Status
	// only).
	Followed bool `json:"followed"`
}

// ReadStatus reads the state held in buf: its id, pending counts, the
// batch in flight, the last acknowledged batch, the last commit, and every
// checkpoint grouped by source, with each file's current size. Instance is
// left empty. Checkpoints that cannot be decoded are skipped.
func ReadStatus(buf *buffer.Buffer) (Status, error) {
	st := Status{BufferID: buf.InstanceID(), Writer: buf.Number(), BufferPath: buf.Path(), BufferBytes: buf.Size(), Sources: []SourceStatus{}}
	var raw map[string][]byte
	err := buf.View(func(tx *buffer.ReadTx) error {
		st.LastCommit = tx.LastCommit()
		st.PendingKeys, st.PendingHits = tx.Unacked()
		_, st.CoarseHits = tx.Coarse()
		if sealed := tx.Sealed(); sealed != nil {
			snap := tx.Snapshot(buffer.SealedBatch)
			st.InFlight = &BatchStatus{ID: sealed.ID, Keys: sealed.Keys, Hits: sealed.Hits, SealedAt: snap.SealedAt, Resume: flusher.ResumeOf(sealed).String()}
		}
		if acked := tx.Snapshot(buffer.AckedBatch); acked.Batch != "" {
			st.LastAcked = &AckedStatus{ID: acked.Batch, SealedAt: acked.SealedAt}
		}
		raw = tx.Checkpoints()
		return nil
	})
	if err != nil {
		return Status{}, err
	}
	bySource := map[string][]FileStatus{}
	for _, v := range raw {
		var cp stream.Checkpoint
		if cp.UnmarshalBinary(v) != nil {
			continue
		}
		bySource[cp.Source] = append(bySource[cp.Source], FileStatus{
			Path: cp.Path, File: fileID(cp.File), Offset: cp.Offset, Checkpoint: true,
		})
	}
	for _, name := range slices.Sorted(maps.Keys(bySource)) {
		st.Sources = append(st.Sources, SourceStatus{Name: name, Files: bySource[name]})
	}
	sizeFiles(st.Sources, nil)
	return st, nil
}

// Status returns the buffer's state (ReadStatus) with Config.Instance, for
// the configured sources only, each with the files its tailer follows now
// added (offset 0 until their first checkpoint is committed). It is safe
// to call while Run runs, but not after Close.
func (p *Pipeline) Status() (Status, error) {
	st, err := ReadStatus(p.buf)
	if err != nil {
		return Status{}, err
	}
	st.Instance = p.cfg.Instance
	ready := p.flush.IndexesReady()
	st.IndexesReady = &ready
	fs := p.flush.Stats()
	bs := &BucketsStatus{LateBuckets: fs.LateBuckets, ExpiredHits: fs.ExpiredHits, Preallocate: p.cfg.Flush.Preallocate, Preallocation: fs.Prealloc}
	for _, e := range fs.Expiry {
		bs.Expiry = append(bs.Expiry, ExpiryStatus{Level: e.Level, Collection: e.Collection, Retention: e.Retention.String(), Mode: e.Mode, Deleted: e.Deleted})
	}
	st.Buckets = bs
	stored := map[string]SourceStatus{}
	for _, s := range st.Sources {
		stored[s.Name] = s
	}
	st.Sources = st.Sources[:0]
	ids := map[string]stream.FileID{}
	for i, t := range p.tailers {
		s := stored[p.cfg.Sources[i].Name]
		s.Name = p.cfg.Sources[i].Name
		at := make(map[string]int, len(s.Files)) // each file's index in s.Files
		for j, f := range s.Files {
			at[f.File] = j
		}
		for _, f := range t.Followed() {
			key := fileID(f.ID)
			ids[key] = f.ID
			j, ok := at[key]
			if !ok {
				s.Files = append(s.Files, FileStatus{Path: f.Path, File: key})
				j = len(s.Files) - 1
				at[key] = j
			}
			s.Files[j].Path, s.Files[j].Followed = f.Path, true
		}
		st.Sources = append(st.Sources, s)
	}
	sizeFiles(st.Sources, ids)
	return st, nil
}

// sizeFiles sets each file's size and lag, sorts the files by path and
// sums each source's lag. ids maps "dev:ino" back to the identity (files
// from checkpoints are parsed from the string).
func sizeFiles(sources []SourceStatus, ids map[string]stream.FileID) {
	st := tailer.NewStater() // each directory read once for every file
	for i := range sources {
		s := &sources[i]
		s.LagBytes = 0
		for j := range s.Files {
			f := &s.Files[j]
			id, ok := ids[f.File]
			if !ok {
				fmt.Sscanf(f.File, "%d:%d", &id.Dev, &id.Ino)
			}
			f.Size, f.Lag = -1, -1
			if at, size, found := st.Stat(f.Path, id); found {
				f.Path, f.Size, f.Lag = at, size, max(0, size-f.Offset)
				s.LagBytes += f.Lag
			}
		}
		slices.SortFunc(s.Files, func(a, b FileStatus) int { return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.File, b.File)) })
		if s.Files == nil {
			s.Files = []FileStatus{}
		}
	}
}

// fileID formats an identity as "dev:ino".
func fileID(id stream.FileID) string { return fmt.Sprintf("%d:%d", id.Dev, id.Ino) }
