// Package flusher writes the buffer's sealed batches to MongoDB, exactly
// once, as bulk $inc updates of pre-aggregated minute, daily and monthly
// buckets.
//
// A batch is written in three passes (minute, daily, monthly), then the
// sites' daily totals. Each pass streams the batch's keys in order,
// groups them into buckets and writes them per chunk of at most MaxOps
// buckets.
//
// Hot and cold pages (docs/buckets.md): a batch sealed by this version
// (buffer.LayoutTails) follows, for each site, level and plan period (an
// hour for the minute buckets, a day, a month), that period's plan
// (bucket.Plan, plans.go): the level pass writes the buckets of the
// pages it names hot, and a tail pass (tails.go; minute tails after the
// minute pass, daily and monthly tails after the monthly pass) adds every
// other page's counts to its entry in its site's tail (bucket.Tail), one
// guarded update per tail and batch, in chunks of whole sites (a tail's
// pages are spread over the pass: a second update of it for the batch
// would be skipped by its guard); a share the tail cannot take (more than
// one update carries, or no room left under its size bound) goes to spill
// documents of that writer and batch instead (spill.go). A plan is read from a bounded cache,
// else found (one find per level for a batch's misses), else proposed
// from the pages' activity in the period before (activity.go, tracked
// whatever Preallocate) and the batch's own hits, and inserted: the first
// writer's wins, and it never changes, so every attempt of a batch writes
// each page's counts to the same document. A batch sealed by an older
// logtally (buffer.LayoutPages, no mark) is written as it may have been
// begun: every page to its own buckets, through the same passes. A bucket this flusher has not written (or preallocated) lately
// is most likely new: it is inserted whole, this batch's counts and guard
// already in it (bucket.Doc.Whole), all such buckets of a chunk in one
// unordered insertMany. The others, and those the insert found existing
// (duplicate key), get one guarded update each, in one bulk write:
//
//	filter: {_id: <bucket id>, <shard key>, "applied.<n>": {$ne: <seq>}}
//	update: {$inc: {...}, $set: {"applied.<n>": <seq>}}
//
// n is the buffer's writer number, claimed once through Config.Numbers
// before the first batch with counts is sealed, and seq the batch's
// sequence number (buffer.BatchID); a batch sealed before the buffer had
// a number keeps the older guard, "applied.<buffer id>": "<batch id>"
// (Guard picks the form from the batch id).
//
// Buckets that did not match are looked up by the batch id: those that
// carry it already took this batch; the others are missing after all and
// are created zero-filled (a duplicate-key error means another host
// created it first) and updated again. So a batch may be sent any number
// of times and counts once. After each chunk the resume point is saved in
// the buffer, and the batch is acknowledged (deleted) only when every
// pass is written.
//
// The documents, ids, counters and shard keys are package bucket's
// (bucket.Doc and bucket.Tail: Update, Whole, Zero; bucket.FindApplied);
// finds carry the shard key too, so a router targets one shard per
// bucket. Tails take the page buckets' write path unchanged (guarded,
// the interface both implement).
//
// Flusher is that write path: seal, passes, guarded updates, the
// three-step fallback, resume points, ledger marks, acknowledgement,
// backoff. Beside it, Flusher.Run runs the bucket lifecycle
// (docs/buckets.md), two types of their own, each with a Run that owns
// its goroutines and returns when its context ends:
//   - the expirer (expire.go) creates the query indexes and sets up the
//     expiry of each bucket collection, of the site totals (the daily
//     retention) and of the visitors documents of each salt period (its
//     level's retention), and the ledger's: a TTL index (partial in the
//     visitors collection, one per salt period), or a periodic deleteMany
//     of its own where the server refuses one;
//   - the preallocator (prealloc.go) inserts the next hour's, day's and
//     month's plans of the sites active now, in each level's window, and
//     creates the buckets of their hot pages ahead of time, rate-limited;
//     the write path tells the activity which pages are active.
//
// Progress says when the flusher last made progress (Run's start, a round
// with nothing to write, a chunk or a batch acknowledged) and since when
// and how its attempts fail, for pipeline's Health; LastBeat, for its
// Alive, only that Run still turns (it beats on failed attempts too).
// Resume is a sealed batch's resume point (pass 0-4 as ever, the tail
// passes 5 and 6): its encoding is written and read here only, and shown
// to people by Resume.String.
//
// Caveats:
//   - The expirer and the preallocator stay in this package because they
//     share the write path's collections, Config (New builds all three
//     from it, without I/O), which server answers are final (refused,
//     ignoreDuplicates), the backoff (the expirer's set-up retries are
//     the flusher's: they count in Stats.Retries and log as "ensure
//     indexes"), Stats (Expiry, Prealloc) and the test hooks (one pointer,
//     nil in production); tests drive a batch and an expiry round
//     together. IndexesReady is the expirer's.
//   - Counts for a bucket already past its retention when their batch is
//     written (a replay of old logs, a long outage) are not written at
//     that level, only counted (Stats.ExpiredHits): the bucket would be
//     deleted at once. The other levels still take them. A bucket that
//     expires while its batch is in flight (the deleteMany runs between
//     the batch's steps) is created again and its counts land, counted in
//     Stats.LateBuckets; the next expiry deletes it.
//   - Which buckets are "written lately" (known.go) is a hint kept in
//     memory: at most 131,072 per pass, forgotten 10 minutes (minute), 6
//     hours (daily, sites) or 2 days (monthly) of log time after the
//     bucket's end, a full pass forgetting its oldest first; empty after
//     a restart. A bucket wrongly thought new
//     costs one more operation (the insert meets a duplicate, then the
//     update); one wrongly thought to exist costs the three-step path.
//     Neither changes what is counted. After a restart each bucket written
//     again in its period costs that one more operation once.
//   - The activity tracks at most PreallocateMaxPages pages per level
//     and period, learned from this host's batches only, and ignores hits
//     of past periods: a host proposes hot the pages it saw enough of
//     (in a fleet, a share of each page's traffic). The buckets
//     preallocation creates are remembered as written, so their first
//     write is one update; hot pages it misses are inserted whole. With
//     more pages than the window allows at PreallocateRate, the rest is
//     dropped at the boundary (Stats.Prealloc.Dropped).
//   - A plan costs one find per level and batch scan while it is not
//     cached (a restart, another host's period) and one insert when this
//     host proposes it; the preallocator's plans are cached, so its
//     writers ask for none.
//   - A tail takes a batch's share in one update while the share is at
//     most 1 MiB of entries and the tail's size stays within 4 MiB
//     (spill.go's tailBounds); otherwise the share goes to spill
//     documents (a catch-up into a period proposed without history, a
//     crawler's sweep), exactly once (spill.go says why). A tail's size
//     counts a page again in every batch that brings it: a tail whose
//     pages come back batch after batch is judged full early, and its
//     period's later batches cost a spill document each. A tail update
//     MongoDB refuses as too large is judged full too; any other
//     document it refused so would fail the batch (none can grow that
//     far).
//   - A TTL index counts from the period's start, so its
//     expireAfterSeconds adds the longest period: a short month's bucket
//     lives up to 3 days longer than the retention.
//   - Exactly once relies on every bucket and tail getting at most one
//     update per batch, so ids must not collide (see package bucket's
//     caveats), and on a batch's layout (stamped at its seal, kept by the
//     progress record for a rebuild) never changing.
//   - The indexes help readers only (writes find buckets by _id): without
//     the createIndex privilege counts are still written, and reads are
//     slower.
//   - The write concern must be acknowledged (w:0 is refused): the matched
//     count and the insert's duplicate-key errors decide which buckets are
//     updated and created.
//   - Timeout bounds each database call. A chunk that times out is retried
//     at half the size (down to one update), and the size doubles back
//     after 16 chunks in a row get through, so a slow server still makes
//     progress; a server slower than Timeout for a single update does not.
//   - One batch is in flight at a time, and Flush calls are serialised.
//     Run and Drain must not run at the same time.
//   - The "applied" map of a bucket gains one entry per writer (buffer
//     file) that ever wrote to it, 11 to 16 bytes (47 for batches sealed
//     before the buffer had a number); it is never pruned.
//   - With Numbers set, a buffer without a number seals nothing until the
//     claim succeeds (the counts wait pending, as in an outage).
//   - FerretDB (used in tests) deadlocks on bulk writes with 100 or more
//     matching updates: keep MaxOps under 50 against it.
package flusher
