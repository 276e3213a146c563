// Package recovery keeps an instance's state recoverable from MongoDB and
// recovers it: the Recorder holds the instance's lease and records each
// batch in its progress record (package record) before the batch's
// bucket updates begin, and Rebuild makes a lost or corrupt buffer file
// again from that record.
//
// Rebuild restores the checkpoints where the acknowledged counts end,
// finding each file again under the source's globs and rotated globs
// (tailer.LocateSource; its identity may differ on a rebuilt host).
// When a batch was in flight it re-reads the batch's lines, from the files and from the replayed archives the record
// names, sums them with the daemon's own Summer (aggregate.NewSummer), and
// seals them under the batch's own id, so that writing it again counts only
// what the buckets lack. With flush.coarse_interval it rebuilds the coarse
// counts the same way.
//
// The batch's ends (its checkpoints at the seal and the files it
// finished) are grouped into streams by their first bytes: one generation
// of a log, which copytruncate spreads over the log and its copies. Each
// stream is read once, from its furthest checkpoint at the previous seal
// (0 when it began within the batch) to its furthest end, every
// checkpoint looked for by its own fingerprint, so a log truncated twice
// within the batch is read from both copies and itself, each part once.
// The marks of what was read go to the new buffer's ledger. The new
// buffer is written at buffer.db.rebuild and renamed into place, with the
// checkpoints at the batch's seal and the last-commit time of that seal
// (so the tailers' Since rule reads the rotated files written after it).
// What cannot be recovered is logged at ERROR with its count: not_found
// (a file rotated away and deleted while the state was gone),
// lost_bytes_of_batch_in_flight, archives_not_found,
// finished_files_not_recorded.
//
// Files by role: rebuild.go (Rebuild: the record, the lease, the new
// buffer), reread.go (re-reading a window's lines: streams, ranges, the
// line cutter), rebuildarchive.go (a window's archive parts), locate.go
// (decoding the record's checkpoints, finding their files again),
// record.go (the Recorder and the lease), config.go.
//
// Caveats:
//   - A second live daemon with the same instance name is refused within
//     about a third of lease_ttl plus one renewal; a restart after SIGKILL
//     with the state dir gone waits at most lease_ttl for the lease.
//   - Rebuild takes the instance's lease first, waiting for a live one to
//     expire, and waits while MongoDB cannot be reached.
//   - Lines of the batch in flight in a file that is not found again (or is
//     shorter, or an archive that changed) are lost: logged at ERROR with
//     their byte count. Such an archive's ledger mark is kept at its end, so
//     a later replay does not count again what the buckets already took.
//   - A record written by an older logtally may not list the files
//     finished within the batch; those of the batch's start that are not at
//     its end are then read to their end.
package recovery
