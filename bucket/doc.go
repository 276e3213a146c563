// Package bucket owns the shapes of logtally's bucket documents: their
// ids, fields, counters, shard keys, collection names and retention, and
// the documents built from them (zero-filled buckets, guarded $inc
// updates, finds). It does no I/O; the flusher, the preallocator, expiry,
// the query, the tests' independent count (internal/bucketcheck) and
// bench/fleet all take the shapes from here.
//
// Three levels, each in its collection (Collections; defaults "minutes",
// "daily", "monthly"). All times are UTC, every counter a 64-bit integer.
// <key> is the site followed by the page.
//
//	minute  _id "YYYYMMDDhhmm/<key>"
//	        {_id, site, page, timestamp, totalViews, seconds: {"0".."59"}, applied}
//	daily   _id "YYYYMMDD/<key>"
//	        {_id, metadata: {date, site, page}, daily, hourly: {"0".."23"},
//	         minute: {"0".."23": {"0".."59"}}, applied}
//	monthly _id "YYYYMM/<key>"
//	        {_id, metadata: {date, site, page}, total, daily: {"1".."<days>"}, applied}
//
// Field order is as shown: the order of the inserted document (Doc.Zero).
// A bucket is created whole, every counter present and zero, so an update
// never adds a counter; the first write of each writer adds its entry to
// applied (writer number → the sequence number of its last batch
// applied, or buffer id → batch id before numbers: Guard), the guard's
// memory.
//
// The counters each level holds are one table (shapes in counters.go): a
// total and counter families, each dividing the bucket's period into
// slots. The zero-filled documents, the $inc paths (Doc.Inc, Level.Paths)
// and the readers (Level.TotalField, Level.Family) derive from it, so a
// new counter family is added there once.
//
// The shard key, and the query index of each collection, is {site, page,
// timestamp} for minutes and {metadata.site, metadata.page,
// metadata.date} for daily and monthly buckets. Every filter built here
// carries it next to the _id (Level.AppendKey, Level.Range), so a router
// targets one shard per bucket (docs/scaling.md).
//
// Read back, Counters walks a document's counters by dotted path (the
// non-zero ones), and Level.Counter (SiteCounter) says what period and
// measure each counts: logtally verify compares the buckets with the
// files counter by counter through them.
//
// A level's periods are its period.Unit's (Level.Unit): bounds and the
// time part of the ids. Retention is counted from the end of a bucket's
// period by period's one retention rule (Retention.Expired, used by the
// flusher and verify; Retention.Cutoff, its inverse, by the deleteMany
// expiry and the query's retention check), and Retention.TTLSeconds is
// the TTL index's equivalent.
//
// Caveats:
//   - Ids must not collide (the guard relies on one update per bucket and
//     batch): a page starts with "/" and a site contains none, and both
//     are valid UTF-8. The parser and config guarantee this; this package
//     does not check it.
//   - A TTL index counts from the period's start, so TTLSeconds adds the
//     longest period: a short month's bucket lives up to 3 days longer
//     than the retention.
package bucket
