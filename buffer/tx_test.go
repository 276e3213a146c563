package buffer

import (
	"errors"
	"maps"
	"path/filepath"
	"testing"
	"time"

	"github.com/logtally/logtally/visitor"
)

// A read transaction sees one state: a commit that lands while it is open
// shows in the next View, not in it.
func TestViewSeesOneState(t *testing.T) {
	b := open(t, filepath.Join(t.TempDir(), "buffer.db"))
	must(t, b.Commit(Commit{Counts: CountsOf(viewsOf(map[string]uint64{key("s", "/a", 60): 1})), Checkpoints: map[string][]byte{"f1": []byte("10")}}))
	committed := make(chan error)
	err := b.View(func(tx *ReadTx) error {
		before := tx.Checkpoints()
		keys, _ := tx.Unacked()
		go func() {
			committed <- b.Commit(Commit{Counts: CountsOf(viewsOf(map[string]uint64{key("s", "/b", 61): 1})), Checkpoints: map[string][]byte{"f1": []byte("20")}})
		}()
		if err := <-committed; err != nil {
			return err
		}
		if after := tx.Checkpoints(); !maps.EqualFunc(before, after, func(x, y []byte) bool { return string(x) == string(y) }) {
			t.Errorf("checkpoints %q, then %q in one transaction", before, after)
		}
		if k, _ := tx.Unacked(); k != keys {
			t.Errorf("%d keys, then %d in one transaction", keys, k)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cps, err := read(b, (*ReadTx).Checkpoints)
	if err != nil || string(cps["f1"]) != "20" {
		t.Errorf("checkpoints after the View: %q, %v; want the commit's", cps, err)
	}
}

// An Update is one transaction: an error from its function leaves
// nothing of it, the writer number included; a nil one keeps all of it.
func TestUpdateIsOneTransaction(t *testing.T) {
	b := open(t, filepath.Join(t.TempDir(), "buffer.db"))
	salt := SaltEntry{ID: "d20310506", Salt: visitor.Salt{1, 2, 3}, Expires: time.Unix(1_950_000_000, 0)}
	stop := errors.New("stop")
	err := b.Update(func(tx *Tx) error {
		if err := tx.PutSalt(salt); err != nil {
			return err
		}
		if err := tx.SetNumber(7); err != nil {
			return err
		}
		if es, err := tx.Salts(); err != nil || len(es) != 1 {
			t.Errorf("salts inside the transaction: %v, %v; want its own", es, err)
		}
		return stop
	})
	if !errors.Is(err, stop) {
		t.Fatalf("Update = %v, want the function's error", err)
	}
	if es, err := readErr(b, (*ReadTx).Salts); err != nil || len(es) != 0 || b.Number() != 0 {
		t.Fatalf("after the failed Update: salts %v, %v, writer %d; want none", es, err, b.Number())
	}
	err = b.Update(func(tx *Tx) error {
		if err := tx.PutSalt(salt); err != nil {
			return err
		}
		return tx.SetNumber(7)
	})
	if err != nil {
		t.Fatal(err)
	}
	if es, err := readErr(b, (*ReadTx).Salts); err != nil || len(es) != 1 || es[0].ID != salt.ID || es[0].Salt != salt.Salt ||
		!es[0].Expires.Equal(salt.Expires) || b.Number() != 7 {
		t.Fatalf("after the Update: salts %v, %v, writer %d; want the salt and 7", es, err, b.Number())
	}
}
