package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/logtally/logtally/aggregate"
	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/stream"
)

// site is the one site every host serves: a fleet behind a load
// balancer, the worst case for documents written by many hosts.
const site = "www.example.com"

// Page name prefixes: head pages come from the Zipf universe, tail pages
// are seen once (a per-host counter makes each unique in the fleet).
const (
	headPrefix = "/p/"
	tailPrefix = "/t/"
)

// params are one simulation's settings.
type params struct {
	hosts, pages, rate, sample int
	interval, coarse, period   time.Duration
	zipf, tail                 float64
	maxPages, maxOps           int
	seed                       uint64
	// preMinHits and preRate are preallocate_min_hits and
	// preallocate_rate, for the write path's model (model.go).
	preMinHits int
	preRate    float64
	// hotMinHits is the tails layout's hot threshold (tails.go): 0 for
	// each level's break-even.
	hotMinHits int
}

// class tells head pages (and "(other)") from tail pages.
func class(page string) int {
	if strings.HasPrefix(page, tailPrefix) {
		return tail
	}
	return head
}

const (
	head = iota
	tail
)

// passStats sums one pass's plans over a host's flushes, per class.
type passStats struct {
	// updates counts bucket writes (one per bucket and batch); the byte
	// sums are over them.
	updates, filterBytes, updateBytes, zeroBytes, wholeBytes [2]int64
	// chunks and findBytes: every chunk, and chunks holding a tail bucket
	// (which is new by construction, so that chunk takes the three-step
	// path) with the size of its find.
	chunks, tailChunks, tailFindBytes int64
	// findTermBytes: the find bytes per bucket, summed over head buckets.
	headFindBytes int64
}

// hostResult is what one sampled host measured through the real code.
type hostResult struct {
	flushes, coarseFlushes int
	genHits                [2]int64 // hits generated, by class
	passes                 [3]passStats
	coarsePasses           [3]passStats // daily and monthly written every coarse interval
	// pageHits: hits per head page (from the minute pass).
	pageHits map[string]int64
	// pageBatches[p]: per head page, the buckets of pass p written (one
	// per bucket and batch naming it); the minute docs inside the window
	// are also counted one by one in minuteDocs.
	pageBatches, coarsePageBatches [3]map[string]int64
	// minuteDocs: batches naming each minute doc fully inside the window.
	minuteDocs map[string]int64
	// minuteFirst: per head page, its minute docs fully inside the
	// window that this host wrote (its first writes of them).
	minuteFirst map[string]int64
	// tailPages is the distinct tail pages seen (each is one bucket per
	// pass).
	tailPages int64
	// pagesPerMinute: distinct pages per minute (limiter's view).
	pagesPerMinute map[int64]int
	appliedEntry   int // this host's applied entry, numbered (bucket.NumberedGuard)
	// appliedEntryByID is the entry before writer numbers (bucket.IDGuard).
	appliedEntryByID int
}

// zipfCDF returns the cumulative probabilities of ranks 1..n under
// Zipf(s).
func zipfCDF(n int, s float64) []float64 {
	cdf := make([]float64, n)
	var sum float64
	for r := 1; r <= n; r++ {
		sum += 1 / math.Pow(float64(r), s)
		cdf[r-1] = sum
	}
	for i := range cdf {
		cdf[i] /= sum
	}
	return cdf
}

