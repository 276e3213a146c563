package botclass

import (
	"fmt"
	"testing"

	"github.com/logtally/logtally/uafamily"
)

func TestCacheBound(t *testing.T) {
	for _, size := range []int{1, 2, 3, 10, 100} {
		c := NewCache(Default(), size)
		bound := max(2, size)
		for i := range 5 * size {
			c.Class(fmt.Appendf(nil, "agent-%d/1.0 (x)", i))
			if c.Len() > bound {
				t.Fatalf("size %d: holds %d after %d agents", size, c.Len(), i+1)
			}
		}
		if h, m := c.Stats(); h != 0 || m != uint64(5*size) {
			t.Errorf("size %d: stats %d hits %d misses, want 0 and %d", size, h, m, 5*size)
		}
	}
	if c := NewCache(Default(), 0); c.agents.Size() != DefaultCacheSize {
		t.Errorf("NewCache(0): holds %d, want %d", c.agents.Size(), DefaultCacheSize)
	}
}

func TestCacheHitsAndGenerations(t *testing.T) {
	c := NewCache(Default(), 4) // 2 per generation
	a, b, d, e := []byte("curl/8.4.0"), []byte("Wget/1.21.4"), []byte("okhttp/4.12.0"), []byte("Go-http-client/1.1")
	c.Class(a) // miss: cur {a}
	c.Class(b) // miss: cur {a b}
	c.Class(a) // hit in cur
	c.Class(d) // miss: cur full: prev {a b}, cur {d}
	c.Class(a) // hit in prev: moves to cur {d a}
	c.Class(e) // miss: prev {d a}, cur {e}: b is gone
	c.Class(b) // miss
	if h, m := c.Stats(); h != 2 || m != 5 {
		t.Errorf("stats: %d hits, %d misses; want 2, 5", h, m)
	}
	if got := c.Class(a); got != Tool {
		t.Errorf("Class(curl) = %v", got)
	}
	// A user agent longer than maxCachedLen is classified, not kept.
	long := make([]byte, maxCachedLen+1)
	for i := range long {
		long[i] = 'a'
	}
	n := c.Len()
	if got := c.Class(long); got != Suspect || c.Len() != n {
		t.Errorf("long agent: %v, cache %d -> %d", got, n, c.Len())
	}
}

func TestCacheHitAllocs(t *testing.T) {
	c := NewCache(Default(), 4)
	ua := []byte("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36")
	c.Class(ua)
	if n := testing.AllocsPerRun(100, func() { c.Class(ua) }); n != 0 {
		t.Errorf("a hit in the current generation allocates %v times", n)
	}
	// A hit in the previous generation moves the entry without copying
	// its key; alternate two agents with a third that pushes generations.
	x, y := []byte("curl/8.4.0"), []byte("Wget/1.21.4")
	c.Class(x)
	c.Class(y) // ua, x | y
	if n := testing.AllocsPerRun(100, func() { c.Class(ua); c.Class(x); c.Class(y) }); n != 0 {
		t.Errorf("hits across generations allocate %v times", n)
	}
	// Classify itself (a miss) allocates nothing either. Under the race
	// detector the regexps' pooled machines are dropped now and then
	// (raceEnabled): a machine a run, no more.
	r := Default()
	most := 0.0
	if raceEnabled {
		most = 1
	}
	for _, s := range [][]byte{ua, []byte("Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)"), []byte("Mozilla/5.0 (compatible; SISTRIX Crawler; http://crawler.sistrix.net/)")} {
		if n := testing.AllocsPerRun(100, func() { r.Classify(s) }); n > most {
			t.Errorf("Classify(%q) allocates %v times", s, n)
		}
	}
}

// TestCacheSkipFamilies: a cache finds each agent's families unless told
// to skip them; the class and the crawler are the same either way.
func TestCacheSkipFamilies(t *testing.T) {
	ff := []byte("Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0")
	gb := []byte("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)")
	with, without := NewCache(Default(), 0), NewCache(Default(), 0)
	without.SkipFamilies()
	for _, ua := range [][]byte{ff, gb} {
		a, b := with.Agent(ua), without.Agent(ua)
		if a.Families == (uafamily.Families{}) {
			t.Errorf("%.20s: no families by default", ua)
		}
		if b.Families != (uafamily.Families{}) {
			t.Errorf("%.20s: families %v with SkipFamilies", ua, b.Families)
		}
		if a.Class != b.Class || a.Crawler != b.Crawler {
			t.Errorf("%.20s: class %v %v, crawler %v %v", ua, a.Class, b.Class, a.Crawler, b.Crawler)
		}
	}
}
