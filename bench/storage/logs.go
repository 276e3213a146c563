package main

// The logs: the real log's figures, the hot log, and the salts a replay
// of old days needs to count visitors.

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"fmt"
	"hash/fnv"
	"os"
	"slices"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/internal/loggen"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/visitor"
)

// logFigures is what the parser finds in a log: what the buckets must
// hold, and its span.
type logFigures struct {
	lines, hits int64
	size        int64
	pages       int     // distinct pages
	days        []int64 // the UTC days holding hits (their start, Unix seconds), in order
	first, last time.Time
}

// scanLog parses the log at path as logtally does (parser.Config{Format,
// Site}, the replay's -format and -site) and returns its figures.
func scanLog(path, site, format string) (logFigures, error) {
	var f logFigures
	p, err := parser.New(parser.Config{Format: format, Site: site})
	if err != nil {
		return f, err
	}
	fh, err := os.Open(path)
	if err != nil {
		return f, err
	}
	defer fh.Close()
	if st, err := fh.Stat(); err == nil {
		f.size = st.Size()
	}
	pages := map[string]struct{}{}
	days := map[int64]bool{}
	var h parser.Hit
	var lo, hi int64
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f.lines++
		if p.Parse(sc.Bytes(), &h) != parser.OK {
			continue
		}
		if f.hits == 0 || h.Time < lo {
			lo = h.Time
		}
		if f.hits == 0 || h.Time > hi {
			hi = h.Time
		}
		f.hits++
		if _, ok := pages[string(h.Page)]; !ok {
			pages[string(h.Page)] = struct{}{}
		}
		start, _ := visitor.Day.Bounds(h.Time)
		if !days[start] {
			days[start] = true
			f.days = append(f.days, start)
		}
	}
	if err := sc.Err(); err != nil {
		return f, err
	}
	f.pages = len(pages)
	f.first, f.last = time.Unix(lo, 0).UTC(), time.Unix(hi, 0).UTC()
	slices.Sort(f.days)
	return f, nil
}

// writeHotLog writes lines combined lines of internal/loggen (bench/gen's
// lines: times over about a day, 12 lines a second, its status, size and
// user-agent mix) with each request's path replaced by one of pages pages,
// "/hot/<n>", picked by a hash of loggen's path: a few pages each hit
// about every second, the traffic the preallocated shapes are for (every
// minute and hour of their day holds counts). The lines depend only on
// seed.
func writeHotLog(path string, lines, pages int, seed uint64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	g := loggen.New(seed)
	var b, out []byte
	for range lines {
		b = g.Append(b[:0], false)
		out, err = hotPath(out[:0], b, pages)
		if err != nil {
			f.Close()
			return err
		}
		out = append(out, '\n')
		w.Write(out)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// hotPath appends line to dst with the path of its request ("METHOD
// /path?query HTTP/1.1") replaced by "/hot/<n>", n the path's FNV-1a hash
// modulo pages; the query goes too.
func hotPath(dst, line []byte, pages int) ([]byte, error) {
	q := bytes.IndexByte(line, '"')
	if q < 0 {
		return nil, fmt.Errorf("no request in %q", line)
	}
	sp := bytes.IndexByte(line[q:], ' ')
	if sp < 0 {
		return nil, fmt.Errorf("no path in %q", line)
	}
	start := q + sp + 1
	end := bytes.Index(line[start:], []byte(" HTTP/"))
	if end < 0 {
		return nil, fmt.Errorf("no protocol in %q", line)
	}
	end += start
	target := line[start:end]
	if i := bytes.IndexByte(target, '?'); i >= 0 {
		target = target[:i]
	}
	h := fnv.New32a()
	h.Write(target)
	dst = append(dst, line[:start]...)
	dst = fmt.Appendf(dst, "/hot/%d", h.Sum32()%uint32(pages))
	return append(dst, line[end:]...), nil
}

// seedSalts puts a salt for each of days into the buffer file at path (the
// state dir's, before the replay opens it), expiring at expires. A host
// running on those days would have held them; a replay of old days finds
// them deleted (salts.Keeper fetches only the current period's, the next
// and the previous one's) and counts no visitors. With them, and a
// salt_grace long enough that the keeper does not expire them at once,
// the replay writes the visitors documents a host running then would have.
func seedSalts(path string, days []int64, expires time.Time) error {
	b, err := buffer.Open(path, buffer.Options{})
	if err != nil {
		return err
	}
	for _, d := range days {
		var s visitor.Salt
		if _, err := rand.Read(s[:]); err != nil {
			b.Close()
			return err
		}
		if err := b.Update(func(tx *buffer.Tx) error {
			return tx.PutSalt(buffer.SaltEntry{ID: visitor.Day.ID(d), Salt: s, Expires: expires})
		}); err != nil {
			b.Close()
			return err
		}
	}
	return b.Close()
}
