package flusher

import (
	"slices"
	"strings"
	"testing"

	"github.com/logtally/logtally/buffer"
)

// Every resume point the flusher saves while it writes a batch is
// described as the pass it resumes at: the description and the writer
// read one encoding (issue 31: a description of its own had drifted,
// calling the sites pass "every pass written" and the end 0x04). A batch
// of the tails layout saves its tail passes' points too, each pass in its
// order.
func TestResumeDescribesEverySavedPoint(t *testing.T) {
	for _, layout := range []buffer.Layout{buffer.LayoutPages, buffer.LayoutTails} {
		var e *env // one bucket per chunk: several chunks per pass
		if layout == buffer.LayoutTails {
			e = newTailEnv(t, 1)
			tailPlans(t, e)
			e.commit(t, tailHits()...)
		} else {
			e = newEnv(t, 1)
			e.commit(t, small()...)
		}
		var seen []pass
		testHooks(e.f).afterChunk = func(p pass, _ int) error {
			batch, err := e.sealed()
			if err != nil || batch == nil {
				t.Fatalf("after a chunk of the %s pass: sealed %v, %v", p, batch, err)
			}
			r := ResumeOf(batch)
			r.Layout = e.f.layoutOf(batch) // the pages layout: the hook's
			if r.Layout != layout {
				t.Fatalf("batch of layout %d, want %d", r.Layout, layout)
			}
			got := r.String()
			want := p.String() + " pass"
			if p >= donePass && !p.tails() {
				want = "every pass written, acknowledgement pending"
			}
			if !strings.HasPrefix(got, want) {
				t.Errorf("layout %d: resume point %x saved before the %s pass: described %q, want %q…", layout, batch.Progress, p, got, want)
			}
			if p.tails() && strings.Contains(got, "page \"") {
				t.Errorf("a tail pass's point names a page: %q", got)
			}
			if n := len(seen); n == 0 || seen[n-1] != p {
				seen = append(seen, p)
			}
			return nil
		}
		e.flush(t)
		if want := passOrder[layout]; !slices.Equal(seen, want) {
			t.Errorf("layout %d: resume points saved at %v, want %v", layout, seen, want)
		}
		if layout == buffer.LayoutTails {
			e.checkTails(t, tailCold)
		} else {
			e.check(t)
		}
	}
	if got := (Resume{}).String(); got != "start" {
		t.Errorf("empty resume point: %q, want start", got)
	}
	// A tail pass's point in a batch of the pages layout is none of its.
	if got := (Resume{Progress: []byte{byte(minuteTailPass)}}).String(); !strings.Contains(got, "unknown") {
		t.Errorf("a tail pass in a pages batch: %q, want unknown", got)
	}
}
