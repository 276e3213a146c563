package flusher

import (
	"strings"
	"testing"
)

// Every resume point the flusher saves while it writes a batch is
// described as the pass it resumes at: the description and the writer
// read one encoding (issue 31: a description of its own had drifted,
// calling the sites pass "every pass written" and the end 0x04).
func TestResumeDescribesEverySavedPoint(t *testing.T) {
	e := newEnv(t, 1) // one bucket per chunk: several chunks per pass
	e.commit(t, small()...)
	seen := map[pass]bool{}
	testHooks(e.f).afterChunk = func(p pass, _ int) error {
		batch, err := e.sealed()
		if err != nil || batch == nil {
			t.Fatalf("after a chunk of the %s pass: sealed %v, %v", p, batch, err)
		}
		got := ResumeOf(batch).String()
		want := p.String() + " pass"
		if p >= donePass {
			want = "every pass written, acknowledgement pending"
		}
		if !strings.HasPrefix(got, want) {
			t.Errorf("resume point %x saved before the %s pass: described %q, want %q…", batch.Progress, p, got, want)
		}
		seen[p] = true
		return nil
	}
	e.flush(t)
	for p := minutePass; p <= donePass; p++ {
		if !seen[p] {
			t.Errorf("no resume point saved at the %s pass", p)
		}
	}
	e.check(t)
	if got := (Resume{}).String(); got != "start" {
		t.Errorf("empty resume point: %q, want start", got)
	}
}