// simulateHost runs host h for p.period of log time, from base minus a
// random phase, through a real aggregator and buffer, and plans every
// sealed batch with PlanBatch (plan.go).
func simulateHost(ctx context.Context, p params, h int, dir string, cdf []float64, base time.Time) (*hostResult, error) {
	rng := rand.New(rand.NewPCG(p.seed, uint64(h)+1))
	phase := time.Duration(rng.Int64N(int64(p.interval)))
	start := base.Add(-phase)
	buf, err := buffer.Open(filepath.Join(dir, fmt.Sprintf("host%d.db", h)), buffer.Options{MaxSize: -1})
	if err != nil {
		return nil, err
	}
	defer buf.Close()
	coarseBuf, err := buffer.Open(filepath.Join(dir, fmt.Sprintf("host%d-coarse.db", h)), buffer.Options{MaxSize: -1})
	if err != nil {
		return nil, err
	}
	defer coarseBuf.Close()
	// Each host has its writer number, as a daemon claims one before its
	// first batch: its batches are numbered.
	for _, b := range []*buffer.Buffer{buf, coarseBuf} {
		if err := b.Update(func(tx *buffer.Tx) error { return tx.SetNumber(int64(h + 1)) }); err != nil {
			return nil, err
		}
	}
	pc := parser.Config{Format: "combined", Site: site}
	pc.Page.MaxPagesPerMinute = p.maxPages
	prs, err := parser.New(pc)
	if err != nil {
		return nil, err
	}
	// One aggregator for the whole run, as a daemon has: its
	// max_pages_per_minute memory goes on from one flush to the next. It
	// is not run: each flush's chunks are added, then committed.
	agg, err := aggregate.New(aggregate.Config{
		Buffer: buf, Parsers: map[string]*parser.Parser{"src": prs},
		CommitInterval: time.Hour, Clock: clock.NewFake(start),
	}, nil)
	if err != nil {
		return nil, err
	}
	res := &hostResult{
		pageHits: map[string]int64{}, minuteDocs: map[string]int64{}, minuteFirst: map[string]int64{}, pagesPerMinute: map[int64]int{},
	}
	for i := range res.pageBatches {
		res.pageBatches[i] = map[string]int64{}
		res.coarsePageBatches[i] = map[string]int64{}
	}
	// Minute docs counted for the busiest document: those whose minute is
	// inside every host's run, [base, base+period-interval).
	winFrom, winTo := base.Unix(), base.Add(p.period-p.interval).Unix()
	perFlush := int(p.interval / time.Second)
	coarseEvery := int(p.coarse / p.interval)
	nflush := int(p.period / p.interval)
	var offset int64
	var tailN int
	var line []byte
	seenMinute := map[string]struct{}{}
	curMinute := int64(-1)
	for f := range nflush {
		// One flush interval of log lines through the aggregator, then
		// committed whole, as the flusher's seal would find it
		// committed.
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var data []byte
		var addErr error
		send := func() {
			if len(data) == 0 || addErr != nil {
				return
			}
			c := stream.Chunk{
				Checkpoint: stream.Checkpoint{Source: "src", Path: "/var/log/access.log",
					File: stream.FileID{Dev: 1, Ino: uint64(h) + 1}, Offset: offset + int64(len(data))},
				Start: offset, Data: data,
			}
			addErr = agg.Add(&c)
			offset += int64(len(data))
			data = nil
		}
		for s := range perFlush {
			t := start.Add(time.Duration(f*perFlush+s) * time.Second)
			if m := t.Unix() / 60; m != curMinute {
				if curMinute >= 0 {
					res.pagesPerMinute[curMinute] = len(seenMinute)
				}
				clear(seenMinute)
				curMinute = m
			}
			ts := t.Format("02/Jan/2006:15:04:05 -0700")
			for range p.rate {
				line = append(line[:0], "10.0.0.1 - - ["...)
				line = append(line, ts...)
				line = append(line, `] "GET `...)
				pageStart := len(line)
				if p.tail > 0 && rng.Float64() < p.tail {
					res.genHits[tail]++
					tailN++
					line = append(line, tailPrefix...)
					line = strconv.AppendInt(line, int64(h), 10)
					line = append(line, '/')
					line = strconv.AppendInt(line, int64(tailN), 10)
				} else {
					res.genHits[head]++
					r := sort.SearchFloat64s(cdf, rng.Float64()) + 1
					line = append(line, headPrefix...)
					line = strconv.AppendInt(line, int64(r), 10)
				}
				seenMinute[string(line[pageStart:])] = struct{}{}
				line = append(line, ` HTTP/1.1" 200 512 "-" "Mozilla/5.0"`+"\n"...)
				data = append(data, line...)
				if len(data) >= 256<<10 {
					send()
				}
			}
		}
		send()
		if addErr != nil {
			return nil, addErr
		}
		if err := agg.Commit(); err != nil {
			return nil, err
		}
		batch, err := buf.Seal(buffer.Seal{})
		if err != nil || batch == nil {
			return nil, fmt.Errorf("seal flush %d: %v", f, err)
		}
		plan, err := PlanBatch(buf, batch.ID, p.maxOps)
		if err != nil {
			return nil, err
		}
		res.appliedEntry = plan.AppliedEntryBytes()
		res.appliedEntryByID = bucket.IDGuard(buf.InstanceID(), "00112233445566778899aabb").EntryBytes()
		res.flushes++
		res.add(plan, &res.passes, res.pageBatches, true, winFrom, winTo)
		// The coarse stream: the same counts, kept for the daily and
		// monthly passes of every coarse interval.
		counts := map[string]measure.Vector{}
		err = buf.View(func(tx *buffer.ReadTx) error {
			return tx.ScanBatch(batch.ID, nil, func(k []byte, v *measure.Vector) bool {
				c := counts[string(k)]
				c.Merge(v)
				counts[string(k)] = c
				return true
			})
		})
		if err != nil {
			return nil, err
		}
		if err := buf.Ack(batch.ID); err != nil {
			return nil, err
		}
		if err := coarseBuf.Commit(buffer.Commit{Counts: buffer.CountsOf(counts)}); err != nil {
			return nil, err
		}
		if (f+1)%coarseEvery == 0 {
			cb, err := coarseBuf.Seal(buffer.Seal{})
			if err != nil || cb == nil {
				return nil, fmt.Errorf("seal coarse batch: %v", err)
			}
			cplan, err := PlanBatch(coarseBuf, cb.ID, p.maxOps, bucket.Daily, bucket.Monthly)
			if err != nil {
				return nil, err
			}
			res.coarseFlushes++
			res.add(cplan, &res.coarsePasses, res.coarsePageBatches, false, 0, 0)
			if err := coarseBuf.Ack(cb.ID); err != nil {
				return nil, err
			}
		}
	}
	return res, nil
}

