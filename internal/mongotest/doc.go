// Package mongotest gives tests a MongoDB-wire server they can cut off.
//
// Start returns the MongoDB named by the MONGODB_URI environment variable
// when it is set, else a FerretDB v1.24.0 embedded in the test process
// (SQLite handler, data in a temporary directory). Either way the tests talk
// to it through a proxy owned by the Server, which reads the wire protocol's
// messages (their command documents only where said below) and:
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
//   - makes the embedded FerretDB look documents up by _id as MongoDB does
//     (Lookups counts what it did): FerretDB's lookup by _id never uses
//     its own _id index (the index and the lookup write the JSON path
//     differently, so SQLite scans and parses every row: one update by _id
//     took 10 s on a collection of 2,355 documents of 20 kB), so the proxy
//     adds an index on FerretDB's expression to each collection's table
//     once it exists (index.go; a lookup then takes milliseconds); and
//     FerretDB looks a document up by _id only for the filter {_id: v}
//     alone, so an update command whose statements each name a different
//     document by _id with more conditions (logtally's guarded updates,
//     {_id: v, "applied.1": {$ne: 7}}) has each statement's filter tested
//     on its one document first (an aggregation FerretDB looks up by _id)
//     and sent on as {_id: v}, or as an _id no document has when it does
//     not match (narrow.go): the reply and the documents are FerretDB's own
//     for the command as it was (TestNarrowedUpdatesAnswerAsFerretDB);
//   - bounds, when a test asks (MaxDocSize, a few kB), the documents
//     updates leave, as MongoDB bounds them at 16 MiB, which FerretDB
//     does not enforce (it stores a 17 MiB document): a statement that
//     would leave its document over the bound is refused with MongoDB's
//     write error (code 17419) and the command's other statements go on as
//     MongoDB treats them (limit.go; TestMaxDocSizeRefusesUpdates). Each
//     statement is tried first on a copy of its document in a scratch
//     collection, under the write lock;
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
//     that does not name one document by _id reads the whole collection,
//     and so does one that names it with other conditions, but for an
//     update's through the proxy (not a multi or upsert update, nor a
//     command updating one document twice) and a find's whose other keys
//     are dotted paths (FerretDB leaves those out of its lookup); every
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
//   - The proxy reads message headers and command names, OP_MSG's, and the
//     bodies of commands naming a collection (it does not decompress
//     OP_COMPRESSED: the tests' clients do not ask for compression).
//     Direct bypasses the proxy, its lock and its lookups by _id: a write
//     through Direct between a narrowed update's test and its update is
//     not seen by the test.
//   - New gives a program that is not a test (a benchmark) the same
//     server, the embedded one's data in a directory of its choosing.
//   - Restart with MONGODB_URI only closes the connections: the test does
//     not own that server.
package mongotest
