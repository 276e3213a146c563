// Package bucket owns the shapes of logtally's bucket documents: their
// ids, fields, counters, shard keys, collection names and retention, and
// the documents built from them (zero-filled buckets, guarded $inc
// updates, finds). It does no I/O; the flusher, the preallocator, expiry,
// the query, the tests' independent count (internal/bucketcheck) and
// bench/fleet all take the shapes from here.
//
// Three levels, each in its collection (Collections; defaults "minutes",
// "daily", "monthly"). All times are UTC; every view counter is a 64-bit
// integer (the measures' counts of hits are 32-bit, below).
// <key> is the site followed by the page.
//
//	minute  _id "YYYYMMDDhhmm/<key>"
//	        {_id, site, page, timestamp, totalViews, seconds: {"0".."59"},
//	         measures, applied}
//	daily   _id "YYYYMMDD/<key>"
//	        {_id, metadata: {date, site, page}, daily, hourly: {"0".."23"},
//	         minute: {"0".."23": {"0".."59"}}, measures, applied}
//	monthly _id "YYYYMM/<key>"
//	        {_id, metadata: {date, site, page}, total, daily: {"1".."<days>"},
//	         measures, applied}
//
// Field order is as shown: the order of the inserted document (Doc.Zero).
// A bucket is created whole, every counter present and zero, so an update
// never adds a counter; the first write of each writer adds its entry to
// applied (writer number → the sequence number of its last batch
// applied, or buffer id → batch id before numbers: Guard), the guard's
// memory.
//
// One document per level, as stored (views NumberLong; measures below):
//
//	// minute
//	{ _id: "201505171805/semicomplete.com/", site: "semicomplete.com", page: "/",
//	  timestamp: ISODate("2015-05-17T18:05:00Z"), totalViews: NumberLong(12),
//	  seconds: { "0": NumberLong(1), "1": NumberLong(1), ..., "59": NumberLong(0) },
//	  measures: { status_2xx: 11, ..., bot_search: 2, ..., bytes: NumberLong(404264),
//	              rt_us: NumberLong(0), rt_n: 0, rt_max_us: NumberLong(0) },
//	  applied: { "17": NumberLong(4031) } }
//	// daily: minute.<hour>.<minute>; measures.<name>.<hour>
//	{ _id: "20150517/semicomplete.com/",
//	  metadata: { date: ISODate("2015-05-17T00:00:00Z"), site: "semicomplete.com", page: "/" },
//	  daily: NumberLong(103), hourly: { "0": NumberLong(0), ..., "23": NumberLong(4) },
//	  minute: { "0": { "0": NumberLong(0), ..., "59": NumberLong(0) }, ..., "23": { ... } },
//	  measures: { status_2xx: { "0": 0, ..., "23": 4 }, ... }, applied: { ... } }
//	// monthly: daily "1" to "<days in that month>"; measures.<name>.<day>
//	{ _id: "201505/semicomplete.com/",
//	  metadata: { date: ISODate("2015-05-01T00:00:00Z"), site: "semicomplete.com", page: "/" },
//	  total: NumberLong(103), daily: { "1": NumberLong(0), ..., "31": NumberLong(0) },
//	  measures: { ... }, applied: { ... } }
//
// Measures (package measure names them; measures.go places them) sit
// beside the views at a coarser grain: one value per minute bucket, per
// hour in a daily bucket (measures.bytes.13), per day in a monthly one
// (measures.bytes.25):
//
//	status_2xx .. status_5xx, status_other   hits by status class (other: 1xx)   int32
//	bot_search, bot_ai, bot_tool,            hits by the user agent's class      int32
//	  bot_other, bot_suspect                   (package botclass); people = views - their sum
//	bytes                                    response bytes logged ("-" is 0)    int64
//	rt_us, rt_n, rt_max_us                   response time: sum (µs), count,     int64, int32, int64
//	                                           maximum ($max)
//
// A count of hits is zero-filled as an int32 and incremented by int32
// values while they fit; MongoDB spills an int32 into an int64 when a sum
// overflows (SERVER-7446), so nothing is lost and that one field grows by
// 4 bytes. Bytes and microseconds are int64 from the start. The sizes
// this costs are in docs/scaling.md ("Document sizes").
//
// Site totals (collection "sites", sites.go), one per site and UTC day,
// written from the same sums as the page buckets and guarded by the same
// applied entry; not preallocated, and kept as long as the daily buckets
// (SiteLevel: daily_retention):
//
//	{_id: "20261125/<site>", metadata: {date, site}, views,
//	 measures: {<name>: int64}, applied,
//	 sources: {<dimension code>: {<PageKey(value)>: int64}}, size}
//
// sources (sitesources.go), with [dimensions] enabled: the day's hits by
// each dimension's values (package dims), bounded by size as a tail is
// (SiteSourcesLimit; past it a batch's values go under "(other)").
//
// Visitors (collection "visitors", visitors.go), one per site and salt
// period, zero-filled, and one per page and period holding only the
// registers that rose; merged with $max, so they carry no guard; kept as
// long as the buckets of the level of their salt period (VisitorLevel: a
// day's daily_retention, a month's monthly_retention), told apart by
// metadata.period (VisitorPeriodFilter):
//
//	{_id: "day:20261125/<site>", metadata: {date, site, period}, p: 12,
//	 registers: {"0": int32, ..., "4095": int32}}
//	{_id: "day:20261125/<site><page>", metadata: {date, site, page, period}, p: 10,
//	 registers: {<index>: int32, ...}}
//
// Cold pages (tail.go, plan.go): a page the period's plan does not name
// as hot has no bucket of its own; its counts are an entry of a tail, a
// document per site, level, period and shard whose page field is the
// marker "~<shard>", holding each cold page's views and measures at the
// level's measure grain under pages.<page key>, and its size, a bound of
// the bytes those hold that bounds its updates (Tail.Limit: a tail
// without room refuses an update for good, sizes only growing). A
// batch's share a tail cannot take is a spill ("~<shard>.<writer>.<batch>.<part>",
// Tail.Spill): a tail document of that writer's batch alone, inserted
// whole once, which readers take as a tail (TailShard). A plan ("~p"), fixed
// before its period's first write, names the hot pages and the shards (a
// daily or monthly cold page's shard is its page's; a minute one's its
// writer's, Plan.Route); it
// is dated its period's last bucket (PlanDate), so it expires after every
// bucket it routes. A page is worth a bucket of its own from its level's
// break-even (BreakEven: the hits in a plan period at which its
// zero-filled buckets cost no more bytes than its tail entries). A reader
// adds a page's entries in the tails to its bucket's counts
// (tailread.go: the finds of a page with the tails, PageRange, or of the
// markers and the page buckets apart, MarkerRange and BucketRange; a
// tail counter's place in the page's bucket, BucketPaths; a document's
// views, Views).
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
// the TTL index's equivalent. The site totals and the visitors documents
// have no retention of their own: they take their level's (SiteLevel,
// VisitorLevel) through the same three.
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