// add sums plan into ps and the per-page maps; full marks the flusher's
// own batches (every pass), whose minute pass also gives the page hits
// and the minute docs inside [winFrom, winTo).
func (r *hostResult) add(plan *Plan, ps *[3]passStats, pageBatches [3]map[string]int64, full bool, winFrom, winTo int64) {
	for pi := range plan.Passes {
		pp := &plan.Passes[pi]
		st := &ps[pi]
		st.chunks += int64(pp.Chunks)
		tailChunk := map[int]bool{}
		for _, d := range pp.Docs {
			c := class(d.Page)
			st.updates[c]++
			st.filterBytes[c] += int64(d.FilterBytes)
			st.updateBytes[c] += int64(d.UpdateBytes)
			st.zeroBytes[c] += int64(d.ZeroBytes)
			st.wholeBytes[c] += int64(d.WholeBytes)
			if c == tail {
				tailChunk[d.Chunk] = true
				if full && pi == int(bucket.Minute) {
					r.tailPages++
				}
				continue
			}
			pageBatches[pi][d.Page]++
			if full && pi == int(bucket.Minute) {
				r.pageHits[d.Page] += d.Hits
				if s := d.Start.Unix(); s >= winFrom && s+60 <= winTo {
					if r.minuteDocs[d.ID] == 0 {
						r.minuteFirst[d.Page]++
					}
					r.minuteDocs[d.ID]++
				}
			}
		}
		for ci := range tailChunk {
			st.tailChunks++
			st.tailFindBytes += int64(pp.FindBytes[ci])
		}
		// A head bucket's share of its chunk's find.
		for ci, n := range pp.FindBytes {
			if !tailChunk[ci] {
				st.headFindBytes += int64(n)
			}
		}
	}
}
