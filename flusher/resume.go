package flusher

// The resume point of a sealed batch: written and read here, shown to
// people through Resume.String (pipeline's status, `logtally state`).

import (
	"encoding/hex"
	"fmt"
	"time"

	"github.com/logtally/logtally/buffer"
)

// Resume is where writing a sealed batch resumes. The flusher saves it
// after each chunk as the batch's progress (buffer.Batch.Progress, opaque
// to the buffer): empty before the first chunk is acknowledged, else one
// byte for the pass (minute 0, daily 1, monthly 2, sites 3, done 4)
// followed by the buffer key the pass's next chunk starts at (none: the
// pass's first key). A minute-only batch is written once its minute pass
// is. The encoding is this file's alone: the flusher writes and reads it,
// and everything else shows it with String.
type Resume struct {
	// Progress is the saved resume point, as encoded above.
	Progress []byte
	// MinuteOnly is the batch's kind (buffer.Batch.MinuteOnly).
	MinuteOnly bool
}

// ResumeOf returns where writing batch resumes.
func ResumeOf(batch *buffer.Batch) Resume {
	return Resume{Progress: batch.Progress, MinuteOnly: batch.MinuteOnly}
}

// encodeProgress encodes pass p, resuming at buffer key next (nil: the
// pass's first key).
func encodeProgress(p pass, next []byte) []byte {
	return append([]byte{byte(p)}, next...)
}

// known reports whether the progress is one this version writes: a pass
// byte no greater than donePass.
func (r Resume) known() bool { return len(r.Progress) > 0 && pass(r.Progress[0]) <= donePass }

// at returns the pass writing resumes at, the key its next chunk starts at
// (nil: the pass's first key) and the pass that ends the batch's write
// (donePass, or dailyPass for a minute-only batch). An empty or unknown
// progress is the minute pass's start: the batch is written again whole,
// which its guard makes harmless.
func (r Resume) at() (p pass, next []byte, last pass) {
	last = donePass
	if r.MinuteOnly {
		last = dailyPass // its counts wait for a full batch
	}
	if !r.known() {
		return minutePass, nil, last
	}
	if len(r.Progress) > 1 {
		next = r.Progress[1:]
	}
	return pass(r.Progress[0]), next, last
}

// String says where writing resumes, for people: "start"; "<pass> pass,
// from its first bucket"; "<pass> pass, from site … page … at <time>";
// "sites pass (the sites' daily totals)"; "every pass written,
// acknowledgement pending"; or, for progress this version does not know,
// its bytes in hex and that the batch is written again from the start.
func (r Resume) String() string {
	if len(r.Progress) == 0 {
		return "start"
	}
	if !r.known() {
		return "0x" + hex.EncodeToString(r.Progress) + " (unknown: written again from the start)"
	}
	p, next, last := r.at()
	switch {
	case p >= last:
		return "every pass written, acknowledgement pending"
	case p == sitePass:
		return "sites pass (the sites' daily totals)"
	case next == nil:
		return p.String() + " pass, from its first bucket"
	}
	site, page, sec, err := buffer.DecodeKey(next)
	if err != nil {
		return p.String() + " pass, from key 0x" + hex.EncodeToString(next)
	}
	return fmt.Sprintf("%s pass, from site %q page %q at %s", p, site, page, time.Unix(sec, 0).UTC().Format(time.RFC3339))
}
