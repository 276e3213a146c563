// Package record keeps, in MongoDB, each logtally instance's own record
// of how far its counts have been written (its progress record), so that
// a lost, deleted or corrupt state dir never makes it count a line twice,
// with the lease that keeps one daemon writing it and the buffers' writer
// numbers. (Not to be confused with progress reporting: replay's and
// termview's.)
//
// One document per instance (the config's instance name, by default the
// host name) in the "progress" collection holds:
//   - the latest batch whose bucket updates may have begun, with the
//     checkpoints its counts end at (To) and those of the batch before it
//     (From): the batch's counts are exactly the lines between the two;
//   - the last checkpoints of the files the batch finished (To cannot name
//     them) and the parts of replayed archives it counts, at most
//     MaxFinished of each (the rest are only counted);
//   - whether that batch was acknowledged whole;
//   - the buffer id (the batch ids carry its writer number);
//   - a lease: the running daemon renews it every third of its TTL
//     (lease_ttl, default 30 s: every 10 s) and releases it on a clean
//     stop.
//
// The flusher writes the record (Begin) before a batch's first bucket
// update; the lease renewal marks it acknowledged afterwards. So after a
// crash at any instant, either the batch is marked acknowledged (every
// line up to To is counted) or it may be partly applied, and re-applying
// the lines between From and To under the same batch id counts the rest
// once: the per-batch guard skips the buckets that took it.
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
//     the older rule (a file of From missing from To is read to its end).
package record
