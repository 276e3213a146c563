package referrer

import (
	"bytes"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/logtally/logtally/botclass"
)

var (
	benchSink  Result
	benchClass botclass.Class
	benchUA    = []byte("Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)") // 67 bytes
	// Two referrers of each host, of 67 bytes, alternated: each call
	// finds its host in the cache, not the last referrer.
	benchSearch = [2][]byte{
		[]byte("https://www.google.com/search?q=logtally+referrer&ie=UTF-8&oe=UTF"),
		[]byte("https://www.google.com/search?q=logtally+referrers&ie=UTF-8&oe=UT"),
	}
	benchOther = [2][]byte{
		[]byte("http://semicomplete.com/presentations/logstash-puppetconf-2012/x"),
		[]byte("http://semicomplete.com/presentations/logstash-puppetconf-2012/y"),
	}
)

// batch is the calls timed together, so that reading the clock costs
// nothing next to them.
const batch = 1000

// BenchmarkClassify times Classify and, in the same run, the baseline
// botclass.Cache.Class on a cached user agent of the same length (the
// per-line cost the parser already pays for the user agent), and reports
// ns per call of each and their ratio (x_ua_cache). last: the same
// referrer as the call before; warm_search and warm_other: another
// referrer of a host seen before (from the cache); new_host: a host the
// cache does not hold (it cycles through 3 × DefaultCacheSize hosts:
// each is dropped before it comes back), which allocates its string.
func BenchmarkClassify(b *testing.B) {
	hosts := make([][]byte, 3*DefaultCacheSize)
	for i := range hosts {
		hosts[i] = fmt.Appendf(nil, "https://www.site-%05d.example.org/page?x=%d", i, i)
	}
	for _, bc := range []struct {
		name string
		ref  func(i int) []byte
	}{
		{"last", func(int) []byte { return benchSearch[0] }},
		{"warm_search", func(i int) []byte { return benchSearch[i&1] }},
		{"warm_other", func(i int) []byte { return benchOther[i&1] }},
		{"new_host", func(i int) []byte { return hosts[i%len(hosts)] }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := New([]string{"example.com"})
			uas := botclass.NewCache(botclass.Default(), 0)
			c.Classify(bc.ref(0))
			c.Classify(bc.ref(1))
			uas.Class(benchUA)
			var tRef, tUA time.Duration
			n := 0
			b.ReportAllocs()
			for b.Loop() {
				t0 := time.Now()
				for range batch {
					benchSink = c.Classify(bc.ref(n))
					n++
				}
				t1 := time.Now()
				for range batch {
					benchClass = uas.Class(benchUA)
				}
				tRef += t1.Sub(t0)
				tUA += time.Since(t1)
			}
			calls := float64(b.N) * batch
			b.ReportMetric(float64(tRef.Nanoseconds())/calls, "ns/referrer")
			b.ReportMetric(float64(tUA.Nanoseconds())/calls, "ns/ua_cached")
			b.ReportMetric(float64(tRef)/float64(tUA), "x_ua_cache")
		})
	}
}

// BenchmarkApacheLog classifies the referrer of every line of the real
// Apache log (10,000 lines, 628 distinct referrers, 41% "-") with one
// Classifier, and in the same run the user agent of every line with one
// botclass.Cache, both warm (the second pass on): ns per line of each,
// their ratio (x_ua_cache) and the Classifier's hit rate over the first
// pass, from cold.
func BenchmarkApacheLog(b *testing.B) {
	refs, uas := apacheFields(b)
	c := New([]string{"semicomplete.com"})
	cache := botclass.NewCache(botclass.Default(), 0)
	for i := range refs {
		c.Classify(refs[i])
		cache.Class(uas[i])
	}
	hits, misses := c.Stats()
	var tRef, tUA time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		for _, r := range refs {
			benchSink = c.Classify(r)
		}
		t1 := time.Now()
		for _, ua := range uas {
			benchClass = cache.Class(ua)
		}
		tRef += t1.Sub(t0)
		tUA += time.Since(t1)
	}
	lines := float64(b.N) * float64(len(refs))
	b.ReportMetric(float64(tRef.Nanoseconds())/lines, "ns/line")
	b.ReportMetric(float64(tUA.Nanoseconds())/lines, "ns/line_ua_cached")
	b.ReportMetric(float64(tRef)/float64(tUA), "x_ua_cache")
	b.ReportMetric(100*float64(hits)/float64(hits+misses), "hit%_1pass")
}

// apacheFields returns the referrer and user agent of every line of the
// real Apache log of the test data (combined format).
func apacheFields(tb testing.TB) (refs, uas [][]byte) {
	data, err := os.ReadFile("../testdata/apache_combined_real.log")
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		f := bytes.Split(line, []byte(`"`))
		if len(f) < 6 {
			continue
		}
		refs = append(refs, f[3])
		uas = append(uas, f[5])
	}
	if len(refs) < 9000 {
		tb.Fatalf("only %d lines in the Apache log", len(refs))
	}
	return refs, uas
}
