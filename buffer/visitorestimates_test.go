package buffer

import (
	"path/filepath"
	"testing"

	"github.com/logtally/logtally/visitor"
)

// VisitorEstimates estimates the sketches of one period only, the first
// limit sites by name, each the estimate of its registers.
func TestVisitorEstimates(t *testing.T) {
	b := open(t, filepath.Join(t.TempDir(), "buffer.db"))
	defer b.Close()
	day := int64(1_764_028_800) // 2025-11-25
	sk := map[string]*visitor.Sketch{}
	for i, site := range []string{"c.test", "a.test", "b.test"} {
		s := visitor.NewSketch(visitor.SitePrecision)
		for k := range uint64(100 * (i + 1)) {
			s.Add(k*0x9E3779B97F4A7C15 + uint64(i))
		}
		sk[VisitorKey(day, []byte(site), nil)] = s
	}
	other := visitor.NewSketch(visitor.SitePrecision)
	other.Add(1)
	sk[VisitorKey(day+86400, []byte("a.test"), nil)] = other
	sk[VisitorKey(day-86400, []byte("a.test"), nil)] = other
	if err := b.Commit(Commit{Visitors: sk}); err != nil {
		t.Fatal(err)
	}
	es, err := readErr(b, func(tx *ReadTx) ([]VisitorEstimate, error) { return tx.VisitorEstimates(day, 2) })
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[0].Site != "a.test" || es[1].Site != "b.test" {
		t.Fatalf("estimates %+v, want a.test and b.test", es)
	}
	for _, e := range es {
		if w := sk[VisitorKey(day, []byte(e.Site), nil)].Estimate(); e.Estimate != w || e.P != visitor.SitePrecision {
			t.Errorf("%s: %v (p %d), want %v", e.Site, e.Estimate, e.P, w)
		}
	}
	if es, _ := readErr(b, func(tx *ReadTx) ([]VisitorEstimate, error) { return tx.VisitorEstimates(day, 0) }); len(es) != 3 {
		t.Errorf("no limit: %d sites, want 3", len(es))
	}
	if es, _ := readErr(b, func(tx *ReadTx) ([]VisitorEstimate, error) { return tx.VisitorEstimates(day+2*86400, 0) }); len(es) != 0 {
		t.Errorf("a period without sketches: %+v", es)
	}
}
