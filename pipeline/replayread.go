package pipeline

// Replay, reading: files streamed from where the ledger says they are
// counted, copies one after another, and the wait for the acknowledgement.

import (
	"bytes"
	"cmp"
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/replay"
	"github.com/logtally/logtally/tailer"
)

// readReplay reads the files with jobs workers. Files that may be copies
// of one another (one's first bytes begin the other's) are read one after
// the other in one worker, each from where the one before left the
// ledger, so two copies are never counted at once.
//
// A damaged file (replay.DamagedError, kept in its replayFile) does not
// stop the others: its copies go on from where it stopped.
func (p *Pipeline) readReplay(ctx context.Context, jobs int, files []*replayFile) error {
	groups := groupCopies(files)
	jobs = min(cmp.Or(jobs, runtime.GOMAXPROCS(0)), len(groups))
	work := make(chan []*replayFile)
	errc := make(chan error, jobs)
	var wg sync.WaitGroup
	for range jobs {
		wg.Go(func() {
			for g := range work {
				for _, f := range g {
					err := p.replayOne(ctx, f)
					if err != nil && !replay.IsDamaged(err) {
						errc <- err
						return
					}
				}
			}
		})
	}
	var err error
feed:
	for _, g := range groups {
		select {
		case work <- g:
		case err = <-errc:
			break feed
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(work)
	wg.Wait()
	close(errc)
	for e := range errc {
		err = cmp.Or(err, e)
	}
	return err
}

// groupCopies groups files whose heads are prefixes of one another.
func groupCopies(files []*replayFile) [][]*replayFile {
	var groups [][]*replayFile
next:
	for _, f := range files {
		if len(f.head) == 0 {
			continue
		}
		for i, g := range groups {
			for _, o := range g {
				if bytes.HasPrefix(f.head, o.head) || bytes.HasPrefix(o.head, f.head) {
					groups[i] = append(g, f)
					continue next
				}
			}
		}
		groups = append(groups, []*replayFile{f})
	}
	return groups
}

// replayOne reads one file from where it is counted.
func (p *Pipeline) replayOne(ctx context.Context, f *replayFile) error {
	counted, err := p.countedUpTo(ctx, f.head)
	if err != nil {
		return err
	}
	var held []tailer.Checkpoint
	if f.live {
		held = append(held, f.held)
	}
	from, _ := tailer.StreamStart(f.head, counted, held)
	end, err := replay.Stream(ctx, f.Path, f.source, f.head, from, f.live, p.maxLine(), p.chunks, &f.counts)
	p.replayMu.Lock()
	defer p.replayMu.Unlock()
	f.From, f.End, f.Lines = from, end, f.counts.Lines.Load()
	if replay.IsDamaged(err) {
		f.Status, f.damage = ReplayDamaged, err
		p.log.Error("damaged file: its whole lines before the damage are counted", "path", f.Path, "err", err)
	}
	if err != nil {
		return err
	}
	switch {
	case end <= from:
		f.Status = ReplaySkipped
	case from > 0:
		f.Status = ReplayResumed
	default:
		f.Status = ReplayCounted
	}
	return nil
}

// maxLine is the longest line counted.
func (p *Pipeline) maxLine() int {
	for _, s := range p.cfg.Sources {
		if s.Tailer.MaxLineBytes > 0 {
			return s.Tailer.MaxLineBytes
		}
	}
	return tailer.DefaultMaxLineBytes
}

// countedLocally returns how far this buffer's ledger says a stream
// beginning with head is counted: the tailers ask it about a file they
// find without a checkpoint. A ledger that cannot be read says 0 (and the
// file is read from its start), logged.
func (p *Pipeline) countedLocally(head []byte) int64 {
	e, err := p.buf.Counted(head, tailer.FingerprintSize)
	if err != nil {
		p.log.Error("cannot read the ledger: a file found without a checkpoint is read from its start", "err", err)
		return 0
	}
	return e.Offset
}

// countedUpTo returns how far a stream beginning with head is counted:
// the most of what this buffer's ledger holds (committed, maybe not yet
// acknowledged) and what the database's holds (acknowledged, by any host
// or an earlier state dir). It waits while MongoDB cannot be reached.
func (p *Pipeline) countedUpTo(ctx context.Context, head []byte) (int64, error) {
	local, err := p.buf.Counted(head, tailer.FingerprintSize)
	if err != nil {
		return 0, err
	}
	best := local.Offset
	keys := buffer.LedgerCandidates(head, tailer.FingerprintSize)
	for attempt := 0; ; attempt++ {
		remote, err := p.flush.ReadLedger(ctx, keys)
		if err == nil {
			for _, off := range remote {
				best = max(best, off)
			}
			return best, nil
		}
		if attempt == 0 {
			p.log.Warn("cannot read MongoDB's ledger: waiting for it before replaying", "err", err)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-p.cfg.Clock.After(min(time.Second<<min(attempt, 5), 30*time.Second)):
		}
	}
}

// waitAcked waits until the ledger says every file is counted as far as
// this replay read it, and everything this buffer's ledger holds of it
// (what an earlier run, stopped or killed, committed too) is acknowledged
// by MongoDB.
func (p *Pipeline) waitAcked(ctx context.Context, files []*replayFile) error {
	for {
		done := true
		for _, f := range files {
			if len(f.head) == 0 {
				continue
			}
			best, err := p.buf.Counted(f.head, tailer.FingerprintSize)
			if err != nil {
				return err
			}
			read := int64(0)
			if f.End > f.From {
				read = f.End
			}
			if best.Offset < read || best.Acked < best.Offset {
				done = false
				break
			}
		}
		if done {
			return nil
		}
		p.flush.Kick() // what is left is ours: no need to wait for the interval
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.cfg.Clock.After(replayPoll):
		}
	}
}
