package pipeline

import (
	"log/slog"
	"testing"

	"github.com/logtally/logtally/stream"
)

func encoded(t *testing.T, cp stream.Checkpoint) []byte {
	t.Helper()
	b, err := cp.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGroupCheckpoints(t *testing.T) {
	a1 := stream.Checkpoint{Source: "a", Path: "/l/a.log", File: stream.FileID{Dev: 1, Ino: 1}, Offset: 10}
	a2 := stream.Checkpoint{Source: "a", Path: "/l/a.log.1", File: stream.FileID{Dev: 1, Ino: 2}, Offset: 20}
	b1 := stream.Checkpoint{Source: "b", Path: "/l/b.log", File: stream.FileID{Dev: 1, Ino: 3}, Offset: 30}
	gone := stream.Checkpoint{Source: "gone", Path: "/l/g.log", File: stream.FileID{Dev: 1, Ino: 4}, Offset: 40}
	stored := map[string][]byte{
		a1.Key(): encoded(t, a1), a2.Key(): encoded(t, a2), b1.Key(): encoded(t, b1),
		gone.Key(): encoded(t, gone), "garbage": {0xff, 0xff},
	}
	r := groupCheckpoints(stored, []string{"a", "b", "c"}, slog.New(slog.DiscardHandler))
	if got := r.bySource["a"]; len(got) != 2 || got[0].Offset+got[1].Offset != 30 {
		t.Errorf("source a: %+v, want the two checkpoints of a", got)
	}
	if got := r.bySource["b"]; len(got) != 1 || got[0] != b1 {
		t.Errorf("source b: %+v, want %+v", got, b1)
	}
	if got := r.bySource["c"]; len(got) != 0 {
		t.Errorf("source c: %+v, want none", got)
	}
	if r.orphans["gone"] != 1 || len(r.orphans) != 1 {
		t.Errorf("orphans %v, want gone=1", r.orphans)
	}
	if r.unreadable != 1 {
		t.Errorf("unreadable %d, want 1", r.unreadable)
	}
}
