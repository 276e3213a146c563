// Package tailer follows the access-log files a source's globs match and
// hands on complete lines, with each file's identity and byte offsets, as
// stream.Chunks. It survives rename and copytruncate rotation and daemon
// restarts without losing or repeating a line, as long as the consumer
// persists each Chunk's Checkpoint together with the counts of its lines.
// The vocabulary it shares with the other readers (a file's identity and
// fingerprint, Checkpoint, the one stream rule, Chunk, the Cutter) is
// package stream's; the tailer keeps the prospector, the follower, and
// where a source's files are (SourceFiles, LocateSource).
//
// # Why a polling follower
//
// The tailer stats and reads every file each PollInterval (a quiet one
// each IdlePollInterval, when set), like filebeat's log input; it does not
// use inotify, which does not see writes on NFS or many FUSE file systems,
// drops events when its queue overflows and needs per-user watch limits
// raised. A poll costs an fstat, a stat of the path
// and a pread of at most 1 KiB per idle file; every decision is derived from
// what the poll sees, so there is no event stream to get out of step with.
// As in filebeat's filestream input, a follower (the harvester) only reads
// its file and reports what a poll saw (grown, cut, deleted); the
// prospector decides what becomes of the file (a rename, a rotation, a
// copytruncate whose copy it adopts, a shrink in place, a finish).
//
// We do not use github.com/nxadm/tail. Measured here: on rename it reopens
// the path at once and never reads the old file to its end (85 of 3,000
// lines lost when the writer kept writing the renamed file for 20 ms, as
// nginx does until it reopens its logs), its Tell() runs ahead of what the
// consumer has processed, so it cannot give exact checkpoints, and a stat
// error other than not-found calls os.Exit(1).
//
// # Parts
//
// A Tailer is made of parts, each holding one idea, which New makes
// without I/O and wires together (they share the Tailer's Config, log,
// counters and output):
//
//   - discovery (discovery.go, scan.go, symlink.go) finds the source's
//     files: the glob matches, the rotated candidates of a path, looks at
//     all of them shared by those who ask together, through the link
//     policy. It decides nothing.
//   - the registry (registry.go) holds the files claimed by followers, by
//     identity, and the index of their first bytes (heads.go): a file is
//     read by the follower that claims it and by no other.
//   - the prospector (prospector.go, copies.go, generations.go,
//     rewatch.go, open.go) decides: it opens followers (a new glob match,
//     a rotated generation no look saw, a rotated file written to after it
//     was finished, the copy a copytruncate left), at their checkpoint or
//     where the ledger says (ledgerView), and settles what each poll of a
//     follower saw. What the looks saw (seenFiles) and the finished
//     rotated files watched (watchList) are its memory.
//   - slots (park.go) keep the open files within Config.MaxOpenFiles:
//     the parked and queued files, and a closed file opened again by
//     identity.
//   - the restorer (restore.go, recover.go, resume.go) matches the
//     restored checkpoints to the files at start, finds the files written
//     while the daemon was down, and retries the checkpoints whose files
//     could not be examined.
//   - a follower (follower.go, reader.go) reads one file.
//
// The Tailer owns their goroutines. Run has three stages: start (the
// restorer's plan, its chunks sent, then Started is closed), follow (a
// rescan every RescanInterval or when the prospector asks, the parked
// files polled, queued files opened as slots free), and stop: once ctx is
// cancelled Run looks at the files no more, a follower stops at its next
// poll or send and closes its file (a file spawned then is closed, not
// run), and Run returns when every goroutine it started has returned.
// No Chunk is sent after.
//
// # Identity and checkpoints
//
// A file is known by device and inode (stream.FileID) plus a fingerprint: the
// FNV-1a 64 hash of its first FPLen bytes, FPLen = min(Offset,
// FingerprintSize). The fingerprint grows with the file until it covers
// FingerprintSize bytes and is then fixed. Files often begin with the same
// bytes (a fixed banner, a #Fields header, the same first requests of a
// health check), so a checkpoint also records its tail check: the hash of
// the TailLen = min(Offset, TailSize) bytes that end at Offset. A file is
// resumed at a checkpoint's offset, or taken for a copy of its file, only
// if both match: a new file with the same first lines (its inode reused,
// or another at the same path) has other bytes there and is read from 0,
// and the rule that decided is logged (INFO, "tail check"). A checkpoint
// stored by an older logtally (encoding version 1) has no tail check and
// resumes by identity and fingerprint, as it did. A checkpoint also names
// the ledger stream its counting moves (Stream, random; see
// Config.Counted and buffer.Mark). Every Chunk carries the
// Checkpoint that is true once its lines are processed; a Done chunk asks
// the caller to delete the checkpoint stored under Checkpoint.Key(). Chunks
// of one file are sent in file order; chunks of different files
// interleave. The consumer must apply checkpoints in the order received
// (a later one for the same key replaces an earlier one); the tailer orders
// its sends so that any prefix of them, persisted, is a correct state to
// restart from.
//
// On start, each restored checkpoint is matched to a file by identity among
// the glob matches and their rotated candidates (for a match P: files named
// P.* and P-*, or the files Config.Rotated matches when it is set; never
// compressed ones). A file with the same identity, at least
// Offset bytes, a matching fingerprint and tail check is resumed at Offset
// (read to its end and finished if it no longer matches a glob). Otherwise
// a copy (other identity, same fingerprint and tail check, at least Offset
// bytes, no checkpoint of its own) is read from Offset: copytruncate while
// the daemon was down. If the
// checkpoint's own file is still there with other content (truncated and
// rewritten, or its inode reused), it is read from 0, after the copy's
// tail, whether a glob still matches it or it was rotated away since (a
// copytruncate and then a rename rotation while the daemon was down); it is
// not read when it begins like another restored checkpoint's file (then it
// is that file's copy). A file shrunk in place while the daemon was down
// (its own file, shorter than Offset but at least FPLen bytes, with a
// matching fingerprint and no copy) resumes at its size, its checkpoint
// sent first. Otherwise the checkpoint is dropped with a Done chunk, sent
// before anything else, and logged at ERROR (lines after Offset may be
// unread) with the `logtally replay` command that counts them, and counted
// in Stats.LostFiles. Glob matches without a checkpoint are read from 0, at
// start and when found by a later rescan. The matching is made again (up
// to five times, a poll interval apart) when the files moved meanwhile: a
// rotation renaming them while the daemon starts would make a file opened
// by a name it no longer has look gone.
//
// # Files written while the daemon was down
//
// A whole generation of a log can appear and be rotated away while the
// daemon is down: a new access.log that no checkpoint was committed for
// (or that the daemon never saw) is renamed to access.log.1, or copied
// there and truncated. No checkpoint leads to it, so the checkpoints above
// cannot find it. Config.Since (the time of the previous run's last
// commit, zero on the very first start) finds it: at start, every rotated
// candidate of the glob matches (and of the restored checkpoints' paths,
// and of a literal glob even while its file is missing) that
//   - no restored checkpoint claims, by identity or as its copy,
//   - is not empty and was modified after Since minus one second,
//   - does not begin with the first FPLen bytes of any restored
//     checkpoint (compared by fingerprint: a copy of a file read that far),
//     unless it reaches that checkpoint's offset with other bytes before
//     it (its tail check: another file that begins the same way),
//   - and whose first bytes (up to FingerprintSize) are not the beginning
//     of another file found (a copy, complete or being written, of a file
//     that is read or accounted for; of two such rotated files the longer
//     one is read)
//
// was never read: it is read from 0 to its end as a rotated file, then
// finished. Its checkpoint at 0 is sent before any line of the run, after
// the Done chunks of dropped checkpoints, so the first commit of the run,
// which moves Since past its modification time, holds it. With a zero
// Since the rule is off: rotated files found on the very first start are
// history, not read.
//
// Why this does not count a line twice: a rotated file whose lines were
// counted either still has a checkpoint (it is claimed by identity) or was
// finished. Its copies begin with its fingerprinted bytes (they are
// claimed as copies). A finished file was quiet for RotateGrace before its
// Done chunk was sent, and that Done was committed at or before Since, so
// its modification time is at least RotateGrace before Since: older than
// Since minus one second as long as RotateGrace is over a second (it is
// 10 s by default).
//
// # Generations rotated away between two looks
//
// A file can appear at a glob's path and be rotated away again before a
// rescan sees it (a writer rotating several times a second): no glob
// matched it while it was there. Every rescan therefore also looks at the
// rotated names (P.* and P-* of each match, literal glob, followed file's
// base and restored checkpoint's path, or the matches of Config.Rotated)
// and remembers each file it saw by identity, with the first bytes of
// those not followed (a followed file is remembered when its follower is
// done with it). A rotated file whose identity no look saw, or saw with
// other first bytes (its inode used again), was created since the last
// look: it is read from 0 (or where the ledger says, Config.Counted) as a
// rotated file, finished once quiet for RotateGrace. Not when it is
// followed, empty (looked at again next time), a copy of a followed file
// or a prefix of one (as for a new glob match), or modified more than a
// second before the newest file the last look saw: that one was moved or
// copied in, not created since, and whether it was counted cannot be
// told; it is not read, but logged at ERROR with the `logtally replay`
// command that counts it, and counted in Stats.LostFiles. The files seen
// at start are remembered as seen (start's own rules decided about them).
//
// # Many files
//
// A Tailer keeps at most Config.MaxOpenFiles files open, each read by a
// goroutine of its own. Past it, files wait closed, without a goroutine:
// queued for a slot (first come first opened), or parked: a follower
// whose poll read nothing, with no decision pending, closes its file when
// another is queued (forgetting a partial last line, which it reads
// again). Run stats each parked file's path every idle poll
// (IdlePollInterval, or PollInterval), and queues the file once its size
// or modification time changes or its path no longer names it. A queued
// file is opened again by identity: at its path, or, moved meanwhile, by
// device and inode among the glob matches and the rotated names; its
// fingerprint is checked at its first poll, as at every poll. Start
// closes the oldest files it planned past the limit. At most as many
// reads are in progress as the Tailer keeps read buffers for, so a
// follower waiting for the consumer holds no buffer of its own.
//
// Looking at the files costs O(files): each directory is read once per
// look (getdents: names, inode numbers and types), a regular file whose
// entry kept its inode number since the last look is not stat'ed again,
// rotated names are found by prefix in the sorted listing, new files are
// compared with the followed files' first bytes through a radix tree,
// and the followers that notice a rotation at the same moment (logrotate
// renaming thousands of files) share one look.
//
// # Rotation
//
//   - rename+create: when a file's path no longer names it and no glob
//     matches it under another name, the file is kept open and read while it
//     grows, and finished (Done) once it has been quiet for RotateGrace, or
//     at once when it is deleted and drained. A rescan is started at once to
//     pick up the new file, which is read from 0. A finished rotated file
//     stays watched (rewatch.go: a stat of its path at every rescan, no
//     open file) for RotateWatch, at most 64 per Tailer: written to again
//     (a writer that reopened its logs late), and still the same file with
//     the same first bytes and the same bytes before where it was
//     finished, it is followed again from there, its checkpoint sent
//     first, with a WARN (Stats.Rewatched), and finished again once quiet.
//   - copytruncate: a file that shrank below the read position, or whose
//     first bytes no longer match the fingerprint, was truncated. The tailer
//     looks among its rotated candidates for the copy and reads it from the
//     old offset to its end under the copy's identity (the lines written
//     between the last poll and the truncation), sends the truncated file's
//     checkpoint at 0, then reads the file from 0; the copy is finished like
//     any rotated file. No copy found is an ERROR (Stats.LostFiles).
//   - shrunk in place: a file below the read position that still begins
//     with the bytes read and has no copy was cut in place, not
//     copytruncated. The lines before its size were counted: it resumes at
//     the size the poll sees, after a checkpoint chunk there (an empty
//     chunk whose Start equals Offset, below the previous one), with a
//     WARN.
//   - a renamed file that still matches a glob (e.g. glob access.log*) is
//     simply followed under its new name.
//   - a deleted file is drained, then finished.
//
// # Caveats
//
//   - Unix only (device and inode come from syscall.Stat_t).
//   - Latency: new data is seen within PollInterval, or within
//     Config.IdlePollInterval when set and the file had been quiet that
//     long (a closed file: when Run's idle poll sees it changed, and a
//     slot is free); a new file within RescanInterval, or at once when it
//     replaces a rotated file.
//   - MaxOpenFiles is exceeded by the files opened for a moment (one
//     examined before it is kept or closed, a new file's first bytes, a
//     fingerprint), and by a copy adopted after a copytruncate. Files
//     that all grow between two polls take slots in turn: with more of
//     them than MaxOpenFiles, each is closed and opened again as others
//     wait (a few system calls each). A rotated file keeps its slot until
//     it is finished (RotateGrace after its last line: it is read while
//     the writer may still write it, and drained if deleted): when more
//     files than MaxOpenFiles are rotated at once, the new files and the
//     closed ones wait for slots, MaxOpenFiles rotated files finishing
//     every RotateGrace (10,000 rotated files, 1,024 slots: about ten
//     times RotateGrace). Their lines are late, not lost.
//   - A file deleted while closed is finished: what it gained after it was
//     closed, if anything, is lost (an ERROR, counted in Stats.LostFiles,
//     when its size had grown). A file renamed while closed to a name no
//     look covers, or replaced by one with the same inode number, is taken
//     for gone or truncated.
//   - A rotated file is judged new by its identity and first bytes: one
//     whose inode was used again by a new file that begins with the same
//     first bytes (up to FingerprintSize), modified since the look that
//     saw the old one, is taken for the old one grown and not read; lines
//     appended to a rotated file after it was finished are not read (see
//     RotateGrace). A rotated file that no look saw and that was modified
//     before the newest file the last look saw is not read (an ERROR):
//     also one created and rotated away while the clock of the file
//     system went back.
//   - A last line without its '\n' is never sent; if its file is finished
//     (deleted or rotated and quiet) it is dropped, with a warning.
//   - Lines written to a rotated file after it has been quiet for
//     RotateGrace are read within RescanInterval of being written, while
//     it is watched (RotateWatch, 24 h; the 64 most recently finished; at
//     the path it was finished under): later, after a restart, or after
//     it was renamed again, they are read only by the Since rule at the
//     next start, if at all. Keep RotateGrace above the time the writer
//     takes to reopen its logs. A rotated file stays open (and a deleted
//     one keeps its disk space) until it is finished.
//   - copytruncate loses the lines written between the copy and the
//     truncation (inherent in copytruncate). If no copy is found (moved
//     where the rotated candidates are not, compressed at once,
//     unreadable), the lines between the last poll and the truncation are
//     lost; this is an ERROR.
//   - Lines appended to a file shrunk in place before the poll that sees
//     the cut (or while the daemon was down) are taken for the old ones
//     and not counted: the cut itself is not known, only the size. A file
//     shrunk below FPLen bytes while the daemon was down is read from 0.
//   - A symbolic link is read only when its target is in a directory of
//     the globs or of Config.Rotated, unless Config.FollowSymlinks; the
//     file opened is the checked path or the checked target, with
//     O_NOFOLLOW. A refused link is logged once per path and counted in
//     Stats.RefusedLinks. Config.Rotated globs are shared by all the
//     source's files and must match only the source's own rotated files.
//   - A truncation that rewrites the same first FPLen bytes and grows past
//     the old read position between two polls is not noticed. Fingerprints
//     of short files (small FPLen) are weak; a checkpoint with FPLen 0 never
//     matches a copy.
//   - Two files whose bytes are the same up to a checkpoint's offset (its
//     fingerprint and tail check both pass) cannot be told apart: a new
//     file that repeats a gone one's lines that far (timestamps included)
//     is taken for it. A checkpoint of an older logtally has no tail check
//     until it is next committed, and a file shrunk in place while the
//     daemon was down is recognised by its fingerprint alone.
//   - Config.Counted (the ledger) moves a file only to a position its
//     bytes pass (tail check; an older logtally's entry, without one: a
//     line end of the file). A position beyond the file's end cannot be
//     checked and is not taken: a file that is a shorter copy of a stream
//     counted further (not a copy of a followed file, which is not read)
//     is read from 0.
//   - A new glob match that begins with the first bytes of a followed file
//     is taken for its copy and not read (this keeps a glob such as
//     access.log* from counting copytruncate copies twice); one whose whole
//     content is a prefix of a followed file's first bytes (an empty file, a
//     copy being written) is not read until it differs. Two different logs
//     with identical first bytes would be confused.
//   - Compressed files (.gz .zst .bz2 .xz .lz4 .zip) are never followed, even
//     when a glob matches them; archives are for `logtally replay`.
//   - Files written while the daemon was down are found only among the
//     rotated candidates (P.* and P-*, or Config.Rotated; uncompressed) at
//     start. One renamed
//     to a name outside those patterns, compressed before the daemon
//     starts, or rotated away while its live path is missing and matched by
//     a pattern with metacharacters, is not found: count those with
//     `logtally replay`. One that cannot be read at start is logged and not
//     read.
//   - That rule needs RotateGrace above one second (see above), and it
//     needs each tailer's start to send its checkpoints before the
//     caller's first commit (the daemon commits every second): a source
//     whose start took longer, with another source's lines committed
//     meanwhile, could lose a file found at this start if the daemon is
//     killed before committing again.
//   - Two ways a file can look unread, both needing a restart before any
//     commit more than a second after an event. Lines written to a rotated
//     file after it was finished (see RotateGrace and RotateWatch), the
//     daemon stopping before the rescan that follows it again, with no
//     commit a second later (it stops at once, or every source is idle
//     until it stops): the Since rule reads the file, from where the
//     ledger says its stream is counted (Config.Counted; read from 0, its
//     lines counted twice, without one). A copytruncate copy that is
//     shorter than what was read of the original (the original was read
//     between the copy and the truncation, so the copy is not adopted and
//     the truncation is logged) looks unread if the daemon stops within
//     about a second of the truncation, and is not moved by the ledger
//     (it is shorter than its stream's entry): counted twice.
//   - A rotated file written while down that begins with the same first
//     bytes (up to FingerprintSize) as another file is taken for its copy
//     and not read; a rotated file shorter than a restored checkpoint's
//     FPLen whose checkpointed file is gone cannot be told from a partial
//     copy of it and is read.
//   - If a checkpointed file cannot be examined at start (an error other
//     than not-exist), its checkpoint is kept and retried at every rescan,
//     and the file is not read meanwhile. Other stat, open and read errors
//     are logged at most once a minute per file and retried; nothing exits
//     the process.
//   - Identity relies on device numbers being stable across restarts; a
//     file system whose device number changes (some network or layered file
//     systems) makes every checkpoint look gone, and files are read again
//     from 0.
//   - A read block full of lines is handed on as is (no copy): the Chunk's
//     Data is the read buffer, which comes back to the Tailer to be read
//     into again when the consumer calls Chunk.Release (as many are kept
//     per Tailer as its output channel holds, plus two: 6 MiB with the
//     pipeline's channel of 4 and 1 MiB reads). A small read is copied out and its buffer reused at once. A
//     partial line up to MaxLineBytes is kept per file, copied out of the
//     buffer.
//   - Lines longer than MaxLineBytes are skipped whole and reported in skip
//     chunks; the warning is logged at most once a minute per file. stream.Cutter
//     holds the rules of what a line is; replays, the dry run and the
//     state-dir rebuild's re-read cut with it too.
package tailer
