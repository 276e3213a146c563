// Package pipeline is the middle of logtally and its restart state: it turns
// the tailers' chunks into counts and wires one run of
//
//	tailers -> Aggregator -> buffer <- flusher -> MongoDB
//
// The Aggregator parses each line with its source's parser, sums hits per
// (site, page, second) in memory, and every commit interval commits the
// sums to the buffer together with the checkpoints of the chunks they came
// from, in one transaction.
//
// A Pipeline owns one run. New opens the buffer, decodes the checkpoints
// it holds, groups them by source for the tailers, and hands each tailer
// the buffer's last-commit time (tailer.Config.Since). Run starts the
// tailers, the aggregator and the flusher, and on cancel stops reading,
// makes the final commit and drains the buffer to MongoDB within the
// shutdown timeout. `logtally run` uses it; replay into MongoDB, reload
// and state-dir recovery are to reuse it.
//
// Caveats:
//   - Only whole chunks are committed: a checkpoint always sits just past a
//     line whose hit (or malformed count) is in the same commit.
//   - When the buffer is full the aggregator commits what it holds and stops
//     reading chunks until the flusher frees space; the tailers then block,
//     and the log files hold what is not read yet.
//   - Nothing is committed until every tailer's start chunks have been
//     added: once every tailer's Started channel is closed, the Pipeline
//     sends StartMarker on the chunk channel, behind every start chunk, and
//     the aggregator (AggregatorConfig.HoldUntilStart) commits only after
//     reading it. A stop before that commits nothing (the lines are read
//     again). The buffer's last-commit time must not move past a file a
//     source has claimed but not yet checkpointed, or the next start would
//     take that file for history.
//   - Checkpoints of a source no longer configured stay in the buffer
//     untouched and are logged at start: adding the source back resumes
//     where it stopped. Checkpoints that cannot be decoded are logged and
//     left; their files are read as new ones.
//   - Stopping (ctx cancelled) commits what was parsed; chunks still in
//     the channel are read again from their checkpoints at the next start.
//   - Malformed-line counters are kept in memory, not in the buffer: after a
//     crash the lines re-read are counted again in the statistics (never in
//     the page views).
//   - The state is only as safe as buffer.db: a lost or replaced state dir
//     makes the tailers read every file from 0 again (see
//     docs/architecture.md, known limits).
package pipeline
