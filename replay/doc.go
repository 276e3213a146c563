// Package replay counts archived access logs (read by package archive)
// as the daemon would.
//
// A Service replays archives into a running pipeline, a source of chunks
// beside its tailers, through a narrow port, the Target interface, which
// *pipeline.Pipeline satisfies with three methods: its settings
// (ReplayConfig, with MongoDB's ledger, Claims), what it holds
// (ReplayState: the files its tailers follow, the state dir's checkpoints
// and ledger) and a Feed of the replay's sources (OpenReplay: send chunks,
// kick the writes, the signals to stop and that what was sent is in the
// state dir, the totals). Each file is read from where the ledger (the
// state dir's and MongoDB's) says it is counted, claimed in MongoDB's
// ledger while it is read, and Replay returns once its counts are
// acknowledged. While chunks wait for the aggregator, a reader parses the
// next one itself (Feed.Sender), so that a replay parses on more than the
// aggregator's core. Service.Serve answers `logtally replay` on the
// daemon's control socket (Listen; AskDaemon is the client), so that one
// process with one buffer counts both the live files and the archives.
// The dry run (sums in memory, no buffer or database) is package dryrun.
//
// Where a file starts: every ledger entry of a stream beginning with its
// first bytes (this buffer's and MongoDB's), and the checkpoint held of
// it, is a candidate; the file starts at the furthest its own bytes pass
// (archive.ReadAt, archive.Candidate): the tail check, the hash of the bytes that
// end at the entry's offset (an older logtally's entry, without one: a
// line end). Other files that begin with the same bytes (another
// source's followed file, another generation of a log) have other bytes
// there. The candidates are checked while the counted bytes are skipped;
// when the furthest fails and a nearer one passes, the file is opened
// again and skipped to it. Each replayed file marks a ledger stream of its
// own, and waits for it (and the entry of this buffer it started at) to
// be acknowledged. Files whose heads begin one another's are read one
// after the other, each with where those before it ended as candidates
// too (their counts may not be committed yet).
//
// A candidate beyond a file's end (a stream counted further than the file
// is long) is settled by the candidate's own file when it still holds its
// stream (passes its tail check: this buffer's entries, a held
// checkpoint, a file read before; never a path from the database): the
// file is a shorter copy, counted whole, when that file has its bytes
// where it ends. When that file cannot tell (gone, rewritten, an older
// logtally's entry), the file is taken as a shorter copy (copytruncate's
// copy of a log read past the copy) only when the entry is of the
// replay's own source (names compared up to their first '@' or '/').
//
// ExpandFiles turns the FILE|GLOB arguments of logtally replay and verify
// into absolute paths, a glob matching nothing being an error.
//
// Caveats:
//   - A shorter file of the replay's source that begins like a stream
//     counted further, whose own file is gone or rewritten, is taken for
//     its copy and not counted (a look-alike of it, not a copy, is lost);
//     of another source it is counted (a copy of it counted twice).
//   - Lines are cut as the daemon's tailer cuts them (stream.Cutter): a
//     line longer than max_line_bytes (default 1 MiB, '\n' not included)
//     is skipped and counted as too long; the unterminated last line of a
//     finished, intact file is a line.
//   - A damaged file (truncated, or a decompressor or checksum error) is a
//     *archive.DamagedError naming it and the decompressed offset reached: its whole
//     lines before the damage are read, never the cut-off tail. A corrupt
//     gzip member or zstd frame is caught by its checksum at its end, after
//     its bytes were read; a file cut exactly at a member or frame
//     boundary looks whole.
//   - The pipeline stopping reading (a reload, a stop) ends a replay. Once
//     every file was read, Replay waits for the aggregator's final commit
//     and reads the buffer's ledger: every file counted there is a summary
//     with Unacknowledged set, not Stopped (the next pipeline on the
//     buffer writes the counts; the claims are left to expire); a file
//     whose chunks the aggregator had not taken is "stopped".
//   - One replay at a time per Service: another gets ErrRunning. A file
//     the pipeline's tailers follow, or a copy of one (the same first
//     bytes), is refused while they run, by its first bytes alone (no
//     tail check).
//   - Beside the daemon the files are read by the daemon, as its user and
//     under its unit's sandbox (ReadOnlyPaths, ProtectHome): a file it
//     cannot read fails, named. Files only root can read need the replay
//     run with the daemon stopped; passing descriptors (SCM_RIGHTS) is
//     left for later.
//   - Only root and the daemon's own user may use the control socket
//     (SO_PEERCRED); a request is checked before anything is read, and its
//     contents are never logged.
package replay
