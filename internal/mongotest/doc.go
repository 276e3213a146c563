// Package mongotest gives tests a MongoDB-wire server they can cut off.
//
// Start returns the MongoDB named by the MONGODB_URI environment variable
// when it is set, else a FerretDB v1.24.0 embedded in the test process
// (SQLite handler, data in a temporary directory). Either way the tests talk
// to it through a proxy owned by the Server, which reads the wire protocol's
// messages (not their documents) and:
//   - applies write commands (insert, update, delete, findAndModify,
//     bulkWrite) one at a time: each holds one lock from its request to its
//     reply, so the server sees every update whole, as MongoDB applies each
//     statement atomically. The embedded FerretDB reads, modifies and writes
//     a document back without a lock: four clients sending 150 $inc each to
//     one document directly keep about 380 of 600; through the proxy, 600
//     (TestConcurrentIncThroughProxy). So several daemons can run at once
//     against one database. A client gone at its timeout while the server
//     applies its write does not end the lock: FerretDB goes on applying
//     it, so the lock waits for its reply (a minute at most;
//     TestWriteLockHeldUntilTheServerReplies);
//   - is cut off and restored (Stop, Resume), and restarts the server on
//     its data (Restart);
//   - injects the faults that matter for exactly-once: a write applied and
//     its reply dropped with the connection closed (DropNextReply,
//     DropReplyEvery), a connection cut before the write reaches the server
//     (CutNextWrite), a reply held back longer than a client's timeout
//     (StallNextReply). Faults counts them.
//
// Caveats:
//   - FerretDB is a correctness stand-in, not a performance one: a filter
//     other than exactly {_id: <string>} reads the whole collection, every
//     update rewrites the whole document, a bulk write with 100 or more
//     matching updates can deadlock the server (keep it under 50), TTL
//     indexes are refused and $group with several accumulators is wrong for
//     all but the first. Keep test collections small. Updates of one
//     document from several clients at once are not atomic in FerretDB:
//     the proxy's lock makes them so, per command. That is coarser than
//     MongoDB, which locks per statement: a bulk write holds every other
//     client's writes until its reply, so tests with several daemons keep
//     bulk writes small (flush.max_ops ≤ 8). A stalled reply holds the
//     lock, and the other clients' writes wait with it.
//   - With MONGODB_URI the proxy forwards to the first host of the URI and
//     the proxied URI uses directConnection=true, so point MONGODB_URI at a
//     standalone server or at the primary. mongodb+srv URIs are not
//     supported.
//   - The proxy reads message headers and command names only, OP_MSG's
//     (it does not decompress OP_COMPRESSED: the tests' clients do not
//     ask for compression). Direct bypasses the proxy and its lock.
//   - Restart with MONGODB_URI only closes the connections: the test does
//     not own that server.
package mongotest
