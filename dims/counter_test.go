package dims

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

type drained map[string]uint64 // "site|day|dim|value" -> n

func drainAll(c *Counter) drained {
	out := drained{}
	c.Drain(func(site string, day int64, d Dim, value string, n uint64) {
		out[fmt.Sprintf("%s|%d|%s|%s", site, day, d, value)] += n
	})
	return out
}

// model counts hits as Counter must, written the plain way: per site,
// day and dimension, the first limit distinct values in hit order keep
// their name, later ones are Other.
type model struct {
	limits Limits
	kept   map[string]map[string]bool // "site|day|dim" -> values kept
	counts drained
}

func (m *model) add(site string, day int64, v Values, n uint64) {
	for d := range N {
		val := v[d]
		if val == "" {
			val = Unknown
		}
		k := fmt.Sprintf("%s|%d|%s", site, day, Dim(d))
		if m.kept[k] == nil {
			m.kept[k] = map[string]bool{}
		}
		if !m.kept[k][val] {
			if len(m.kept[k]) < m.limits[d] {
				m.kept[k][val] = true
			} else {
				val = Other
			}
		}
		m.counts[k+"|"+val] += n
	}
}

// shared holds the bytes of values that share them (strings of it).
const shared = "v10v11v12v13v14v15v16v17v18v19v20v21"

// TestCounterAgainstModel: random hits over sites, days and many values,
// drained at random moments: every drain matches the model's counts since
// the one before, each dimension sums to the hits, and the values kept
// are the first ones in hit order across drains.
func TestCounterAgainstModel(t *testing.T) {
	limits := Limits{Referrer: 5, Channel: 3, Country: 7, ASN: 1, Browser: 4, OS: 2, Device: 3, Crawler: 6}
	c := NewCounter(limits)
	m := &model{limits: limits, kept: map[string]map[string]bool{}, counts: drained{}}
	r := rand.New(rand.NewPCG(1, 2))
	var hits uint64
	perDim := map[string]uint64{}
	check := func() {
		got := drainAll(c)
		if len(got) != len(m.counts) {
			t.Fatalf("drained %d values, model %d", len(got), len(m.counts))
		}
		for k, n := range m.counts {
			if got[k] != n {
				t.Fatalf("%s: drained %d, model %d", k, got[k], n)
			}
		}
		for k, n := range got {
			perDim[k[:len(k)-len(lastField(k))]] += n
		}
		m.counts = drained{}
	}
	for i := range 20000 {
		site := fmt.Sprintf("s%d.example", r.IntN(3))
		day := int64(r.IntN(2)) * 86400
		var v Values
		for d := range N {
			switch k := r.IntN(3 + 2*int(d)); {
			case r.IntN(20) == 0:
			case r.IntN(2) == 0:
				v[d] = fmt.Sprintf("v%d", k) // new bytes each time
			default:
				// Values sharing their bytes: "v1" and "v10" where the
				// same bytes are, and "v1" in several places.
				v[d] = shared[k/2*3 : k/2*3+2+k%2]
			}
		}
		n := uint64(1 + r.IntN(3))
		hits += n
		c.Add([]byte(site), day, &v, n)
		m.add(site, day, v, n)
		if r.IntN(500) == 0 || i == 19999 {
			check()
		}
	}
	// Each dimension of all site days sums to the hits.
	sums := map[Dim]uint64{}
	for k, n := range perDim {
		for d := range N {
			if containsDim(k, Dim(d)) {
				sums[Dim(d)] += n
			}
		}
	}
	for d := range N {
		if sums[Dim(d)] != hits {
			t.Errorf("%s: %d hits counted, want %d", Dim(d), sums[Dim(d)], hits)
		}
	}
	if c.Held() != 0 {
		t.Errorf("Held %d after a drain", c.Held())
	}
}

func lastField(k string) string {
	for i := len(k) - 1; i >= 0; i-- {
		if k[i] == '|' {
			return k[i+1:]
		}
	}
	return k
}

func containsDim(k string, d Dim) bool {
	want := "|" + d.String() + "|"
	for i := 0; i+len(want) <= len(k); i++ {
		if k[i:i+len(want)] == want {
			return true
		}
	}
	return false
}

