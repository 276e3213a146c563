// Package buffer is logtally's crash-safe store between the log files and
// MongoDB: a bbolt file holding pending per-(site, page, second) counts,
// the sealed batch in flight, the tailers' file checkpoints, the ledger of
// how far each file or archive is counted, and what the database's
// progress record is rebuilt from. It knows nothing of files, lines or
// MongoDB.
//
// Its transactions are typed, in bbolt's shape (tx.go). Reads go through
// View: a ReadTx's readers (checkpoints, the last commit, the batch in
// flight and its counts, snapshots, the ledger, archive sources, visitors,
// salts) all see one state of the file. The batch's life is the Buffer's
// own writes, each one bbolt transaction: Commit, Seal, SaveProgress, Ack;
// Rebuild writes a new file. The small writes go through Update, a Tx
// (a ReadTx that writes): the writer number, replay sources' settings,
// visitor registers sent and dropped, salts; one Update is one
// transaction, whatever it writes. The Buffer's other methods are the file
// (Path, InstanceID, Number, Close, Truncated, Replaced, Restore) and the
// sizes kept in memory (Pending, Size, Full, Room).
//
// Counts, the checkpoints of the lines they came from and the ledger marks
// they move are written in one bbolt transaction (commit.go: Commit,
// taking a Commit), so after a crash at any instant they agree: lines after a
// checkpoint are read again, lines before it are counted in the buffer,
// none twice.
//
// The flusher seals all pending counts into one batch (Seal, an O(1) bucket
// move), writes it to MongoDB, and only then deletes it (Ack). One batch is
// in flight at a time; counts committed meanwhile stay pending for the
// next. Each batch keeps a copy of the checkpoints at its seal
// (ReadTx.Snapshot(SealedBatch)), and Ack keeps that copy as the last
// acknowledged batch's (AckedBatch): where the counts in MongoDB end,
// which the progress record carries and Rebuild restores into a new file
// when the buffer is lost.
//
// Batch ids (number.go): once the buffer has a writer number (Tx.SetNumber,
// claimed by the flusher in MongoDB), each batch is "<n>:<seq>", seq one
// above the last, kept in the file; before, 24 random hex digits. A
// rebuilt buffer adopts the number and the highest sequence of the batch
// ids its record names (Rebuild), so no batch reuses a sequence the
// buckets may hold. Opening a file marks it format 4: an older logtally
// refuses it rather than write a numbered batch under its own guard.
//
// Each batch carries its layout (layout.go), stamped when it is sealed
// (CurrentLayout; a rebuilt batch takes the one its record names, and a
// batch sealed by a logtally before layouts has none: LayoutPages), so
// that the flusher writes every attempt of a batch to the same documents.
// In a test binary, SealLayoutEnv ("LOGTALLY_TEST_SEAL_LAYOUT=pages")
// makes Seal stamp LayoutPages: the process then writes as a logtally
// before layouts did, which is how cmd/logtally's tests run a mixed fleet
// (old and new hosts writing one site, one upgraded with a batch in
// flight) and an old database read after new hosts add to it. Other
// binaries never read the variable.
//
// Coarse counts (coarse.go): with the flusher's coarse interval most
// batches are sealed minute-only (Seal.MinuteOnly) and written to the minute
// buckets alone; acknowledging one adds its counts to the coarse counts,
// which the next full batch (Seal) carries, with its own, to the daily and
// monthly buckets (ScanCoarse). The AckedFullBatch's snapshot is where the
// daily and monthly counts end; Rebuild restores the coarse counts too
// (Rebuilt.Coarse).
//
// The ledger (ledger.go): a mark says that the stream whose first bytes
// hash to a fingerprint is counted up to an offset, whoever counted it
// (the daemon or a replay, on any host). Streams that begin with the same
// bytes share the fingerprint, so each counting of a stream (a followed
// file, a replayed archive) keeps an entry of its own (keyed by the
// fingerprint and a random stream id) with the tail check of its offset:
// the hash of the bytes that end there. Marks are committed with the
// counts they cover and travel with the next batch (BatchMarks), so the
// flusher copies them to the database's ledger before the batch is
// acknowledged. Streams returns every entry under a stream's first bytes
// (stream.LedgerCandidates) as stream.Entry, the type MongoDB's ledger
// returns too; the reader, which has the bytes, takes the furthest whose
// tail check its own bytes pass. Entries of an older logtally (no
// stream, no tail check) are read too. Entries not moved for
// Options.LedgerRetention (DefaultLedgerRetention) are pruned by Seal, at
// most once an hour.
//
// The file itself (verify.go, watch.go, dir.go): Verify checks a bbolt
// file with plain reads, without mapping it; Open and OpenReadOnly run it
// first and return ErrCorrupt instead of faulting or panicking on a
// truncated or overwritten file. While open, Truncated notices the file
// cut shorter than bbolt uses (every method then returns ErrTruncated
// rather than touch the map), Replaced notices it deleted or replaced, and
// Restore writes the open file's contents back to the path. CheckDir
// validates a state dir (writable; it, the directories above it and the
// buffer file owned by this user or root and not writable by group or
// others, sticky directories above it excepted) and reports a buffer
// locked by a running logtally.
//
// Caveats:
//   - bbolt holds one writer at a time and a file lock: a second process
//     opening the same file fails after Options.LockTimeout with ErrLocked;
//     OpenReadOnly (logtally state) takes a shared lock.
//   - The file never shrinks (bbolt reuses freed pages but does not return
//     them to the file system). Size reports the live data (pending,
//     sealed and coarse counts), not the file: Options.MaxSize bounds
//     Size, an estimate (keys, values and a per-key overhead). A writer
//     that commits once its counts reach Room (EstimateCounts) and then
//     waits while Full passes MaxSize by its last commit at most.
//   - bbolt maps the file 8 MiB from the start and extends it to that size
//     at its first growth: `ls` shows an 8 MiB buffer.db that holds a few
//     pages. The extension is sparse (`du` shows what is written).
//   - NoFreelistSync is on: commits are cheaper, and after an unclean stop
//     bbolt rebuilds its freelist by scanning the file at Open.
//   - Keys are length-prefixed, so a site or page may hold any bytes.
//   - The function given to View or Update must not start another
//     transaction of the same Buffer (View, Update, Commit, Seal, …): a
//     write that needs a larger map waits for every open read
//     transaction, its own caller's included. A long View holds back the
//     reuse of the pages it reads, so none does network I/O.
//   - Update's writes are not Commit's: a Tx has no retry token, so a
//     caller retrying an Update whose sync failed writes it again. Every
//     Tx write is idempotent (a register's maximum, a salt, a number, a
//     source's settings), so that costs nothing.
//   - A commit that reports an error may still have reached the file (its
//     sync failed, yet the next transaction sees it): Commit finds the
//     random token written with it and returns nil, so a caller retrying on
//     an error never counts it twice.
//   - Verify reads bbolt's layout as little-endian (bbolt writes it in the
//     machine's order): on a big-endian machine it would refuse every file.
//     logtally is built for little-endian machines (amd64, arm64) only.
//   - A truncate between Truncated's check and a transaction's read of the
//     map faults: each transaction runs with the goroutine's faults made
//     panics (runtime/debug.SetPanicOnFault) and returns ErrTruncated for
//     one on the truncated file. bbolt's rollback of a write transaction
//     reads the map too and may fault in turn, leaving bbolt's lock held:
//     writers wait on the Buffer's own lock instead, and Close then leaves
//     bbolt's handle to the process's exit.
package buffer
