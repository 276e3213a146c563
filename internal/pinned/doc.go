// Package pinned is the one reader of what the packages that pin public
// lists (botclass, referrer, geo; uafamily's test data) keep beside them:
// our own lists and the VERSIONS file.
//
// Our own lists are edited by hand: one value, a TAB and its source a
// line; # comments and blank lines are skipped (OwnList).
//
// VERSIONS, written by each package's refresh script, names every
// upstream list pinned: a line of TAB-separated name, repository, commit,
// commit date (UTC), licence and files, # comments above (Lists, Version).
//
// # Caveats
//
//   - VERSIONS lines with fewer than four fields are skipped, not errors:
//     the packages' tests check their files' lines in full.
//   - OwnList reads text embedded at build time: its errors name the
//     file and line for whoever edits the list, and are the tests'.
package pinned
