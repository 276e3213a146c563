// Package aggregate turns the tailers' (and replays') chunks into sums and
// commits them. A Summer parses each chunk's lines with their source's
// parser, applies the bounds that depend on the order of the lines, sums
// hits per (site, page, second) in memory with their sites' hits and
// visitor sketches, and keeps where each chunk ends (checkpoint, finished
// file, archive part, ledger mark). The Aggregator reads its input
// channel into a Summer and every commit interval commits what it holds
// to the buffer, in one transaction. A barrier on its input (Barrier)
// makes that commit at once, after every chunk sent before it: the
// pipeline puts one there before each of the flusher's seals.
//
// New makes the Aggregator a run uses (Run reads its input channel);
// NewSummer makes a Summer alone (Add, Sums, Drain), for the dry run,
// verify and the state-dir rebuild, so that their lines are parsed,
// bounded and keyed exactly as the daemon counts them.
//
// The bounds that depend on the order of the lines are a Summer's, per
// source, applied to each hit in line order in one place (count), to the
// lines parsed ahead and here alike: max_sites (parser.Config.MaxSites:
// the hits of hosts, parser.Hit.FromHost, past the first MaxSites are
// counted under parser.OtherSite) and max_pages_per_minute
// (parser.PageConfig.MaxPagesPerMinute: a site's pages past it in a minute
// are counted under parser.Other), both as the source's parser.Config sets
// them. Which hosts and pages they catch depends on the order of the
// lines and on the Summer's life (a restart, a reload, a replay's source
// start afresh); totals never change.
//
// A Preparser (Summer.Preparser) parses a chunk's lines on the goroutine
// that read them, a replay's reader, into stream.Chunk.Ahead: Add then
// does only what depends on the order of the lines (max_sites,
// max_pages_per_minute, the sums, the sites' hits, the visitor sketches,
// the counts by dimension of the values it parsed), in that order, as for
// the lines it parses: a Parser keeps no state
// across lines, so the Preparser's own gives each line the hit the
// Summer's would.
//
// Caveats:
//   - Only whole chunks are committed: a checkpoint always sits just past a
//     line whose hit (or malformed count) is in the same commit.
//   - The aggregator commits at once when the counts it holds would fill
//     the buffer (buffer.Buffer.Room, buffer.EstimateCounts), and when the
//     buffer is full it stops reading chunks until the flusher frees
//     space; the senders then block, and the log files hold what is not
//     read yet. So the buffer passes max_size by one chunk's counts at
//     most (a chunk is committed whole); the pipeline reads smaller chunks
//     beside a small buffer. BufferFull says since when reading is paused
//     (pipeline's Health fails once it lasts).
//   - With Config.HoldUntilStart nothing is committed before StartMarker
//     has been read from the input (see package pipeline).
//   - A commit refused for lack of space on the state dir (StateDirFull)
//     is retried, the counts held in memory and nothing more read; another
//     commit error stops Run, and what was not committed is read again at
//     the next start.
//   - Malformed-line counters are kept in memory, not in the buffer: after a
//     crash the lines re-read are counted again in the statistics (never in
//     the page views). A line's contents are never logged above debug
//     level.
//   - Lines parsed ahead are parsed by the Preparser's own Parser: the
//     source parser's Counts and bot-cache figures do not include them
//     (the aggregator's Stats do). A chunk prepared for a parser that was
//     replaced before Add read it is parsed again by the new one.
package aggregate
