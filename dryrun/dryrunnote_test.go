package dryrun

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/parser"
)

// refNotes is how a dryWorker noted the keys it drained before its pair
// set (a map of pages per site, looked up for every key): the reference
// the worker's figures are compared with.
type refNotes struct {
	sites     map[string]map[string]struct{}
	nPages    int
	seconds   secondSet
	lastSite  []byte
	cur       map[string]struct{}
	mostPages int

	committed, pagesForgotten uint64
}

func (w *refNotes) note(key []byte) error {
	w.committed++
	site, page, sec, err := buffer.DecodeKey(key)
	if err != nil {
		return fmt.Errorf("dry run: %w", err)
	}
	if !bytes.Equal(site, w.lastSite) || w.cur == nil {
		w.cur = w.sites[string(site)]
		if w.cur == nil {
			w.cur = map[string]struct{}{}
			w.sites[string(site)] = w.cur
		}
		w.lastSite = append(w.lastSite[:0], site...)
	}
	if _, ok := w.cur[string(page)]; !ok {
		w.addPage(w.cur, string(page))
	}
	w.seconds.add(sec)
	return nil
}

func (w *refNotes) addPage(pages map[string]struct{}, page string) {
	if w.nPages == maxPages {
		w.pagesForgotten += uint64(maxPages)
		for _, ps := range w.sites {
			clear(ps)
		}
		w.nPages, w.mostPages = 0, 0
	}
	pages[page] = struct{}{}
	w.nPages++
	w.mostPages = max(w.mostPages, len(pages))
}

func (w *refNotes) merge(o *refNotes) {
	for site, ops := range o.sites {
		ps := w.sites[site]
		if ps == nil {
			ps = map[string]struct{}{}
			w.sites[site] = ps
		}
		for page := range ops {
			if _, ok := ps[page]; !ok {
				w.addPage(ps, page)
			}
		}
	}
	w.seconds.merge(&o.seconds)
	w.committed += o.committed
	w.pagesForgotten += o.pagesForgotten
}

// sameFigures fails t unless w's figures (every one the summary and the
// parallel run's checks use) are ref's.
func sameFigures(t *testing.T, at string, w *dryWorker, ref *refNotes) {
	t.Helper()
	if len(w.sites) != len(ref.sites) || w.nPages != ref.nPages || w.pagesForgotten != ref.pagesForgotten ||
		w.mostPages != ref.mostPages || w.seconds.n != ref.seconds.n || w.committed != ref.committed {
		t.Fatalf("%s: sites %d pairs %d forgotten %d most %d seconds %d committed %d, want %d %d %d %d %d %d", at,
			len(w.sites), w.nPages, w.pagesForgotten, w.mostPages, w.seconds.n, w.committed,
			len(ref.sites), ref.nPages, ref.pagesForgotten, ref.mostPages, ref.seconds.n, ref.committed)
	}
	for site, ps := range ref.sites {
		if w.sites[site] == nil || w.sites[site].len() != len(ps) {
			t.Fatalf("%s: site %q: %v, want %d pages", at, site, w.sites[site], len(ps))
		}
	}
}

// A dry run's worker notes the keys it drains into the figures the way
// it did with a map of pages per site: random keys of several sites
// (one a prefix of another, the empty site, and one of 150 bytes), pages
// (some of one site also another's, some of more than 127 bytes: the keys
// buffer.DecodeKey splits) and seconds, in runs of one site and mixed; the pairs
// forgotten past a lowered maxPages; and two workers' figures merged
// (without forgetting: then the order of a merge decides the figure).
func TestDryWorkerNotesMatchReference(t *testing.T) {
	newWorker := func() *dryWorker {
		p, err := parser.New(parser.Config{Format: "combined", Site: "example.com"})
		if err != nil {
			t.Fatal(err)
		}
		return newDryWorker(p)
	}
	newRef := func() *refNotes { return &refNotes{sites: map[string]map[string]struct{}{}} }
	sites := []string{"a.test", "a.tes", "", "b.test", "c", strings.Repeat("long.", 30)} // one with a 2-byte length
	keys := func(r *rand.Rand, n, pages int) [][]byte {
		var ks [][]byte
		site := sites[0]
		for range n {
			if r.IntN(10) == 0 {
				site = sites[r.IntN(len(sites))]
			}
			page := fmt.Sprintf("/p%d", r.IntN(pages))
			if r.IntN(50) == 0 {
				page = strings.Repeat("/long", 30) + page // a 2-byte length
			}
			ks = append(ks, buffer.AppendKey(nil, []byte(site), []byte(page), 1_700_000_000+int64(r.IntN(5000))))
		}
		return ks
	}
	for _, limit := range []int{1 << 26, 50, 7} {
		for seed := range uint64(5) {
			t.Run(fmt.Sprintf("max%d-seed%d", limit, seed), func(t *testing.T) {
				old := maxPages
				maxPages = limit
				t.Cleanup(func() { maxPages = old })
				r := rand.New(rand.NewPCG(seed, 1))
				w, ref := newWorker(), newRef()
				for i, k := range keys(r, 20_000, 40) {
					if err := w.note(k); err != nil {
						t.Fatal(err)
					}
					if err := ref.note(k); err != nil {
						t.Fatal(err)
					}
					sameFigures(t, fmt.Sprintf("key %d", i), w, ref)
				}
				if limit < 1<<26 && ref.pagesForgotten == 0 {
					t.Fatal("no pair forgotten")
				}
				if limit < 1<<26 {
					return
				}
				w2, ref2 := newWorker(), newRef()
				for _, k := range keys(r, 5000, 60) {
					w2.note(k)
					ref2.note(k)
				}
				w.merge(w2)
				ref.merge(ref2)
				sameFigures(t, "merged", w, ref)
				if w2.nPages != 0 || len(w2.sites) != 0 || w2.committed != 0 {
					t.Error("the merged worker is not left empty")
				}
				for _, k := range keys(r, 5000, 80) { // noted after a merge
					w.note(k)
					ref.note(k)
				}
				sameFigures(t, "after the merge", w, ref)
			})
		}
	}
	if err := newWorker().note([]byte("\x05ab")); err == nil {
		t.Error("a bad key: no error")
	}
}

// pageSet holds the hashes added and no other, with long runs of probes
// (hashes sharing their low bits, wrapping around the slots) and growth.
func TestPageSet(t *testing.T) {
	var s pageSet
	r := rand.New(rand.NewPCG(1, 2))
	held := map[uint64]bool{}
	for i := range 5000 {
		h := r.Uint64() | 1
		if i%2 == 0 {
			h = uint64(i)<<40 | 0xfff // the same low bits: one long run
		}
		if s.has(h) != held[h] {
			t.Fatalf("hash %d: has %v, want %v", i, s.has(h), held[h])
		}
		if !held[h] {
			s.add(h)
			held[h] = true
		}
		if s.len() != len(held) {
			t.Fatalf("len %d, want %d", s.len(), len(held))
		}
	}
	for h := range held {
		if !s.has(h) || s.has(h^1<<63) != held[h^1<<63] {
			t.Fatalf("hash %#x: wrong answer", h)
		}
	}
	s.clear()
	for h := range held {
		if s.has(h) {
			t.Fatal("held after clear")
		}
	}
}