// TestCounterKeepsAcrossDrains: a value kept before a drain stays kept;
// past the limit a new value is Other, and Forget drops the values of a
// day idle between the last two drains (a new value is kept again),
// never a day with counts held or counted since the drain before.
func TestCounterKeepsAcrossDrains(t *testing.T) {
	c := NewCounter(Limits{Referrer: 2, Channel: 1, Country: 1, ASN: 1, Browser: 1, OS: 1, Device: 1, Crawler: 1})
	add := func(day int64, ref string) { c.Add([]byte("s"), day, &Values{Referrer: ref}, 1) }
	add(0, "a")
	add(0, "b")
	drainAll(c)
	add(0, "c")
	add(0, "b")
	add(0, "a")
	got := drainAll(c)
	for k, want := range map[string]uint64{"s|0|referrer|a": 1, "s|0|referrer|b": 1, "s|0|referrer|(other)": 1, "s|0|channel|(unknown)": 3} {
		if got[k] != want {
			t.Errorf("%s = %d, want %d (all %v)", k, got[k], want, got)
		}
	}
	add(86400, "z") // held, not drained
	c.Forget(2 * 86400)
	if c.Days() != 2 {
		t.Fatalf("%d site days kept after Forget, want both: one holding counts, one counted since the drain before", c.Days())
	}
	if got := drainAll(c); got["s|86400|referrer|z"] != 1 {
		t.Errorf("the held day's counts lost: %v", got)
	}
	c.Forget(2 * 86400) // day 0 idle since the drain before: forgotten
	if c.Days() != 1 {
		t.Fatalf("%d site days kept after Forget, want the one counted since the drain before", c.Days())
	}
	add(0, "c")
	if got := drainAll(c); got["s|0|referrer|c"] != 1 {
		t.Errorf("after Forget, a new value is not kept: %v", got)
	}
}

// TestCounterAllocs: a warm Add allocates nothing, whatever the order of
// the values.
func TestCounterAllocs(t *testing.T) {
	c := NewCounter(DefaultLimits)
	vs := benchValues()
	site := []byte("www.example.com")
	for _, v := range vs {
		c.Add(site, 0, &v, 1)
	}
	if n := testing.AllocsPerRun(100, func() {
		for i := range vs {
			c.Add(site, 0, &vs[i], 1)
		}
	}); n != 0 {
		t.Errorf("%v allocations per run of %d warm hits", n, len(vs))
	}
}

// benchValues are hits of a plausible mix: a few browsers and systems,
// a dozen countries and referrers, repeats as visitors make them.
func benchValues() []Values {
	r := rand.New(rand.NewPCG(3, 4))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	out := make([]Values, 4096)
	for i := range out {
		if i > 0 && r.IntN(2) == 0 {
			out[i] = out[i-1] // the same visitor's next page
			continue
		}
		out[i] = Values{
			Referrer: pick("(direct)", "(self)", "google.com", "bing.com", "news.ycombinator.com", "t.co", "duckduckgo.com", "reddit.com", "chatgpt.com"),
			Channel:  pick("direct", "internal", "search", "social", "ai", "referral"),
			Country:  pick("US", "DE", "FR", "GB", "IN", "BR", "JP", "CN", "NL", "CA", "(unknown)"),
			ASN:      pick("AS15169 Google LLC", "AS7922 Comcast", "AS3320 Deutsche Telekom", "AS16509 Amazon"),
			Browser:  pick("Chrome", "Safari", "Firefox", "Edge", "(bot)"),
			OS:       pick("Windows", "macOS", "iOS", "Android", "Linux", "(bot)"),
			Device:   pick("desktop", "mobile", "tablet", "(bot)"),
			Crawler:  pick("", "", "", "Googlebot", "bingbot", "GPTBot"),
		}
	}
	return out
}

// BenchmarkAdd is a warm Add per hit against a baseline measured in the
// same run: one map increment keyed by a page, what the aggregator does
// per hit for its page's count.
func BenchmarkAdd(b *testing.B) {
	vs := benchValues()
	pages := make([]string, len(vs))
	for i := range pages {
		pages[i] = fmt.Sprintf("/blog/2026/%d", i%300)
	}
	site := []byte("www.example.com")
	var base float64
	b.Run("baseline-page-count", func(b *testing.B) {
		m := map[string]uint64{}
		k := 0
		for b.Loop() {
			m[pages[k]]++
			if k++; k == len(pages) {
				k = 0
			}
		}
		base = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	b.Run("add", func(b *testing.B) {
		c := NewCounter(DefaultLimits)
		b.ReportAllocs()
		k := 0
		for b.Loop() {
			c.Add(site, 0, &vs[k], 1)
			if k++; k == len(vs) {
				k = 0
			}
		}
		if base > 0 {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/base, "x-page-count")
		}
	})
}
