// Package buffer is logtally's crash-safe store between the log files and
// MongoDB: a bbolt file holding pending per-(site, page, second) counts, the
// sealed batch in flight, and the tailers' file checkpoints.
//
// Counts and the checkpoints of the lines they came from are written in one
// bbolt transaction (Commit), so after a crash at any instant the buffer and
// the checkpoints agree: lines after the checkpoint are read again, lines
// before it are counted in the buffer, none twice.
//
// The flusher seals all pending counts into one batch (Seal, an O(1) bucket
// move), writes it to MongoDB, and only then deletes it (Ack). One batch is
// in flight at a time; counts committed meanwhile stay pending for the next.
//
// Caveats:
//   - bbolt holds one writer at a time and a file lock: a second process
//     opening the same file fails after Options.LockTimeout with ErrLocked.
//   - The file never shrinks (bbolt reuses freed pages but does not return
//     them to the file system). Size reports the live data, not the file.
//   - NoFreelistSync is on: commits are cheaper, and after an unclean stop
//     bbolt rebuilds its freelist by scanning the file at Open.
//   - Keys are length-prefixed, so a site or page may hold any bytes.
package buffer
