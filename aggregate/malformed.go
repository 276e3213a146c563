package aggregate

import (
	"bytes"
	"context"
	"log/slog"
	"time"

	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/stream"
)

// malformedLog is the logging state of one file's malformed lines.
type malformedLog struct {
	logged     int       // lines logged in full
	suppressed int       // lines not logged since last
	last       time.Time // when a line was last logged
}

// malformedLogs is the log of the malformed lines read: each file's
// logging state, and OnMalformed's function.
type malformedLogs struct {
	byFile map[stream.FileID]*malformedLog
	on     func(n uint64, out parser.Outcome, length int) // OnMalformed's
}

// forget drops the logging state of a file finished.
func (ml *malformedLogs) forget(f stream.FileID) { delete(ml.byFile, f) }

// logMalformed logs the first malformedLogged malformed lines of each file
// with their position, then one per malformedEvery with how many were not
// logged in between. All are counted in Stats. A line's contents are never
// logged at WARN (they may be anything the daemon can read: a symlink to
// /etc/shadow, a credential file), nor kept for /status: the reason, the
// file, the byte offset and the length say enough. At debug level only,
// a second record shows the first debugPrefixLen bytes, escaped.
func (s *Summer) logMalformed(cp stream.Checkpoint, end int64, out parser.Outcome, line []byte) {
	m := s.malformed.byFile[cp.File]
	if m == nil {
		m = &malformedLog{}
		s.malformed.byFile[cp.File] = m
	}
	now := s.clock.Now()
	if m.logged >= malformedLogged && now.Sub(m.last) < malformedEvery {
		m.suppressed++
		return
	}
	m.logged++
	m.last = now
	offset := max(0, end-int64(len(line))-1) // end is past the '\n'
	s.log.Warn("malformed line skipped", "path", cp.Path, "offset", offset, "length", len(line), "reason", out.String(),
		"not_logged_since_last", m.suppressed)
	m.suppressed = 0
	if s.log.Enabled(context.Background(), slog.LevelDebug) {
		s.log.Debug("malformed line: its first bytes", "path", cp.Path, "offset", offset, "prefix", debugPrefix(line))
	}
}

// debugPrefixLen is how many bytes of a malformed line a debug record
// shows.
const debugPrefixLen = 32

// debugPrefix returns the first debugPrefixLen bytes of line with every
// byte that is not printable ASCII (or is a backslash) escaped as \xHH.
func debugPrefix(line []byte) string {
	line = bytes.TrimRight(line, "\r\n")
	cut := len(line) > debugPrefixLen
	if cut {
		line = line[:debugPrefixLen]
	}
	const hex = "0123456789abcdef"
	b := make([]byte, 0, 4*len(line)+3)
	for _, c := range line {
		if c < 0x20 || c >= 0x7f || c == '\\' {
			b = append(b, '\\', 'x', hex[c>>4], hex[c&15])
			continue
		}
		b = append(b, c)
	}
	if cut {
		b = append(b, "..."...)
	}
	return string(b)
}
