package tailer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/logtally/logtally/clock"
)

// Values of zero Config fields.
const (
	defaultPollInterval   = 250 * time.Millisecond
	defaultRescanInterval = 5 * time.Second
	defaultRotateGrace    = 10 * time.Second
	defaultMaxLineBytes   = 1 << 20
	defaultReadSize       = 256 << 10
)

// errLogEvery is how often the same stat/open error is logged again.
const errLogEvery = time.Minute

// Config configures a Tailer. Zero durations and sizes take the defaults.
type Config struct {
	Source         string        // source name (stable across restarts), goes into checkpoints
	Paths          []string      // globs (filepath.Glob syntax)
	Checkpoints    []Checkpoint  // restored state for this source (from the buffer)
	PollInterval   time.Duration // default 250ms: how often an idle file is checked for growth/rotation/truncation
	RescanInterval time.Duration // default 5s: how often globs are re-expanded
	// RotateGrace (default 10s) is how long a rotated-away file (its path now
	// names another inode, or nothing) is kept open and read after it
	// stopped growing: nginx keeps writing the renamed file until it reopens.
	RotateGrace  time.Duration
	MaxLineBytes int         // default 1 MiB; longer lines are skipped whole and counted in Chunk.Skipped
	ReadSize     int         // default 256 KiB: read buffer; a Chunk carries at most about this much
	Clock        clock.Clock // default clock.Real{}
	Logger       *slog.Logger
	// Since is the wall-clock time of the last commit of the previous run
	// (buffer.LastCommit), zero on the very first start. When it is set,
	// the rotated files written while the daemon was down that no
	// checkpoint accounts for are read from 0 at start; see the package
	// doc. Zero: rotated files without a checkpoint are history, not read.
	Since time.Time
}

// Tailer follows the files one source's globs match and sends their lines
// as Chunks. Create it with New and start it with Run.
type Tailer struct {
	cfg       Config
	out       chan<- Chunk
	log       *slog.Logger
	clk       clock.Clock
	rescanNow chan struct{}
	started   chan struct{} // closed when the start chunks have been sent
	wg        sync.WaitGroup

	mu      sync.Mutex
	running bool
	// files holds every claimed file: a follower, or nil for an identity
	// reserved until a retired checkpoint's Done chunk has been sent.
	files map[FileID]*follower

	// waiting holds restored checkpoints whose file could not be read
	// (an error other than not-exist), retried at every rescan. Their
	// identities are reserved in files. Only Run's goroutine uses it.
	waiting map[FileID]Checkpoint

	errMu     sync.Mutex
	errLogged map[string]time.Time
}

// New validates cfg and returns a Tailer that will send to out. A bad glob
// pattern, a missing source name or path, a negative setting, or a restored
// checkpoint of another source (or a duplicate) is an error.
func New(cfg Config, out chan<- Chunk) (*Tailer, error) {
	if out == nil {
		return nil, errors.New("new tailer: nil output channel")
	}
	if cfg.Source == "" {
		return nil, errors.New("new tailer: empty source name")
	}
	if len(cfg.Paths) == 0 {
		return nil, fmt.Errorf("new tailer %q: no paths", cfg.Source)
	}
	for _, p := range cfg.Paths {
		if _, err := filepath.Match(p, ""); err != nil {
			return nil, fmt.Errorf("new tailer %q: glob %q: %w", cfg.Source, p, err)
		}
	}
	if cfg.PollInterval < 0 || cfg.RescanInterval < 0 || cfg.RotateGrace < 0 || cfg.MaxLineBytes < 0 || cfg.ReadSize < 0 {
		return nil, fmt.Errorf("new tailer %q: negative interval or size", cfg.Source)
	}
	cfg.Paths = slices.Clone(cfg.Paths)
	cfg.Checkpoints = slices.Clone(cfg.Checkpoints)
	seen := make(map[FileID]bool, len(cfg.Checkpoints))
	for _, cp := range cfg.Checkpoints {
		if cp.Source != cfg.Source {
			return nil, fmt.Errorf("new tailer %q: checkpoint of source %q", cfg.Source, cp.Source)
		}
		if seen[cp.File] {
			return nil, fmt.Errorf("new tailer %q: duplicate checkpoint for file %s", cfg.Source, cp.File.str())
		}
		if cp.Offset < 0 || cp.FPLen < 0 || cp.FPLen > FingerprintSize {
			return nil, fmt.Errorf("new tailer %q: checkpoint %s out of range", cfg.Source, cp.File.str())
		}
		seen[cp.File] = true
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = defaultPollInterval
	}
	if cfg.RescanInterval == 0 {
		cfg.RescanInterval = defaultRescanInterval
	}
	if cfg.RotateGrace == 0 {
		cfg.RotateGrace = defaultRotateGrace
	}
	if cfg.MaxLineBytes == 0 {
		cfg.MaxLineBytes = defaultMaxLineBytes
	}
	if cfg.ReadSize == 0 {
		cfg.ReadSize = defaultReadSize
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Tailer{
		cfg:       cfg,
		out:       out,
		log:       log.With("component", "tailer", "source", cfg.Source),
		clk:       cfg.Clock,
		rescanNow: make(chan struct{}, 1),
		started:   make(chan struct{}),
		files:     make(map[FileID]*follower),
		waiting:   make(map[FileID]Checkpoint),
		errLogged: make(map[string]time.Time),
	}, nil
}

// Files returns the paths currently followed, sorted. A rotated-away file
// shows under the path it was last seen at.
func (t *Tailer) Files() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var paths []string
	for _, fl := range t.files {
		if fl != nil {
			paths = append(paths, fl.pubPath)
		}
	}
	slices.Sort(paths)
	return paths
}

