// Package stream is the vocabulary every reader of log bytes shares: the
// tailer, which follows live files, the replay, which reads archives, and
// the state-dir rebuild's re-read. It holds what a file and a stream are,
// where reading one stands, what a line is and what a reader hands on. It
// is a leaf: it imports only the standard library and fnv1a.
//
// # Identity
//
// A file is known by device and inode (FileID, IDOf) plus a fingerprint:
// the FNV-1a 64 hash of its first FPLen bytes, FPLen = min(Offset,
// FingerprintSize). A checkpoint also records its tail check: the hash of
// the TailLen = min(Offset, TailSize) bytes that end at Offset
// (FingerprintMatches, HasFingerprint, TailAt, TailOf, TailMatches). The
// tailer's package doc says how it uses them to resume, adopt copies and
// tell rotations apart.
//
// A stream is a file's bytes whatever holds them: a followed file, its
// copytruncate copy and its compressed archive are one stream. The one
// rule: a stream beginning with head is the file a checkpoint describes,
// or a copy of it, when head begins with the bytes its fingerprint covers
// (Same); reading it starts at the furthest of where the ledger says it is
// counted and the offsets of those checkpoints (Start). Each counting of a
// stream moves a ledger entry of its own, Checkpoint.Stream (NewID).
//
// # Stored encodings
//
// A Checkpoint's binary form (MarshalBinary, versions 1 and 2) and Key,
// the ledger keys (LedgerKey for a fingerprint, EntryKey for a stream's
// entry, Checkpoint.LedgerKey), the ledger documents' and claims' _ids in
// MongoDB (LedgerID, ClaimID) and a finished file's key
// (Checkpoint.FinishedKey) are written once here and stored by the state
// dir (package buffer) and the database (package flusher). They never
// change: tests pin their bytes. LedgerCandidates lists every key a
// stream beginning with some bytes may have been marked under; ClaimKey is
// the one a replay claims. An Entry is how far one stream is counted, as
// either ledger holds it.
//
// # Chunks and lines
//
// A Chunk is what a reader hands on: a run of whole lines of one file
// with the Checkpoint that is true once they are counted, a skip of
// overlong lines, or a file's end (Done); or, of no file, a barrier that
// its consumer answers once the chunks before it on the channel are
// durable (the pipeline's, before each seal). The Cutter is the one rule of
// what a line is: every reader cuts with it, so the rebuild's re-read
// cuts exactly as the follower did.
//
// # Caveats
//
//   - IDOf is Unix only (device and inode come from syscall.Stat_t), as
//     the tailer is. Identity relies on device numbers being stable
//     across restarts.
//   - Same compares fingerprints only: two streams that begin with the
//     same FPLen bytes are one stream to it. Where that matters (resuming,
//     taking a ledger entry) the reader checks the tail check too.
//   - FingerprintSize and TailSize are part of the stored encodings:
//     changing either re-keys the ledger and makes every stored checkpoint
//     miss its file.
//   - Chunk.Ahead is an interface, Parsed, not the consumer's concrete
//     type: that type is aggregate's, made of parser's types, which a leaf
//     cannot name. The aggregator asserts its own type and parses the
//     lines again when the assertion fails.
//   - A chunk's Data may be its reader's pooled buffer (WithBuffer): it is
//     valid until Release, which is called once; never calling it only
//     costs a new buffer.
package stream
