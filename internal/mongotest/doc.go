// Package mongotest gives tests a MongoDB-wire server they can cut off.
//
// Start returns the MongoDB named by the MONGODB_URI environment variable
// when it is set, else a FerretDB v1.24.0 embedded in the test process
// (SQLite handler, data in a temporary directory). Either way the tests talk
// to it through a TCP proxy owned by the Server, so Stop and Resume can
// simulate the database going down and coming back.
//
// Caveats:
//   - FerretDB is a correctness stand-in, not a performance one: a filter
//     other than exactly {_id: <string>} reads the whole collection, every
//     update rewrites the whole document, a bulk write with 100 or more
//     matching updates can deadlock the server (keep it under 50), TTL
//     indexes are refused and $group with several accumulators is wrong for
//     all but the first. Keep test collections small. Updates of one
//     document from several clients at once are not atomic: three clients
//     sending 600 $inc at once left 395. Tests with several daemons on one
//     database start them one after another on the embedded server (each
//     once the lines so far are in), together only with MONGODB_URI.
//   - With MONGODB_URI the proxy forwards to the first host of the URI and
//     the proxied URI uses directConnection=true, so point MONGODB_URI at a
//     standalone server or at the primary. mongodb+srv URIs are not
//     supported.
//   - The proxy copies bytes; it does not understand the wire protocol.
package mongotest
