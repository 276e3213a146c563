package aggregate

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/logtally/logtally/measure"
)

// fill sets every field of v (a struct) to a value that is not zero,
// seeded by n; it fails on a kind it does not know, so that a field added
// to Stats gets a filler here and is checked by TestStatsAddSumsEveryField.
func fill(t *testing.T, v reflect.Value, n uint64) {
	t.Helper()
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		switch {
		case f.Type() == reflect.TypeFor[time.Time]():
			f.Set(reflect.ValueOf(time.Unix(int64(1000+n), 0)))
		case f.Type() == reflect.TypeFor[error]():
			f.Set(reflect.ValueOf(fmt.Errorf("full %d", n)))
		case f.Kind() == reflect.Uint64:
			f.SetUint(n + uint64(i))
		case f.Kind() == reflect.Array && f.Type().Elem().Kind() == reflect.Uint64:
			for j := range f.Len() {
				f.Index(j).SetUint(n + uint64(i+j))
			}
		case f.Type() == reflect.TypeFor[map[string]uint64]():
			f.Set(reflect.ValueOf(map[string]uint64{"a": n + uint64(i)}))
		case f.Type() == reflect.TypeFor[DimHits]():
			var h DimHits
			for d := range h {
				h[d] = map[string]uint64{"a": n + uint64(i+d)}
			}
			f.Set(reflect.ValueOf(h))
		case f.Type() == reflect.TypeFor[map[string]SourceStats]():
			f.Set(reflect.ValueOf(map[string]SourceStats{"a": {Lines: n + uint64(i), Hits: n + uint64(i)}}))
		default:
			t.Fatalf("Stats.%s (%s): no filler in this test; add one, and its sum to Stats.Add", name, f.Type())
		}
	}
}

// Stats.Add sums every field: a field added to Stats and not summed
// stays zero here, or not doubled, and fails the test.
func TestStatsAddSumsEveryField(t *testing.T) {
	var a, b Stats
	fill(t, reflect.ValueOf(&a).Elem(), 1)
	fill(t, reflect.ValueOf(&b).Elem(), 100)
	var sum Stats
	sum.Add(a)
	sum.Add(b)
	got, va, vb := reflect.ValueOf(sum), reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range got.NumField() {
		name := got.Type().Field(i).Name
		g, x, y := got.Field(i), va.Field(i), vb.Field(i)
		if g.IsZero() {
			t.Errorf("Stats.%s not summed: zero", name)
			continue
		}
		switch {
		case g.Kind() == reflect.Uint64:
			if g.Uint() != x.Uint()+y.Uint() {
				t.Errorf("Stats.%s = %d, want %d + %d", name, g.Uint(), x.Uint(), y.Uint())
			}
		case g.Kind() == reflect.Array && g.Type().Elem().Kind() == reflect.Uint64:
			for j := range g.Len() {
				want := x.Index(j).Uint() + y.Index(j).Uint()
				if name == "Measures" && measure.Index(j).IsMax() {
					want = max(x.Index(j).Uint(), y.Index(j).Uint())
				}
				if g.Index(j).Uint() != want {
					t.Errorf("Stats.%s[%d] = %d, want %d", name, j, g.Index(j).Uint(), want)
				}
			}
		}
	}
	if want := (SourceStats{Lines: a.BySource["a"].Lines + b.BySource["a"].Lines, Hits: a.BySource["a"].Hits + b.BySource["a"].Hits}); sum.BySource["a"] != want {
		t.Errorf("BySource = %v, want a: %v", sum.BySource, want)
	}
	if sum.HitsBySite["a"] != a.HitsBySite["a"]+b.HitsBySite["a"] {
		t.Errorf("HitsBySite = %v", sum.HitsBySite)
	}
	for d := range sum.ByDim {
		if sum.ByDim[d]["a"] != a.ByDim[d]["a"]+b.ByDim[d]["a"] {
			t.Errorf("ByDim[%d] = %v", d, sum.ByDim[d])
		}
	}
	if !sum.FullSince.Equal(a.FullSince) || !errors.Is(sum.FullErr, a.FullErr) || !errors.Is(sum.FullErr, b.FullErr) {
		t.Errorf("FullSince %v, FullErr %v: want the earlier time and both errors", sum.FullSince, sum.FullErr)
	}
	// Adding to a zero Stats does not share its maps with the argument.
	var c Stats
	c.Add(a)
	c.HitsBySite["a"]++
	c.BySource["a"] = SourceStats{}
	c.ByDim[0]["a"]++
	if a.HitsBySite["a"] == c.HitsBySite["a"] || a.BySource["a"] == (SourceStats{}) || a.ByDim[0]["a"] == c.ByDim[0]["a"] {
		t.Error("Add shares a map with its argument")
	}
}

// The sum of two Stats keeps at most MaxSitesCounted sites and
// OtherSites, and every hit.
func TestStatsAddFoldsSites(t *testing.T) {
	var sum Stats
	total := uint64(0)
	for k := range 2 {
		st := Stats{HitsBySite: map[string]uint64{OtherSites: 5}}
		for i := range MaxSitesCounted {
			st.HitsBySite[fmt.Sprintf("s%d-%d", k, i)] = uint64(i + 1)
		}
		for _, n := range st.HitsBySite {
			total += n
		}
		sum.Add(st)
	}
	var got uint64
	for _, n := range sum.HitsBySite {
		got += n
	}
	if len(sum.HitsBySite) != MaxSitesCounted+1 || got != total || sum.HitsBySite[OtherSites] <= 10 {
		t.Errorf("%d sites, %d hits (other %d), want %d sites and %d hits", len(sum.HitsBySite), got, sum.HitsBySite[OtherSites], MaxSitesCounted+1, total)
	}
}
