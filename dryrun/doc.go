// Package dryrun sums log files as the daemon would, in memory, writing
// nothing: a DryRun reads files as archive.Stream does and sums them with
// the daemon's own Summer (aggregate.NewSummer: the same parser, filters,
// window, max_sites, max_pages_per_minute, outcome counting and buffer
// keys), with no buffer or database: every maxKeys sums it drains them
// (Summer.Drain, as a commit would) and decodes their keys
// (buffer.DecodeKey) for the summary's sites, distinct pages and distinct
// seconds; the other rows are the Summer's Stats. Malformed lines are
// printed by file, line number and reason, never their contents.
// NewParallel's (the command's, with -jobs) reads up to jobs files at
// once on jobs workers, each file on one, each worker with its own Summer:
// a worker parses the chunks it reads, or hands them to a worker with no
// file left; their sums and figures are merged for the summary.
// DryRun.SumsTo hands the sums themselves on, each worker's to a Sink of
// its own, each sum with the file it came from (a worker drains before a
// chunk of another file): logtally verify compares them with the buckets;
// a Sink that is a DimSink gets the counts by dimension too, every value
// by name (no bound of values per site day).
// `logtally replay -dry-run` prints its Summary.
//
// Caveats:
//   - The dry run holds at most about maxKeys sums (checked after each
//     chunk, as the aggregator checks MaxKeys) and remembers up to 2^26
//     (site, page) pairs; past that they are forgotten and the
//     distinct-pages figure counts the pairs seen again after it twice.
//     It remembers a site's pages by a 64-bit hash (random per process):
//     two pages of a site with the same hash (about one chance in 2^63
//     per pair) count as one distinct page.
//     Its "keys committed" counts a key once per drain that holds it.
//   - The parallel dry run's summary is the sequential one's, but for its
//     keys committed once a worker drained before the end (each worker
//     drains its own sums). max_sites and max_pages_per_minute depend on
//     the order of the lines: when either may apply (a worker folds a host
//     or limits a page, more sites or more distinct pages of a site than
//     the bound are found), the files are read again in order on one
//     goroutine, so a run where a bound applies takes longer than on one
//     job. Its messages are printed once the files are read, in line order.
package dryrun