// Run follows the files until ctx is cancelled, then returns nil once every
// goroutine it started has exited and every file is closed. No Chunk is
// sent after Run returns. Run may be called only once.
func (t *Tailer) Run(ctx context.Context) error {
	t.mu.Lock()
	if t.running {
		t.mu.Unlock()
		return errors.New("tailer: Run called twice")
	}
	t.running = true
	t.mu.Unlock()

	defer t.wg.Wait()
	if err := t.start(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	close(t.started)
	tick := t.clk.After(t.cfg.RescanInterval)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick:
			tick = t.clk.After(t.cfg.RescanInterval)
		case <-t.rescanNow:
		}
		t.rescan(ctx)
	}
}

// fileInfo is a file found by glob or as a rotated candidate.
type fileInfo struct {
	path    string
	id      FileID
	size    int64
	mtime   time.Time
	matched bool // path is a glob match
}

// start matches the restored checkpoints to files and starts following.
func (t *Tailer) start(ctx context.Context) error {
	byID := make(map[FileID]*fileInfo)
	var order []*fileInfo // deterministic: glob matches first, then candidates
	add := func(fi fileInfo) {
		if _, ok := byID[fi.id]; ok {
			return
		}
		p := &fi
		byID[fi.id] = p
		order = append(order, p)
	}
	matches := t.expand()
	bases := make([]string, 0, len(matches)+len(t.cfg.Paths)+len(t.cfg.Checkpoints))
	for _, m := range matches {
		add(m)
		bases = append(bases, m.path)
	}
	for _, pat := range t.cfg.Paths {
		if !strings.ContainsAny(pat, `*?[\`) {
			bases = append(bases, pat) // a literal path, even while it is missing
		}
	}
	for _, cp := range t.cfg.Checkpoints {
		if cp.Path != "" {
			bases = append(bases, cp.Path)
		}
	}
	seenBase := make(map[string]bool, len(bases))
	for _, b := range bases {
		if seenBase[b] {
			continue
		}
		seenBase[b] = true
		for _, c := range t.candidates(b) {
			add(c)
		}
	}

	cps := slices.Clone(t.cfg.Checkpoints)
	slices.SortFunc(cps, func(a, b Checkpoint) int { return strings.Compare(a.Key(), b.Key()) })
	planned := make(map[FileID]*follower)
	var plan []*follower
	var lost []Checkpoint
	fpOK := func(fi *fileInfo, cp Checkpoint) bool {
		if fi.size < cp.Offset {
			return false
		}
		ok, err := fileFingerprintMatches(fi.path, cp.FPLen, cp.FPSum)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.logErr("fingerprint "+fi.path, slog.LevelWarn, "cannot read fingerprint", "path", fi.path, "err", err)
		}
		return ok
	}
	// Checkpoints that resume their own file, or wait until it can be read.
	for _, cp := range cps {
		fi, ok := byID[cp.File]
		if !ok {
			if _, err := os.Stat(cp.Path); cp.Path != "" && err != nil && !errors.Is(err, os.ErrNotExist) {
				t.logErr("keep "+cp.Path, slog.LevelWarn, "cannot stat file, keeping its checkpoint", "path", cp.Path, "err", err)
				t.waiting[cp.File] = cp
				continue
			}
			lost = append(lost, cp)
			continue
		}
		fl, wait := t.resume(cp, fi.path)
		if wait {
			cp.Path = fi.path
			t.waiting[cp.File] = cp
			continue
		}
		if fl == nil {
			lost = append(lost, cp)
			continue
		}
		planned[cp.File] = fl
		plan = append(plan, fl)
		t.log.Info("resuming file", "path", fi.path, "offset", cp.Offset, "rotated", !fi.matched)
	}
	// The others: a copy (copytruncate while down) first, for all of them,
	// so no copy is mistaken for new content below.
	var dropped []Checkpoint
	copies := make(map[FileID]*follower, len(lost)) // by the checkpoint's own file
	for _, cp := range lost {
		if cp.FPLen == 0 {
			continue
		}
		for _, fi := range order {
			if _, wait := t.waiting[fi.id]; wait || fi.id == cp.File || planned[fi.id] != nil || !fpOK(fi, cp) {
				continue
			}
			c := cp
			c.File, c.Path = fi.id, fi.path
			fl, err := t.openFollower(fi.path, fi.id, c)
			if err != nil {
				continue
			}
			planned[fl.id] = fl
			copies[cp.File] = fl
			t.log.Info("found copy of a truncated file", "path", fl.path, "offset", cp.Offset, "was", cp.Path)
			break
		}
	}
	isCopyOfLost := func(fi *fileInfo) bool {
		for _, cp := range lost {
			if cp.FPLen > 0 && cp.File != fi.id && fpOK(fi, cp) {
				return true
			}
		}
		return false
	}
	for _, cp := range lost {
		cpy := copies[cp.File]
		// The checkpoint's own file, if it is still there, holds new
		// content (truncated and rewritten, or its inode reused): read it
		// from 0, whether the glob still matches it or it was rotated away
		// since (copytruncate, then rename, while logtally was down).
		own, ok := byID[cp.File]
		_, wait := t.waiting[cp.File]
		if ok && !wait && planned[own.id] == nil && own.size > 0 && !isCopyOfLost(own) {
			fl, err := t.openFollower(own.path, own.id, Checkpoint{Source: t.cfg.Source})
			if err == nil {
				// It reads the copy's tail first, then resets its
				// checkpoint (same key) and reads itself from 0.
				fl.adopt = cpy
				planned[own.id] = fl
				plan = append(plan, fl)
				if !own.matched {
					t.log.Info("rotated file changed while down, reading it from 0", "path", own.path, "was", cp.Path)
				}
				continue
			}
		}
		if cpy == nil {
			dropped = append(dropped, cp)
			continue
		}
		retire := cp
		cpy.retire = &retire
		plan = append(plan, cpy)
	}
	// Rotated files written while the daemon was down that nothing
	// accounts for: read from 0.
	recovered := t.recoverUnread(order, planned)
	abort := func(err error) error {
		for _, fl := range plan {
			fl.exit()
		}
		for _, fl := range recovered {
			fl.exit()
		}
		return err
	}
	// Checkpoints matching nothing: the caller deletes them before anything
	// else is sent, so no later chunk can be deleted by mistake.
	for _, cp := range dropped {
		t.log.Info("dropping checkpoint of a file that is gone", "path", cp.Path, "offset", cp.Offset)
		if err := t.send(ctx, Chunk{Checkpoint: cp, Start: cp.Offset, Done: true}); err != nil {
			return abort(err)
		}
	}
	// The recovered files' checkpoints (at 0) come next, before any line of
	// this run: the first commit of this run, which moves the caller's
	// Since past their modification times, holds them.
	for _, fl := range recovered {
		if err := t.send(ctx, Chunk{Checkpoint: fl.checkpoint(), Start: 0}); err != nil {
			return abort(err)
		}
	}
	plan = append(plan, recovered...)
	// Glob matches nobody claimed: new files, read from 0.
	var fresh []*follower
	for _, fi := range order {
		if _, wait := t.waiting[fi.id]; wait || !fi.matched || planned[fi.id] != nil {
			continue
		}
		if t.isCopy(fi.path, planHeads(plan)) {
			continue
		}
		fl, err := t.openFollower(fi.path, fi.id, Checkpoint{Source: t.cfg.Source})
		if err != nil {
			t.logErr("open "+fi.path, slog.LevelWarn, "cannot open file", "err", err, "path", fi.path)
			continue
		}
		fl.fresh, fl.pubFresh = true, true
		fresh = append(fresh, fl)
	}
	plan = append(plan, fresh...)

	t.mu.Lock()
	for id := range t.waiting {
		t.files[id] = nil
	}
	for _, fl := range plan {
		t.files[fl.id] = fl
		if fl.adopt != nil {
			t.files[fl.adopt.id] = fl.adopt
		}
		if fl.retire != nil {
			if _, ok := t.files[fl.retire.File]; !ok {
				t.files[fl.retire.File] = nil
			}
		}
	}
	t.mu.Unlock()
	for _, fl := range plan {
		t.spawn(ctx, fl)
	}
	return nil
}

// recoverUnread returns followers at offset 0 for the rotated files written
// while the daemon was down that were never read: with a non-zero
// Config.Since, every rotated candidate (in order, not a glob match) that
//   - is claimed by no checkpoint: neither its own (by identity, resumed or
//     waiting) nor as the copy of one (in planned),
//   - is not empty and was modified after Since minus one second,
//   - does not begin with the bytes a restored checkpoint's fingerprint
//     covers (a copy of a file read up to there or further),
//   - and whose first bytes (up to FingerprintSize) are not the beginning of
//     another file found (a copy, complete or being written, of a file that
//     is read or accounted for; of two such candidates the longer is read).
//
// The package doc explains why none of them can have been counted.
func (t *Tailer) recoverUnread(order []*fileInfo, planned map[FileID]*follower) []*follower {
	since := t.cfg.Since
	if since.IsZero() {
		return nil
	}
	claimed := func(id FileID) bool {
		if planned[id] != nil {
			return true
		}
		if _, ok := t.waiting[id]; ok {
			return true
		}
		return slices.ContainsFunc(t.cfg.Checkpoints, func(cp Checkpoint) bool { return cp.File == id })
	}
	heads := make(map[FileID][]byte, len(order))
	headOf := func(fi *fileInfo) ([]byte, error) {
		if h, ok := heads[fi.id]; ok {
			return h, nil
		}
		h, err := readHead(fi.path)
		if err != nil {
			return nil, err
		}
		heads[fi.id] = h
		return h, nil
	}
	after := since.Add(-time.Second)
	var cands []*fileInfo
	eligible := make(map[FileID]bool)
	for _, fi := range order {
		if fi.matched || fi.size == 0 || !fi.mtime.After(after) || claimed(fi.id) {
			continue
		}
		h, err := headOf(fi)
		if err != nil {
			t.logErr("recover "+fi.path, slog.LevelWarn, "cannot read rotated file written while down, not reading it", "path", fi.path, "err", err)
			continue
		}
		if len(h) == 0 {
			continue
		}
		if cp, ok := t.coveredBy(h); ok {
			t.log.Debug("rotated file begins like a checkpointed file, not reading it", "path", fi.path, "checkpoint", cp.Path)
			continue
		}
		cands = append(cands, fi)
		eligible[fi.id] = true
	}
	var out []*follower
	for i, r := range cands {
		hr := heads[r.id]
		isCopy := false
		for _, f := range order {
			if f.id == r.id {
				continue
			}
			hf, err := headOf(f)
			if err != nil || len(hf) < len(hr) || !bytes.Equal(hf[:len(hr)], hr) {
				continue
			}
			// f begins with all of r's first bytes: r is a copy of f (or
			// f of r). Of two candidates, the longer one is read, or
			// the first of two of the same size.
			if eligible[f.id] && (f.size < r.size || f.size == r.size && slices.Index(cands, f) > i) {
				continue
			}
			t.log.Info("rotated file written while down is a copy of another file, not reading it", "path", r.path, "copy_of", f.path)
			isCopy = true
			break
		}
		if isCopy {
			continue
		}
		fl, err := t.openFollower(r.path, r.id, Checkpoint{Source: t.cfg.Source})
		if err != nil {
			t.logErr("recover "+r.path, slog.LevelWarn, "cannot open rotated file written while down, not reading it", "path", r.path, "err", err)
			continue
		}
		t.log.Info("reading rotated file written while logtally was down", "path", r.path, "bytes", r.size, "modified", r.mtime, "since", since)
		out = append(out, fl)
	}
	return out
}

// coveredBy returns a restored checkpoint whose fingerprint covers the
// start of head: a file beginning with head holds what that checkpoint's
// file held when it was read (up to FPLen bytes at least).
func (t *Tailer) coveredBy(head []byte) (Checkpoint, bool) {
	for _, cp := range t.cfg.Checkpoints {
		if cp.FPLen > 0 && cp.FPLen <= len(head) && fnvExtend(fnvOffset64, head[:cp.FPLen]) == cp.FPSum {
			return cp, true
		}
	}
	return Checkpoint{}, false
}

// readHead returns the first (up to FingerprintSize) bytes of the file at
// path.
func readHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, FingerprintSize)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return buf[:n], nil
}

// rescan retries the waiting checkpoints, re-expands the globs and follows
// new files from 0.
func (t *Tailer) rescan(ctx context.Context) {
	if err := t.retryWaiting(ctx); err != nil {
		return
	}
	for _, fi := range t.expand() {
		if ctx.Err() != nil {
			return
		}
		if t.claimed(fi.id) {
			continue
		}
		if t.isCopy(fi.path, t.heads(fi.id)) {
			continue
		}
		fl, err := t.openFollower(fi.path, fi.id, Checkpoint{Source: t.cfg.Source})
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				t.logErr("open "+fi.path, slog.LevelWarn, "cannot open file", "err", err, "path", fi.path)
			}
			continue
		}
		fl.fresh, fl.pubFresh = true, true
		if !t.claim(fl) {
			fl.close()
			continue
		}
		t.log.Info("following new file", "path", fi.path)
		t.spawn(ctx, fl)
	}
}

// resume opens the file at path for checkpoint cp if it is still cp's file
// (size at least cp.Offset, fingerprint matching). wait reports an error
// other than not-exist: the file's state is unknown, so the checkpoint is
// kept and tried again at every rescan.
func (t *Tailer) resume(cp Checkpoint, path string) (fl *follower, wait bool) {
	fl, err := t.openFollower(path, cp.File, cp)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, false
		}
		t.logErr("keep "+path, slog.LevelWarn, "cannot open file, keeping its checkpoint", "path", path, "err", err)
		return nil, true
	}
	st, err := fl.f.Stat()
	if err != nil {
		fl.close()
		t.logErr("keep "+path, slog.LevelWarn, "cannot stat file, keeping its checkpoint", "path", path, "err", err)
		return nil, true
	}
	if st.Size() < cp.Offset {
		fl.close()
		return nil, false
	}
	ok, err := fingerprintMatches(fl.f, cp.FPLen, cp.FPSum)
	if err != nil {
		fl.close()
		t.logErr("keep "+path, slog.LevelWarn, "cannot read fingerprint, keeping its checkpoint", "path", path, "err", err)
		return nil, true
	}
	if !ok {
		fl.close()
		return nil, false
	}
	return fl, false
}

// retryWaiting tries the checkpoints whose files could not be read at start
// again: resumed once readable, dropped (Done) once the file is gone or is
// no longer the checkpoint's. Only Run's goroutine uses t.waiting.
func (t *Tailer) retryWaiting(ctx context.Context) error {
	for id, cp := range t.waiting {
		var fl *follower
		st, err := os.Stat(cp.Path)
		switch {
		case err != nil && !errors.Is(err, os.ErrNotExist):
			t.logErr("keep "+cp.Path, slog.LevelWarn, "cannot stat file, keeping its checkpoint", "path", cp.Path, "err", err)
			continue
		case err == nil:
			if got, _, ok := statID(st); ok && got == id {
				var wait bool
				if fl, wait = t.resume(cp, cp.Path); wait {
					continue
				}
			}
		}
		delete(t.waiting, id)
		if fl != nil {
			t.mu.Lock()
			t.files[id] = fl
			t.mu.Unlock()
			t.log.Info("resuming file", "path", cp.Path, "offset", cp.Offset)
			t.spawn(ctx, fl)
			continue
		}
		t.log.Info("dropping checkpoint of a file that is gone", "path", cp.Path, "offset", cp.Offset)
		err = t.send(ctx, Chunk{Checkpoint: cp, Start: cp.Offset, Done: true})
		t.release(id, nil)
		if err != nil {
			return err
		}
	}
	return nil
}

// heads returns the leading bytes of every followed file but skip's.
func (t *Tailer) heads(skip FileID) [][]byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	var hs [][]byte
	for id, fl := range t.files {
		if fl != nil && id != skip && len(fl.pubHead) > 0 {
			hs = append(hs, fl.pubHead)
		}
	}
	return hs
}

// planHeads returns the leading bytes of the planned followers.
func planHeads(plan []*follower) [][]byte {
	var hs [][]byte
	for _, fl := range plan {
		if len(fl.head) > 0 {
			hs = append(hs, fl.head)
		}
	}
	return hs
}

// copyState compares the first bytes of a file with heads, the leading
// bytes of followed files. full: the file begins with one of them, so it is
// a copy of a followed file and is left alone (if the original is then
// truncated, its follower adopts the copy at the right offset). partial:
// the whole file is a prefix of one of them (a copy being written, or a new
// file too short to tell), so it is not read yet.
func copyState(r io.ReaderAt, heads [][]byte) (full, partial bool) {
	if len(heads) == 0 {
		return false, false
	}
	var buf [FingerprintSize]byte
	n, err := r.ReadAt(buf[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return false, false
	}
	b := buf[:n]
	for _, h := range heads {
		switch {
		case len(b) >= len(h) && bytes.Equal(b[:len(h)], h):
			return true, false
		case len(b) < len(h) && bytes.Equal(b, h[:len(b)]):
			partial = true
		}
	}
	return false, partial
}

// isCopy reports whether the file at path begins with one of heads.
func (t *Tailer) isCopy(path string, heads [][]byte) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	full, _ := copyState(f, heads)
	if full {
		t.logErr("copy "+path, slog.LevelInfo, "not following a copy of a followed file", "path", path)
	}
	return full
}

// expand returns the regular, uncompressed files the globs match.
func (t *Tailer) expand() []fileInfo {
	var out []fileInfo
	seen := make(map[string]bool)
	for _, pat := range t.cfg.Paths {
		paths, _ := filepath.Glob(pat) // pattern validated in New
		for _, p := range paths {
			if seen[p] || Compressed(p) {
				continue
			}
			seen[p] = true
			if fi, ok := t.statFile(p); ok {
				fi.matched = true
				out = append(out, fi)
			}
		}
	}
	return out
}

// candidates returns the rotated candidates of path: uncompressed regular
// files named path.* or path-*.
func (t *Tailer) candidates(path string) []fileInfo {
	var out []fileInfo
	base := escapeGlob(path)
	for _, pat := range []string{base + ".*", base + "-*"} {
		paths, _ := filepath.Glob(pat)
		for _, p := range paths {
			if Compressed(p) {
				continue
			}
			if fi, ok := t.statFile(p); ok {
				fi.matched = t.matches(p)
				out = append(out, fi)
			}
		}
	}
	return out
}

// statFile stats a regular file; errors other than not-exist are logged.
func (t *Tailer) statFile(p string) (fileInfo, bool) {
	st, err := os.Stat(p)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			t.logErr("stat "+p, slog.LevelWarn, "cannot stat file", "err", err, "path", p)
		}
		return fileInfo{}, false
	}
	if !st.Mode().IsRegular() {
		return fileInfo{}, false
	}
	id, _, ok := statID(st)
	if !ok {
		return fileInfo{}, false
	}
	return fileInfo{path: p, id: id, size: st.Size(), mtime: st.ModTime()}, true
}

// matches reports whether path is matched by one of the globs.
func (t *Tailer) matches(path string) bool {
	if Compressed(path) {
		return false
	}
	for _, pat := range t.cfg.Paths {
		if ok, _ := filepath.Match(pat, path); ok {
			return true
		}
	}
	return false
}

// locate finds the glob match that is the file id, if any.
func (t *Tailer) locate(id FileID) (string, bool) {
	for _, fi := range t.expand() {
		if fi.id == id {
			return fi.path, true
		}
	}
	return "", false
}

// findCopy looks among the rotated candidates of path for a copy of the
// file old describes (another file whose first old.FPLen bytes hash to
// old.FPSum and that holds at least old.Offset bytes) that nobody reads.
// The copy is claimed and returned as a follower at old.Offset. A copy that
// a fresh follower holds but has not started reading (found by a rescan
// while it was being written) is taken over.
func (t *Tailer) findCopy(old Checkpoint, path string) *follower {
	if old.FPLen == 0 {
		return nil
	}
	for _, fi := range t.candidates(path) {
		if fi.id == old.File || fi.size < old.Offset {
			continue
		}
		if ok, _ := fileFingerprintMatches(fi.path, old.FPLen, old.FPSum); !ok {
			continue
		}
		c := old
		c.File, c.Path = fi.id, fi.path
		fl, err := t.openFollower(fi.path, fi.id, c)
		if err != nil {
			t.logErr("open "+fi.path, slog.LevelWarn, "cannot open copy of truncated file", "err", err, "path", fi.path)
			continue
		}
		if !t.claimCopy(fl) {
			fl.close()
			continue
		}
		return fl
	}
	return nil
}

// claimCopy registers fl unless its file is claimed by a follower that has
// read from it; a fresh follower that has not is told to stop.
func (t *Tailer) claimCopy(fl *follower) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if cur, ok := t.files[fl.id]; ok {
		if cur == nil || !cur.pubFresh {
			return false
		}
		cur.stolen = true
	}
	t.files[fl.id] = fl
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
	return true
}

func (t *Tailer) claimed(id FileID) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.files[id]
	return ok
}

// release forgets id if it is held by fl (nil for a reservation).
func (t *Tailer) release(id FileID, fl *follower) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if cur, ok := t.files[id]; ok && cur == fl {
		delete(t.files, id)
	}
}

// spawn runs fl in a goroutine Run waits for. Once ctx is cancelled it
// closes fl instead: files released by exiting followers must not be
// picked up again and read from 0.
func (t *Tailer) spawn(ctx context.Context, fl *follower) {
	if ctx.Err() != nil {
		fl.exit()
		return
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		fl.run(ctx)
	}()
}

// Started returns a channel closed once Run has resolved the restored
// checkpoints and sent every chunk of that start (Done chunks of dropped
// checkpoints, checkpoints of files recovered by Config.Since). A caller
// that commits checkpoints should not commit before every tailer has
// started: see Config.Since.
func (t *Tailer) Started() <-chan struct{} { return t.started }

// triggerRescan asks Run to re-expand the globs now.
func (t *Tailer) triggerRescan() {
	select {
	case t.rescanNow <- struct{}{}:
	default:
	}
}

// send hands c on, waiting for the consumer. Nothing is sent once ctx is
// cancelled.
func (t *Tailer) send(ctx context.Context, c Chunk) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case t.out <- c:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// logErr logs at most once per errLogEvery for each key.
func (t *Tailer) logErr(key string, level slog.Level, msg string, args ...any) {
	now := t.clk.Now()
	t.errMu.Lock()
	last, ok := t.errLogged[key]
	if ok && now.Sub(last) < errLogEvery {
		t.errMu.Unlock()
		return
	}
	t.errLogged[key] = now
	t.errMu.Unlock()
	t.log.Log(context.Background(), level, msg, args...)
}

// openFollower opens path and checks it is still the file id.
func (t *Tailer) openFollower(path string, id FileID, cp Checkpoint) (*follower, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	got, _, ok := statID(st)
	if !ok || got != id {
		f.Close()
		return nil, fmt.Errorf("open %s: %w (replaced while opening)", path, os.ErrNotExist)
	}
	fpLen, fpSum := cp.FPLen, cp.FPSum
	if fpLen == 0 {
		fpSum = fnvOffset64
	}
	head := make([]byte, fpLen)
	n, _ := f.ReadAt(head, 0) // a short read shows as a fingerprint mismatch later
	head = head[:n]
	return &follower{
		t: t, f: f, id: id, path: path,
		off: cp.Offset, pos: cp.Offset,
		fpLen: fpLen, fpSum: fpSum, head: head,
		pubPath: path, pubHead: head,
	}, nil
}

var compressedExt = []string{".gz", ".zst", ".bz2", ".xz", ".lz4", ".zip"}

// Compressed reports whether path names a compressed archive by its
// extension (.gz, .zst, .bz2, .xz, .lz4, .zip). The tailer never follows
// those; `logtally replay` reads them.
func Compressed(path string) bool {
	lower := strings.ToLower(path)
	for _, ext := range compressedExt {
		if strings.HasSuffix(lower, ext) {
			return true
		}
	}
	return false
}

// escapeGlob quotes the glob metacharacters in a literal path.
func escapeGlob(p string) string {
	var b strings.Builder
	for _, r := range p {
		switch r {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
