// Package pipeline turns tailer chunks into counts: its Aggregator parses each line
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
//   - With Config.Ready, nothing is committed until every tailer has sent
//     its start chunks, and a stop before that commits nothing (the lines
//     are read again): the buffer's last-commit time must not move past
//     a file a slower source has yet to claim.
//   - Stopping (ctx cancelled) commits what was parsed; chunks still in
//     the channel are read again from their checkpoints at the next start.
//   - Malformed-line counters are kept in memory, not in the buffer: after a
//     crash the lines re-read are counted again in the statistics (never in
//     the page views).
package pipeline
