package flusher

// The resume point of a sealed batch: written and read here, shown to
// people through Resume.String (pipeline's status, `logtally state`).

import (
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/logtally/logtally/buffer"
)

// Resume is where writing a sealed batch resumes. The flusher saves it
// after each chunk as the batch's progress (buffer.Batch.Progress, opaque
// to the buffer): empty before the first chunk is acknowledged, else one
// byte for the pass (minute 0, daily 1, monthly 2, sites 3, done 4, and
// in a batch of the tails layout minute tails 5 and daily and monthly
// tails 6: passOrder) followed by the buffer key the pass's next chunk
// starts at (none: the pass's first key; a tail pass's chunks begin at a
// site's first key). A minute-only batch is written once its minute
// passes are. The encoding is this file's alone: the flusher writes and
// reads it, and everything else shows it with String.
type Resume struct {
	// Progress is the saved resume point, as encoded above.
	Progress []byte
	// MinuteOnly is the batch's kind (buffer.Batch.MinuteOnly).
	MinuteOnly bool
	// Layout is the batch's layout (buffer.Batch.Layout).
	Layout buffer.Layout
}

// ResumeOf returns where writing batch resumes.
func ResumeOf(batch *buffer.Batch) Resume {
	return Resume{Progress: batch.Progress, MinuteOnly: batch.MinuteOnly, Layout: batch.Layout}
}

// encodeProgress encodes pass p, resuming at buffer key next (nil: the
// pass's first key).
func encodeProgress(p pass, next []byte) []byte {
	return append([]byte{byte(p)}, next...)
}

// known reports whether the progress is one this version writes: a pass
// of the batch's layout, or done.
func (r Resume) known() bool {
	return len(r.Progress) > 0 && slices.Contains(passOrder[r.Layout], pass(r.Progress[0]))
}

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

// written reports whether pass p is at or past last in the batch's
// order: nothing is left to write.
func (r Resume) written(p, last pass) bool {
	order := passOrder[r.Layout]
	return slices.Index(order, p) >= slices.Index(order, last)
}

// String says where writing resumes, for people: "start"; "<pass> pass,
// from its first bucket"; "<pass> pass, from site … page … at <time>";
// "sites pass (the sites' daily totals)"; "every pass written,
// acknowledgement pending"; or, for progress this version does not know,
// its bytes in hex and that the batch is written again from the start.
// The tail passes are "minute tails pass" and "daily and monthly tails
// pass" (the cold pages' counts, a site at a time).
func (r Resume) String() string {
	if len(r.Progress) == 0 {
		return "start"
	}
	if !r.known() {
		return "0x" + hex.EncodeToString(r.Progress) + " (unknown: written again from the start)"
	}
	p, next, last := r.at()
	switch {
	case r.written(p, last):
		return "every pass written, acknowledgement pending"
	case p == sitePass:
		return "sites pass (the sites' daily totals)"
	case p.tails() && next == nil:
		return p.String() + " pass (the cold pages' counts), from its first site"
	case next == nil:
		return p.String() + " pass, from its first bucket"
	}
	site, page, sec, err := buffer.DecodeKey(next)
	if err != nil {
		return p.String() + " pass, from key 0x" + hex.EncodeToString(next)
	}
	if p.tails() {
		return fmt.Sprintf("%s pass (the cold pages' counts), from site %q", p, site)
	}
	return fmt.Sprintf("%s pass, from site %q page %q at %s", p, site, page, time.Unix(sec, 0).UTC().Format(time.RFC3339))
}
