// Package aggregator turns tailer chunks into counts: it parses each line
// with its source's parser, sums hits per (site, page, second) in memory,
// and every commit interval commits the sums to the buffer together with the
// checkpoints of the chunks they came from, in one transaction.
//
// Caveats:
//   - Only whole chunks are committed: a checkpoint always sits just past a
//     line whose hit (or malformed count) is in the same commit.
//   - When the buffer is full the aggregator commits what it holds and stops
//     reading chunks until the flusher frees space; the tailers then block,
//     and the log files hold what is not read yet.
//   - Malformed-line counters are kept in memory, not in the buffer: after a
//     crash the lines re-read are counted again in the statistics (never in
//     the page views).
package aggregator
