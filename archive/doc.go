// Package archive reads log files, plain or compressed (gzip, also
// concatenated members, zstd or bzip2, told by their first bytes, not
// their names), as chunks of whole lines with checkpoints: what a replay,
// the dry run and the rebuild of a lost state dir read archives with.
//
// Open opens a file, decompressing it; Head returns its first decompressed
// bytes (the ledger's fingerprint); Stream and Read read its lines from an
// offset, sending or handing on stream.Chunks whose checkpoints mark a
// ledger stream of their own; ReadAt reads it from where the ledger says
// it is counted: the furthest Candidate its own bytes pass (the tail check
// at the candidate's offset; an older logtally's entry, without one: a
// line end), a candidate beyond the file's end settled by the candidate's
// own file when it still holds its stream (a shorter copy, counted whole),
// else by Candidate.Covers. Counters are a read's running totals.
//
// Caveats:
//   - Lines are cut as the daemon's tailer cuts them (stream.Cutter): a
//     line longer than the maximum is skipped (a skip chunk); the
//     unterminated last line of a finished, intact file is a line, of a
//     live one (a followed file's copy) is left to the tailer.
//   - A damaged file (truncated, or a decompressor or checksum error) is a
//     *DamagedError naming it and the decompressed offset reached: its
//     whole lines before the damage are read, never the cut-off tail. A
//     corrupt gzip member or zstd frame is caught by its checksum at its
//     end, after its bytes were read.
//   - ReadSize is a package variable that tests set; it is read by every
//     reader at once.
package archive
