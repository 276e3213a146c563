package botclass

import (
	"fmt"
	"testing"
	"time"
)

var (
	benchBrowser = []byte("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36")
	benchBot     = []byte("Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)")
	benchAI      = []byte("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)")
	benchSink    Class
)

func BenchmarkCacheHit(b *testing.B) {
	c := NewCache(Default(), 0)
	c.Class(benchBrowser)
	b.ReportAllocs()
	for b.Loop() {
		benchSink = c.Class(benchBrowser)
	}
}

// BenchmarkClassify is the cost of a cache miss.
func BenchmarkClassify(b *testing.B) {
	r := Default()
	for _, bc := range []struct {
		name string
		ua   []byte
	}{{"browser", benchBrowser}, {"bot", benchBot}, {"ai", benchAI}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.ua)))
			for b.Loop() {
				benchSink = r.Classify(bc.ua)
			}
		})
	}
}

// BenchmarkClassifyApacheDistinct classifies each distinct user agent of
// the Apache log once per iteration: the long-tail cost of misses.
func BenchmarkClassifyApacheDistinct(b *testing.B) {
	seen := map[string]bool{}
	var uas [][]byte
	for _, ua := range apacheAgents(b) {
		if !seen[string(ua)] {
			seen[string(ua)] = true
			uas = append(uas, ua)
		}
	}
	r := Default()
	b.ReportAllocs()
	for b.Loop() {
		for _, ua := range uas {
			benchSink = r.Classify(ua)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(uas)), "ns/agent")
}

// BenchmarkCacheApacheLog runs the user agents of every line of the
// Apache log through a new cache and reports its hit rate.
func BenchmarkCacheApacheLog(b *testing.B) {
	uas := apacheAgents(b)
	for _, size := range []int{DefaultCacheSize, 128} {
		b.Run(fmt.Sprint("size=", size), func(b *testing.B) {
			var hits, misses uint64
			b.ReportAllocs()
			for b.Loop() {
				c := NewCache(Default(), size)
				for _, ua := range uas {
					benchSink = c.Class(ua)
				}
				hits, misses = c.Stats()
			}
			b.ReportMetric(100*float64(hits)/float64(hits+misses), "hit%")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(uas)), "ns/line")
		})
	}
}

// BenchmarkCompile is the one-time cost of compiling the embedded lists.
func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := compileLists(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAgentMiss is the cost of a cache miss now (Agent: Classify,
// the crawler and the families) on the Apache log's distinct agents, as a
// ratio to Classify alone (the miss before names and families), both
// measured in the same loop.
func BenchmarkAgentMiss(b *testing.B) {
	seen := map[string]bool{}
	var uas [][]byte
	for _, ua := range apacheAgents(b) {
		if !seen[string(ua)] {
			seen[string(ua)] = true
			uas = append(uas, ua)
		}
	}
	r := Default()
	b.ReportAllocs()
	var base, cost time.Duration
	for b.Loop() {
		t0 := time.Now()
		for _, ua := range uas {
			benchSink = r.Classify(ua)
		}
		t1 := time.Now()
		for _, ua := range uas {
			agentSink = r.Agent(ua)
		}
		base += t1.Sub(t0)
		cost += time.Since(t1)
	}
	b.ReportMetric(float64(cost.Nanoseconds())/float64(b.N*len(uas)), "ns/agent")
	b.ReportMetric(float64(base.Nanoseconds())/float64(b.N*len(uas)), "classify-ns/agent")
	b.ReportMetric(float64(cost)/float64(base), "x_classify")
}

// BenchmarkAgentHit is the cost of a cache hit with Agent, as a ratio to
// a hit with Class, on a browser's and a bot's agent, in the same loop.
func BenchmarkAgentHit(b *testing.B) {
	c := NewCache(Default(), 0)
	uas := [][]byte{benchBrowser, benchAI}
	for _, ua := range uas {
		c.Agent(ua)
	}
	b.ReportAllocs()
	var base, cost time.Duration
	const n = 100
	for b.Loop() {
		t0 := time.Now()
		for range n {
			benchSink = c.Class(uas[0])
			benchSink = c.Class(uas[1])
		}
		t1 := time.Now()
		for range n {
			agentSink = c.Agent(uas[0])
			agentSink = c.Agent(uas[1])
		}
		base += t1.Sub(t0)
		cost += time.Since(t1)
	}
	b.ReportMetric(float64(cost.Nanoseconds())/float64(b.N*2*n), "ns/hit")
	b.ReportMetric(float64(cost)/float64(base), "x_class")
}
