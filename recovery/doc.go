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
// names, sums them with the real aggregator (aggregate.NewSummer), and
// seals them under the batch's own id, so that writing it again counts only
// what the buckets lack. With flush.coarse_interval it rebuilds the coarse
// counts the same way.
//
// Files by role: rebuild.go (Rebuild: the record, the lease, the new
// buffer), reread.go (re-reading a window's lines: streams, ranges, the
// line cutter), rebuildarchive.go (a window's archive parts), locate.go
// (decoding the record's checkpoints, finding their files again),
// record.go (the Recorder and the lease), config.go.
//
// Caveats:
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
