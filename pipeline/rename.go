package pipeline

// Renamed sources. Checkpoints and ledger entries are filed under their
// source's name ([[source]] name), so a source renamed in the config would
// find none of its own and read its files again from their start: every
// line counted twice. At each Open (a start, a reload) the checkpoints
// and ledger entries a source no longer configured left for its files
// pass to the new source that follows those files.

import (
	"cmp"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/replay"
	"github.com/logtally/logtally/stream"
	"github.com/logtally/logtally/tailer"
)

// takeOver files under a configured source the checkpoints and ledger
// entries that sources no longer configured left for its files, and
// returns the stored checkpoints (buffer key -> encoded stream.Checkpoint)
// as they are then. The rule, the one place it is written:
//
//   - Heirs are the configured sources with no checkpoint of their own
//     (new ones: a renamed source, or one just added). A source that has
//     checkpoints never takes over: a file it did not read while another
//     source did is not its file to resume.
//   - A checkpoint of a source not in sources, or a ledger entry of one
//     (replays' excepted), goes to the heir whose file names hold its path
//     (tailer.SourceFiles.Holds: its globs, their rotated names, its
//     rotated globs). Held by two heirs or more, it goes to none (WARN
//     naming them): each reads the file as a new one, as before.
//   - Two old sources' checkpoints of one file (device and inode; the file
//     was counted by both) going to one heir: neither is taken (WARN
//     naming them).
//
// A checkpoint taken over is stored under the heir's key with the heir as
// its Source, the old one deleted; its tailer then matches it to its file
// as any restored checkpoint (identity, fingerprint, tail check: a file
// rotated, copied or gone while the daemon was down is handled as it
// would have been without the rename). A ledger entry is marked again, at
// its offset, with the heir as Source: the heir's ledger look-up
// (countedLocally) takes it as its own, for a finished file whose
// checkpoint was deleted. All of it is one commit, which leaves the
// buffer's last-commit time alone (the next start compares it with files'
// modification times), logged at INFO with both names.
func takeOver(buf *buffer.Buffer, stored map[string][]byte, sources []Source, log *slog.Logger) (map[string][]byte, error) {
	configured := make(map[string]bool, len(sources))
	for _, s := range sources {
		configured[s.Name] = true
	}
	owns := map[string]bool{}
	var orphans []stream.Checkpoint
	for _, k := range slices.Sorted(maps.Keys(stored)) {
		var cp stream.Checkpoint
		if cp.UnmarshalBinary(stored[k]) != nil {
			continue // groupCheckpoints logs it
		}
		if configured[cp.Source] {
			owns[cp.Source] = true
		} else {
			orphans = append(orphans, cp)
		}
	}
	var heirs []Source
	for _, s := range sources {
		if !owns[s.Name] {
			heirs = append(heirs, s)
		}
	}
	if len(heirs) == 0 {
		return stored, nil
	}
	// heirOf returns the heirs whose file names hold path.
	heirOf := func(path string) []string {
		var out []string
		for _, h := range heirs {
			if (tailer.SourceFiles{Paths: h.Paths, Rotated: h.Tailer.Rotated}).Holds(path) {
				out = append(out, h.Name)
			}
		}
		return out
	}
	taken := map[renamePair]*renameTally{}
	ambiguous := map[renamePair]*renameTally{} // to: the heirs, joined
	count := func(m map[renamePair]*renameTally, p renamePair) *renameTally {
		if m[p] == nil {
			m[p] = &renameTally{}
		}
		return m[p]
	}

	// The checkpoints, by the key they would have under their heir.
	type move struct {
		heir string
		olds []stream.Checkpoint
	}
	moves := map[string]*move{}
	for _, cp := range orphans {
		switch hs := heirOf(cp.Path); len(hs) {
		case 0:
		case 1:
			k := stream.Checkpoint{Source: hs[0], File: cp.File}.Key()
			if moves[k] == nil {
				moves[k] = &move{heir: hs[0]}
			}
			moves[k].olds = append(moves[k].olds, cp)
		default:
			count(ambiguous, renamePair{cp.Source, strings.Join(hs, ", ")}).files++
		}
	}
	cps := map[string][]byte{}
	for _, k := range slices.Sorted(maps.Keys(moves)) {
		mv := moves[k]
		if len(mv.olds) > 1 {
			var names []string
			for _, cp := range mv.olds {
				names = append(names, cp.Source)
			}
			log.Warn("sources no longer configured each have a checkpoint of one file of a new source: it takes none, and reads the file from its start",
				"source", mv.heir, "from", names)
			continue
		}
		cp := mv.olds[0]
		cps[cp.Key()] = nil
		count(taken, renamePair{cp.Source, mv.heir}).files++
		cp.Source = mv.heir
		v, err := cp.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("take over checkpoint: %w", err)
		}
		cps[k] = v
	}

	// The ledger entries.
	var entries []stream.Entry
	err := buf.View(func(tx *buffer.ReadTx) error {
		entries = tx.LedgerEntries(func(e stream.Entry) bool {
			return e.Source != "" && !configured[e.Source] && !strings.HasPrefix(e.Source, replay.SourcePrefix)
		})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("take over ledger entries: %w", err)
	}
	var marks []buffer.Mark
	for _, e := range entries {
		switch hs := heirOf(e.Path); len(hs) {
		case 0:
		case 1:
			m := buffer.MarkOf(e)
			m.Source = hs[0]
			marks = append(marks, m)
			count(taken, renamePair{e.Source, hs[0]}).entries++
		default:
			count(ambiguous, renamePair{e.Source, strings.Join(hs, ", ")}).entries++
		}
	}

	for _, p := range slices.SortedFunc(maps.Keys(ambiguous), compareRenamePairs) {
		log.Warn("files of a source no longer configured are held by several new sources: none takes them over, and each reads them from their start",
			"from", p.from, "sources", p.to, "files", ambiguous[p].files, "ledger_entries", ambiguous[p].entries)
	}
	if len(cps) == 0 && len(marks) == 0 {
		return stored, nil
	}
	if err := buf.Commit(buffer.Commit{Checkpoints: cps, Marks: marks, KeepLastCommit: true}); err != nil {
		return nil, fmt.Errorf("take over a renamed source's checkpoints: %w", err)
	}
	out := maps.Clone(stored)
	for k, v := range cps {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	for _, p := range slices.SortedFunc(maps.Keys(taken), compareRenamePairs) {
		log.Info("a new source takes over the checkpoints a source no longer configured left for its files: it resumes where that one stopped",
			"source", p.to, "from", p.from, "files", taken[p].files, "ledger_entries", taken[p].entries)
	}
	return out, nil
}

// renamePair is an old source name and the new one (or the heirs, joined).
type renamePair struct{ from, to string }

func compareRenamePairs(a, b renamePair) int {
	return cmp.Or(strings.Compare(a.from, b.from), strings.Compare(a.to, b.to))
}

// renameTally counts what passed (or could not) from one name to another.
type renameTally struct{ files, entries int }
