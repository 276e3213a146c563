// Package verify answers "are my numbers right?": it reads access logs
// and archives as the daemon counts them and compares their sums with the
// buckets in MongoDB, counter by counter. It is what `logtally verify`
// runs, and writes nothing.
//
// Reading: the files are read by replay's dry run (plain, gzip, zstd,
// bzip2; in parallel on Options.Jobs goroutines), with the source's
// parser, filters, page rules, max_sites and max_pages_per_minute, summed
// by the daemon's own Summer (aggregate.NewSummer); its sinks
// (dryrun.DryRun.SumsTo) keep the (site, page, second) sums of the range.
// The files' buckets are then made from those sums as the flusher makes a
// batch's: bucket.Grouper and bucket.Doc (its $inc and $max) for the
// minute, daily and monthly levels, bucket.Sites for the site days. No
// second parser, no second rule of where a hit counts.
//
// Judging: the range is Options.From to Options.To, by default the
// files' first hit to the second after their last. For each site of the
// files, every bucket of each level and every site day that MongoDB holds
// or the files make in the range is compared counter by counter: views
// (each total and slot) and every measure (bucket.Counters walks a
// document, bucket.Level.Counter says what period a counter counts).
//   - A counter whose period lies in the range must be equal. MongoDB
//     below the files is a difference (hits lost). MongoDB above is a
//     difference with Options.AllHosts (the files are every host's logs);
//     without it, it is reported apart as "more in MongoDB: other hosts?",
//     not a difference: every host adds to the same buckets.
//   - A counter whose period reaches outside the range (the first and
//     last minute, day and month of a log that starts and ends within
//     them) also holds lines that are not in the files: it is judged for
//     lost hits only (MongoDB must hold at least the files').
//   - Buckets past their level's retention (bucket.Retention with the
//     Options.Clock's time plus an hour, so that one expiring during the
//     run is not read half-deleted) are not judged, and counted: the
//     daemon does not write them. Site days have the daily retention
//     (bucket.SiteLevel), as the daemon expires them.
//   - A cold page's counts are entries of its site's tails, not a bucket
//     of its own, and a page may have counts in both (an older logtally
//     in the fleet writes every page to its bucket). MongoDB's side of a
//     page's bucket is its bucket's counters plus its tail entries', each
//     where the bucket holds it (bucket.Level.TailCounter, BucketPaths: a
//     daily tail's hour 13 views are hourly.13 and part of the daily
//     total), judged as one document (a difference says "with its
//     entries in the tails"). A tail holds the views and measures per
//     minute, hour or day, not the seconds of a minute or the minutes of
//     a day: where a page has tail entries, those finer counters of the
//     slot are not judged (counted apart), the slot's are; a page the
//     period's plan names hot is judged whole, so its hits written to a
//     tail show as lost seconds and minutes. Plans hold no counts.
//   - Visitors (the HyperLogLog registers) are not compared: the files'
//     registers need the period's salt, which MongoDB deletes salt_grace
//     after the period, and other hosts raise them.
//
// Counts by dimension (with the parser's Dims, [dimensions] enabled):
// the dry run's sinks are dryrun.DimSinks, handed each worker's counts
// by (site, UTC day, dimension, value) as its Summer counts them
// (aggregate dims.go: the daemon's parser, classifiers, geo databases
// and day rule), but with every value kept by name (dims.NoLimits):
// MongoDB holds the union of what each host kept by name, the rest under
// dims.Other. Each site day in MongoDB is compared with them as read
// with the day's counters (bucket.SiteSources), dimension by dimension:
//   - A value MongoDB holds more of than the files is judged as a counter
//     holding more: other hosts' hits, a difference with AllHosts. Exact:
//     a bound only moves hits from a value to Other.
//   - A value MongoDB holds fewer of may have been folded into Other (a
//     host's first-values bound, dims.DefaultLimits, or the day's 2 MiB
//     bound): the shortfalls of all the named values, with the files' own
//     Other (none), must be in MongoDB's Other. When they are not and
//     MongoDB's Other holds none of them (nothing folded), each shortfall
//     is a difference under its value (hits lost); otherwise what is
//     missing is one difference under Other: which values lost it cannot
//     be told. MongoDB's Other holding more than the shortfalls is judged
//     as a counter holding more (other hosts' values folded; with
//     AllHosts a difference). So one host's own day, nothing folded, is
//     judged value by value exactly; a folded day exactly in its sum and
//     in every value MongoDB holds more of; another host's hits of a value
//     can hide this host's loss of it (the sums still catch it with
//     AllHosts).
//   - The day's period is its UTC day: inside the range exact, reaching
//     outside it lost hits only; past the daily retention not judged.
//     The counts are kept by day, not by second: a day the range (From,
//     To) cuts while the files hold hits of it outside the range is not
//     judged by dimension (counted), its counters are.
//   - A day MongoDB holds without any count by dimension (counted before
//     [dimensions] was enabled, or by a logtally without it) while the
//     files have some is counted as not counted by dimension, not judged.
//     A day MongoDB lacks is a difference of its views; its counts by
//     dimension are not judged apart.
//   - Values come from the lines and the geo databases: the report shows
//     them with query.Shown. With [dimensions] off, a day's counts by
//     dimension are not judged (counted).
//
// Reading MongoDB: for each site and level, one find of the site's tails
// and plans whose period starts in the pass's window
// (bucket.Level.MarkerRange), one of its page buckets
// (bucket.Level.BucketRange: {site, timestamp} or {metadata.site,
// metadata.date}, the fields of the collections' index and shard key, as
// package query reads them, and the page outside the markers' range),
// and one of its site days (bucket.SiteRange); the documents are streamed
// without their applied field. On MongoDB each find walks the index over
// the site's pages within the window and returns about as many documents
// as the files make buckets (a daily bucket is about 40 KB): the cost is
// the bytes of the buckets compared, read once. On the embedded FerretDB
// of the tests every such find scans its collection.
//
// Memory: the sums of the range are held (about 300 bytes each at the
// peak, with the buckets made from them) up to Options.MaxSums, beside
// the window's counts by dimension (a site day's distinct values, not
// bounded by MaxSums: a few per sum at most), and
// while a site's level is compared, the window's tail entries as their
// pages' counters. Past MaxSums, a pass keeps only its first days (each
// worker lowers the window's end to a day's start when it holds its share)
// and the files are read again for the days after it, each later pass
// reading only the files whose hits reach its days (the first pass notes
// each file's first and last hit). A counter whose period spans passes (a
// month's total) is carried to the end, its files' values added up.
//
// Caveats:
//   - The daemon's lines not yet flushed (its lag, about flush.interval;
//     more while MongoDB is away) are not in MongoDB yet: they show as
//     lost. Verify logs the daemon has finished with, or give -to.
//   - max_sites and max_pages_per_minute fold hits by line order, per run:
//     what the daemon folded across restarts can differ from one reading
//     of the files, and shows as differences between a site or page and
//     "(other)". When a bound folds anything, every pass reads every file
//     in order.
//   - Buckets counted before the measures existed hold views only: their
//     measures show as lost. Likewise the day [dimensions] was enabled
//     holds counts by dimension of its later hits only: its earlier hits
//     show as lost by dimension.
//   - A country or network is the [geo] database's of now: hits counted
//     with an older database that placed an address elsewhere show as
//     differences of those values (a value lost, another gained).
//   - Only the sites of the files are read: MongoDB's other sites are not
//     judged. Copytruncate's lost lines are lost from the files too.
//   - One day's sums are held whole, whatever MaxSums says.
//   - It costs a re-read of the logs (the dry run's, on every core), the
//     buckets made (on Options.Jobs goroutines) and compared (on one):
//     BenchmarkVerify measured about 6× the dry run's CPU and 6 to 7× its
//     time on 2 cores over a day of one busy site; and a read of the
//     buckets compared. With [dimensions] on (BenchmarkVerifyDims, no geo
//     database) about 4.3 µs of CPU a line against 3.7 without: the
//     parse of each hit's dimensions, which the dry run pays too (1.1 µs
//     a line against 0.64), and about 0.04 µs of verify's own.
package verify
