// Package pinned is the one reader of what the packages that pin public
// lists (botclass, referrer, geo) keep beside them: our own lists and the
// VERSIONS file.
//
// Our own lists are edited by hand: one value, a TAB and its source a
// line; # comments and blank lines are skipped (OwnList).
//
// VERSIONS, written by each package's refresh script, names every
// upstream list pinned: a line of TAB-separated name, repository, commit,
// commit date (UTC), licence and files, # comments above (Lists, Version).
//
// pinned.sh is the shell side: the steps the refresh scripts share
// (botclass/refresh.sh, referrer/refresh.sh, geo/refresh.sh,
// uafamily/refresh-testdata.sh): resolve a commit (or the pinned one) and
// its date, fetch a file at it from a local clone or GitHub, check a
// licence, write VERSIONS. Each script sources it and keeps its own
// options, upstreams and extraction; a plain run reproduces the committed
// files byte for byte from the pinned commits.
//
// # Caveats
//
//   - VERSIONS lines with fewer than four fields are skipped, not errors:
//     the packages' tests check their files' lines in full.
//   - The lists are embedded: an OwnList error (file:line, for whoever
//     edits the list) shows in the packages' tests, not at run time.
//   - The scripts source pinned.sh at ../internal/pinned from their own
//     directory: a copy of a script run elsewhere needs that layout
//     (referrer's TestRefreshReproduces makes it).
package pinned
