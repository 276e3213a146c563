// Package replay reads archived access logs (plain, gzip, zstd or bzip2, told by their
// first bytes, not their names) and counts them as the daemon would. Today
// it holds the dry run: the same parser, page rules, filters and
// max_pages_per_minute as a source, summing hits in memory and printing a
// summary, with no buffer or database.
//
// Caveats:
//   - Lines are cut as the daemon's tailer cuts them (tailer.Cutter): a
//     line longer than max_line_bytes (default 1 MiB, '\n' not included)
//     is skipped and counted as too long; the unterminated last line of a
//     finished, intact file is a line.
//   - A damaged file (truncated, or a decompressor or checksum error) is a
//     *DamagedError naming it and the decompressed offset reached: its whole
//     lines before the damage are read, never the cut-off tail. A corrupt
//     gzip member or zstd frame is caught by its checksum at its end, after
//     its bytes were read.
//   - Page ids are 26 bits; past 2^26 distinct pages the ids start again
//     after a commit, and the distinct-pages figure adds the forgotten ones.
package replay
