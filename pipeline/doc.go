// Package pipeline wires one run of logtally and keeps its restart state:
//
//	tailers -> aggregator -> buffer <- flusher -> MongoDB
//
// A Pipeline owns one run, in the order litestream's DB keeps: New checks
// the config and does no I/O; Open opens the buffer (rebuilding a missing
// or corrupt one from the instance's progress record, which may wait for
// MongoDB: package recovery), decodes the checkpoints it holds, groups them
// by source for the tailers, and hands each tailer the buffer's
// last-commit time (tailer.Config.Since); it makes the aggregator (package
// aggregate) and the flusher. Run starts the components, each owning its
// goroutines, in stages (an errgroup each), and waits for all of them
// before it returns. A component's error stops the run as a cancel does,
// and the stages stop in the exactly-once protocol's order: reading (the
// tailers, the commit gate; replays watch Reading) -> the aggregator's
// final commit -> the flusher, then its drain within the shutdown timeout
// (none on a reload) -> the buffer-file watch, then the restore of a
// deleted buffer.db -> the progress record's lease, released. Close(ctx)
// stops a Run still under way, waits for it and closes the buffer last.
// `logtally run` and `logtally replay` (with no daemon, Config.NoTail) use
// it; a reload makes a new Pipeline on the same buffer. It satisfies
// replay.Target, so a replay.Service counts archives into it while it
// runs: a replay is a source of chunks beside the tailers, and sees the
// pipeline through that port alone (ReplayConfig, with MongoDB's ledger
// and claims, a ledger.Store the pipeline makes; ReplayState, the
// tailers' files and the buffer's checkpoints and ledger; OpenReplay, a
// feed that sends chunks and kicks the flusher). Status and ReadStatus report what the buffer and the tailers hold,
// for /status and `logtally state`; Alive (for the watchdog) whether the
// stages turn, Health (for /healthz) whether the pipeline makes progress:
// hits pending with nothing written to MongoDB for Config.UnhealthyAfter,
// or reading paused that long on a full buffer, fail it. Signals are cmd/logtally's: the
// pipeline sees only its context and the cause it ends with (ErrReload).
//
// Caveats:
//   - Nothing is committed until every tailer's start chunks have been
//     added: once every tailer's Started channel is closed, the Pipeline
//     sends aggregate.StartMarker on the chunk channel, behind every start
//     chunk, and the aggregator (aggregate.Config.HoldUntilStart) commits
//     only after reading it. A stop before that commits nothing (the lines
//     are read again). The buffer's last-commit time must not move past a
//     file a source has claimed but not yet checkpointed, or the next start
//     would take that file for history.
//   - Before each seal the flusher calls the Pipeline's barrier
//     (flusher.Config.Barrier): an aggregate.Barrier on the chunk channel,
//     behind every chunk sent so far, answered once the aggregator has
//     committed them, so a batch holds every line read before its seal.
//     The flusher knows no aggregator. It waits one commit interval at
//     most (while the aggregator reads nothing, a full buffer or state
//     dir, the seal goes on and the rest goes into the next batch) and
//     not at all once the aggregator has stopped; a barrier left on the
//     channel holds nothing.
//   - Checkpoints of a source no longer configured stay in the buffer
//     untouched and are logged at start: adding the source back resumes
//     where it stopped. A new source (no checkpoint of its own) whose file
//     names hold their paths takes them over first, with the old name's
//     ledger entries there (a renamed source: see rename.go); one two new
//     sources hold, or a file two old sources had checkpoints of, is taken
//     by none. Checkpoints that cannot be decoded are logged and left;
//     their files are read as new ones.
//   - Stopping (ctx cancelled) commits what was parsed; chunks still in
//     the channel are read again from their checkpoints at the next start.
//     A stop for a reload (ErrReload) does not drain: the next Pipeline on
//     the buffer writes what is pending.
//   - A buffer.db deleted or replaced while running stops the run
//     (ErrBufferReplaced) and is restored at its path from the open file
//     after the final commit and drain; one truncated in place stops it
//     without touching it again, and the restart rebuilds it.
//   - Health's UnhealthyAfter counts from the flusher's last progress or
//     the run's start: a new Pipeline (a reload) starts it again.
//   - Without Config.Instance no progress record is kept: a lost or corrupt
//     buffer cannot be rebuilt, and the tailers then read every file from 0
//     again (see docs/architecture.md, known limits).
package pipeline
