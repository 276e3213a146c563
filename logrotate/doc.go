// Package logrotate reads logrotate's configuration for what logtally
// needs of it: which stanza rotates a log file into another directory
// (olddir), so that `logtally check` can suggest the source's `rotated`
// globs. Rotation into another directory is missed without them: a file
// rotated there while logtally is down, or copytruncated, loses lines.
//
// Rules reads logrotate.conf and logrotate.d/* under a root (/etc);
// Parse reads one file; OlddirHints matches log files with the stanzas'
// globs and says what to set.
//
// Caveats:
//   - Only the stanzas' paths, olddir and noolddir are understood; include
//     directives, tabooext and the other keys are ignored, and a path
//     with spaces inside quotes is not one path.
//   - At most 256 files are read, each up to 1 MiB; a line over 64 KiB
//     ends the reading of its file, and files that cannot be read are
//     skipped: the hints are advice, never an error.
//   - A log file matched by several stanzas takes the olddir of the first
//     one that matches it and sets olddir, in the order the files
//     (logrotate.conf, then logrotate.d/* sorted) and stanzas were read.
package logrotate
