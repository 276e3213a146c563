// Package record keeps, in MongoDB, each logtally instance's own record
// of how far its counts have been written (its progress record), so that
// a lost, deleted or corrupt state dir never makes it count a line twice,
// with the lease that keeps one daemon writing it and the buffers' writer
// numbers. (Not to be confused with progress reporting: replay's and
// termview's.)
//
// One document per instance (the config's instance name, by default the
// host name) in the "progress" collection holds a Record:
//   - Current, the latest batch whose bucket updates may have begun, with
//     the checkpoints its counts end at, and Previous, the batch before it
//     with its own: Current's counts are exactly the lines between the
//     two;
//   - the last checkpoints of the files Current finished (its checkpoints
//     cannot name them) and the parts of replayed archives it counts, at
//     most MaxFinished of each (the rest are only counted);
//   - whether Current was acknowledged whole;
//   - Coarse, where the daily and monthly counts end (the last
//     acknowledged full batch), with the files finished and the archives'
//     parts of the minute-only batches acknowledged since;
//   - the buffer id (the batch ids carry its writer number);
//   - a lease: the running daemon renews it every third of its TTL
//     (lease_ttl, default 30 s: every 10 s) and releases it on a clean
//     stop.
//
// Current, Previous and Coarse are one type, Snapshot; the document keeps
// the flat layout logtally has always written (batch, to, from_batch,
// from, coarse_batch, coarse, finished, coarse_finished, ...: document.go
// names each field once), so that a fleet mid-upgrade and an existing
// database read and write the same records.
//
// The flusher writes the record (Begin) before a batch's first bucket
// update; the lease renewal marks it acknowledged afterwards. So after a
// crash at any instant, either the batch is marked acknowledged (every
// line up to Current's checkpoints is counted) or it may be partly
// applied, and re-applying the lines between Previous's and Current's
// checkpoints under the same batch id counts the rest once: the
// per-batch guard skips the buckets that took it.
//
// Beside the records, ClaimNumber gives each buffer its writer number,
// the short key of its entries in the buckets' guard: a counter document
// and one claim document per number ({_id: {writer: n}, buffer_id,
// instance}), whose unique _id keeps two buffers off one number.
//
// Caveats:
//   - Lease times are the hosts' wall clocks; two hosts sharing an instance
//     name with clocks far apart can misjudge expiry.
//   - Two daemons with the same instance name and their own state dirs are
//     refused only while both are alive; one that starts while the other
//     is down takes the record over, and the other's later recovery would
//     start from the wrong position. Instance names must be unique.
//   - A record without finished_known (written by an older logtally)
//     does not say which files the batch finished; the rebuild then keeps
//     the older rule (a file of Previous's checkpoints missing from
//     Current's is read to its end).
package record
