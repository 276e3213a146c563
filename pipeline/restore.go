package pipeline

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/stream"
)

// restart is the state a run starts from: what the previous run left in the
// buffer, decoded and grouped for the tailers.
type restart struct {
	// bySource holds the stored checkpoints of each configured source.
	bySource map[string][]stream.Checkpoint
	// orphans counts the stored checkpoints of sources no longer
	// configured that no new source took over (takeOver), by source. They
	// stay in the buffer untouched: adding the source back resumes where
	// it stopped.
	orphans map[string]int
	// unreadable counts stored checkpoints that could not be decoded; they
	// are left in the buffer, and their files are treated as new.
	unreadable int
	// since is the buffer's last commit time, zero on a first start: the
	// tailers read rotated files modified after it that no checkpoint
	// accounts for (tailer.Config.Since).
	since time.Time
}

// loadRestart reads the buffer's checkpoints and last-commit time; a new
// source first takes over what a source no longer configured left for its
// files (takeOver: a renamed source).
func loadRestart(buf *buffer.Buffer, sources []Source, log *slog.Logger) (restart, error) {
	var stored map[string][]byte
	var since time.Time
	err := buf.View(func(tx *buffer.ReadTx) error {
		stored, since = tx.Checkpoints(), tx.LastCommit()
		return nil
	})
	if err != nil {
		return restart{}, fmt.Errorf("read checkpoints: %w", err)
	}
	if stored, err = takeOver(buf, stored, sources, log); err != nil {
		return restart{}, err
	}
	names := make([]string, len(sources))
	for i, s := range sources {
		names[i] = s.Name
	}
	r := groupCheckpoints(stored, names, log)
	r.since = since
	return r, nil
}

// groupCheckpoints decodes stored checkpoints (buffer key -> encoded
// stream.Checkpoint) and groups them by source. Checkpoints that cannot be
// decoded and those of sources not in sources are logged and counted.
func groupCheckpoints(stored map[string][]byte, sources []string, log *slog.Logger) restart {
	r := restart{bySource: map[string][]stream.Checkpoint{}, orphans: map[string]int{}}
	configured := make(map[string]bool, len(sources))
	for _, s := range sources {
		configured[s] = true
	}
	// Sorted, so tailers get their checkpoints in a stable order.
	for _, k := range slices.Sorted(maps.Keys(stored)) {
		var cp stream.Checkpoint
		if err := cp.UnmarshalBinary(stored[k]); err != nil {
			log.Warn("unreadable checkpoint ignored", "key", k, "err", err)
			r.unreadable++
			continue
		}
		if !configured[cp.Source] {
			r.orphans[cp.Source]++
			continue
		}
		r.bySource[cp.Source] = append(r.bySource[cp.Source], cp)
	}
	for _, name := range slices.Sorted(maps.Keys(r.orphans)) {
		log.Warn("checkpoints of a source no longer configured are kept", "source", name, "files", r.orphans[name])
	}
	return r
}
