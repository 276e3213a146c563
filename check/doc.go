// Package check is `logtally check`: it checks a config against this host
// and MongoDB and prints what it finds, for a person. Sources checks a
// config for the daemon: the files each source's tailer would follow
// (tailer.DiscoverSource), a file two sources match (it would be counted
// twice), the rotated setting a logrotate olddir calls for (package
// logrotate), the state dir (buffer.CheckDir) and MongoDB's reachability.
// Reader checks a config for serve and query: MongoDB reachable, its user
// able to read what they read and, preferably, not the salts.
//
// Caveats:
//   - A match the tailer cannot examine yet (unreadable, a symlink loop) is
//     shown with its error, not counted as a problem: the tailer follows
//     it once it can be read. A glob that matches nothing now is fine too.
//   - What the user may read is asked with a find of an _id no document has
//     (probeID), in each collection: MongoDB refusing it for lack of a
//     privilege (code 13, Atlas's 8000) is "cannot read"; any other error
//     is a problem.
//   - Nothing is written, on disk or in MongoDB.
package check
