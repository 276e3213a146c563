package replay

// Replay, before reading: the files checked, their sources and parsers.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/logtally/logtally/archive"
	"github.com/logtally/logtally/fnv1a"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/stream"
)

// prepareReplay checks every file and its parser settings, before
// anything is read. It returns the files and the parser settings of their
// aggregator source names (Target.OpenReplay).
func (s *Service) prepareReplay(req Request) ([]*replayFile, map[string]parser.Config, error) {
	if len(req.Files) == 0 {
		return nil, nil, errors.New("no files to replay")
	}
	followed := map[stream.FileID]string{}
	for _, f := range s.state.Followed() {
		followed[f.ID] = f.Path
	}
	stored, err := s.state.Checkpoints()
	if err != nil {
		return nil, nil, err
	}
	held := map[stream.FileID]stream.Checkpoint{} // by the stored checkpoints
	var streams []stream.Checkpoint               // the streams this logtally holds
	for _, cp := range stored {
		held[cp.File] = cp
		streams = append(streams, cp)
	}
	if !s.cfg.NoTail {
		streams = append(streams, followedHeads(followed)...)
	}
	var errs []error
	var files []*replayFile
	configs := map[string]parser.Config{} // aggregator source name -> parser config
	seen := map[string]bool{}
	for _, path := range req.Files {
		if seen[path] {
			continue
		}
		seen[path] = true
		fi, err := os.Stat(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !fi.Mode().IsRegular() {
			errs = append(errs, fmt.Errorf("%s: not a regular file", path))
			continue
		}
		if id, ok := stream.IDOf(fi); ok && !s.cfg.NoTail {
			at := followed[id]
			if cp, ok := held[id]; ok && at == "" {
				// A stored checkpoint names it unless the inode was
				// reused: then the first bytes differ.
				if same, _ := stream.HasFingerprint(path, cp.FPLen, cp.FPSum); same {
					at = cp.Path
				}
			}
			if at != "" {
				errs = append(errs, fmt.Errorf("%s: this logtally follows it (as %s): it is counted as it is written, not replayed", path, at))
				continue
			}
		}
		name, pc, err := s.replayConfig(req, path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if _, ok := configs[name]; !ok {
			configs[name] = pc
		}
		head, kind, err := archive.Head(path)
		var damage error // damaged before any byte: nothing to read
		switch {
		case archive.IsDamaged(err) && len(head) == 0:
			damage = err
		case err != nil && !archive.IsDamaged(err):
			// (Damaged past its first bytes: Stream reports it, after
			// counting its whole lines.)
			errs = append(errs, err)
			continue
		}
		// A followed file and its copies are one stream (stream.Same):
		// beside the tailers, the tailer counts it; with none running,
		// it starts where the checkpoint or the ledger says, the further.
		_, cp := stream.Start(head, 0, streams)
		if cp != nil && !s.cfg.NoTail {
			errs = append(errs, fmt.Errorf("%s: this logtally follows it (as %s: the same first bytes): it is counted as it is written, not replayed", path, cp.Path))
			continue
		}
		f := &replayFile{File: File{Path: path, Compression: string(kind)}, source: name, head: head, size: fi.Size()}
		if cp != nil {
			f.held, f.live = *cp, true
		}
		switch {
		case damage != nil:
			f.Status, f.damage = StatusDamaged, damage
		case len(head) == 0:
			f.Status = StatusEmpty
		}
		files = append(files, f)
	}
	if len(errs) > 0 {
		return nil, nil, fmt.Errorf("nothing was read: %w", errors.Join(errs...))
	}
	for name, pc := range configs {
		// First hit times, with a parser of its own (the aggregator's is
		// its goroutine's).
		first, err := parser.New(pc)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", strings.TrimPrefix(name, SourcePrefix), err)
		}
		for _, f := range files {
			if f.source == name {
				f.First = firstHit(first, f.head)
			}
		}
	}
	return files, configs, nil
}

// followedHeads returns the followed files' first bytes, read now, as
// checkpoints (path and fingerprint): a file followed with no checkpoint
// stored yet is held too.
func followedHeads(followed map[stream.FileID]string) []stream.Checkpoint {
	var out []stream.Checkpoint
	for id, path := range followed {
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		var b [stream.FingerprintSize]byte
		n, _ := io.ReadFull(f, b[:])
		st, err := f.Stat()
		f.Close()
		if got, ok := stream.IDOf(st); err != nil || !ok || got != id || n == 0 {
			continue // replaced meanwhile: its stored checkpoint holds it
		}
		out = append(out, stream.Checkpoint{Path: path, File: id, FPLen: n, FPSum: fnv1a.Extend(fnv1a.Offset, b[:n])})
	}
	return out
}

// SourcePrefix begins the aggregator source names of replayed files
// (and so their ledger marks' Source).
const SourcePrefix = "replay:"

// replayConfig returns the aggregator source name and parser settings of a
// replayed file.
func (s *Service) replayConfig(req Request, path string) (string, parser.Config, error) {
	var src *Source
	if req.Source != "" {
		for i := range s.cfg.Sources {
			if s.cfg.Sources[i].Name == req.Source {
				src = &s.cfg.Sources[i]
			}
		}
		if src == nil {
			return "", parser.Config{}, fmt.Errorf("no source named %q in the config", req.Source)
		}
	} else {
		var err error
		if src, err = s.sourceOf(path); err != nil {
			return "", parser.Config{}, err
		}
	}
	var pc parser.Config
	name := SourcePrefix
	if src != nil {
		pc, name = src.Parser, name+src.Name
	} else if req.Site == "" || req.Format == "" {
		return "", pc, fmt.Errorf("%s: no source's globs or rotated names match it: give -site and -format (or -source NAME)", path)
	}
	if req.Site != "" {
		pc.Site, name = req.Site, name+"@"+req.Site
	}
	if req.Format != "" {
		pc.Format, name = req.Format, name+"/"+req.Format
	}
	if req.LogFormat != "" {
		pc.LogFormat = req.LogFormat
	}
	pc.Since, pc.Until = req.Since, req.Until
	return name, pc, nil
}

// sourceOf returns the source whose globs match path, or the rotated names
// of their matches (path.* and path-*, compressed ones too); else the one
// source whose globs match it by base name alone (archives kept in another
// directory). Several sources matching by base name is an error.
func (s *Service) sourceOf(path string) (*Source, error) {
	var byName []*Source
	for i, src := range s.cfg.Sources {
		for _, g := range src.Paths {
			for _, suffix := range []string{"", ".*", "-*"} {
				if ok, _ := filepath.Match(g+suffix, path); ok {
					return &s.cfg.Sources[i], nil
				}
				if ok, _ := filepath.Match(filepath.Base(g)+suffix, filepath.Base(path)); ok {
					if !slices.Contains(byName, &s.cfg.Sources[i]) {
						byName = append(byName, &s.cfg.Sources[i])
					}
				}
			}
		}
	}
	switch len(byName) {
	case 0:
		return nil, nil
	case 1:
		return byName[0], nil
	}
	names := make([]string, len(byName))
	for i, src := range byName {
		names[i] = src.Name
	}
	return nil, fmt.Errorf("%s: its name matches the globs of sources %s: choose one with -source NAME", path, strings.Join(names, ", "))
}

// firstHit returns the time of the first line in head that parses, or
// zero.
func firstHit(p *parser.Parser, head []byte) time.Time {
	var h parser.Hit
	for line := range bytes.SplitSeq(head, []byte("\n")) {
		if p.Parse(line, &h) == parser.OK {
			return time.Unix(h.Time, 0).UTC()
		}
	}
	return time.Time{}
}
