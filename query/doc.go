// Package query reads logtally's page-view buckets back: the views of one
// site (one page, every page, or the Top most viewed) over a range, one
// count per step, or the site's unique visitors, and writes them as a
// table, CSV, JSON or a terminal chart. It is what `logtally query` runs.
//
// A Reader reads the cheapest level that answers the step:
//
//   - minute step: the minute buckets' totalViews, one document per page
//     and minute;
//   - hour and day steps: the daily buckets' hourly counters or daily total,
//     one document per page and day (only those fields are fetched);
//   - month step: the monthly buckets' total, one document per page and
//     month.
//
// A page's counts are its bucket's plus its entries in the site's tails
// of the same level and period (any shard): a cold page has no bucket
// of its own, its views and measures being an entry of a tail document
// (package bucket, tail.go), and a page may have counts in both (an
// older logtally in the fleet writes every page to its own bucket), so
// every read adds both. They come back in the same find: a site's range
// holds its tails; one page's filter adds the tails holding an entry of
// it in an $or (bucket.Level.PageRange, both terms ranges of the index)
// and its projection fetches that entry alone (bucket.TailField). A
// tail holds each cold page's views and measures at its level's measure
// grain, which is what each step reads: a minute step the minute tails'
// cells, an hour step the daily tails' hourly cells, a day step those
// summed (views alone) or the monthly tails' daily cells, a month step
// those summed. Plans (a period's hot pages) hold no counts and are
// skipped.
//
// Request.Measures asks for measures beside (or instead of) the views:
// bots, people (views - bots), 2xx to 5xx, error_rate ((4xx+5xx)/views),
// bytes, rt_avg and rt_max (milliseconds), rt_count (the hits that logged
// a response time), bot_search to bot_suspect (each bot class), and
// unmeasured (views counted before the measures were recorded: views minus
// the five status classes, as every measured hit is in one). Result.Site
// sums every page read (SiteOnly keeps it alone): the site's series from
// the same read as its top pages. The buckets hold them at one
// grain per level (bucket.Level.MeasureSlots), so a step reads: minute,
// the minute buckets' measures; hour, the daily buckets' hourly ones; day,
// the monthly buckets' daily ones (and their daily view counters, not the
// daily buckets); month, the monthly buckets' days summed (rt_max: the
// greatest). Only the measures' fields asked are fetched. The views alone
// are read as before, and pages are ranked by views whatever the measures.
//
// Reader.Classes answers "how much of the traffic is which user-agent
// class" over whole days: a site's from the sites collection (one small
// document per site and day, no page's bucket read), a page's from its
// monthly buckets and its entries in the monthly tails.
//
// Reader.Sites lists the sites (the sites collection's, or the monthly
// buckets' when it is empty).
//
// Reader.Visitors answers "how many people": a site's unique visitors
// (Measure Visitors, read alone) from the visitors collection, one
// document of HyperLogLog registers per site and salt period (package
// visitor), estimated per step with the estimator's relative standard
// error beside it (1 s.e.: 1.6 % at the site precision). A day step
// reads the daily-salt documents, a month step the monthly-salt ones;
// over daily salts a month step adds the days' estimates and labels the
// value visitors_daily_sum: a sum of daily uniques, not uniques (one
// person on two days counts twice). Visitors are per site and per salt
// period: a minute or an hour step is refused. Reader.PageVisitors reads
// many pages' in one find.
//
// Every find filters on the site, the page when one is asked, and the
// bucket's time field: the fields of the collections' indexes and of the
// suggested shard keys, so a sharded cluster can route it. Steps without a
// bucket are filled with 0. Pages are ranked by their total over the range,
// the most viewed first.
//
// Caveats:
//   - Steps are aligned to UTC, as the buckets are: From is rounded down to
//     its step's start and To up to the end of its step. A time zone
//     (Options.Location) changes the labels only. Day and month steps stay
//     UTC days and months; seen from another zone they start at that zone's
//     offset ("2026-11-01 01:00" in Europe/Paris), and an hour step in a
//     zone with a half-hour offset starts at :30.
//   - Retention is checked against the configured retention and Reader.Clock,
//     not against what the database still holds: a range reaching back
//     before now minus the retention of its level (rounded up to the
//     level's bucket) is refused with a *RetentionError naming the part
//     that cannot be answered, instead of answering zeros. A bucket that
//     expiry has not removed yet is not read either. The site totals are
//     checked as the daily buckets (bucket.SiteLevel), the visitors
//     documents as their salt period's level (bucket.VisitorLevel): a
//     month step by Reader.SaltPeriod's, and by the other period's for
//     its documents met. A month whose documents of the other salt period
//     have all expired reads as none.
//   - A request reads every matching document of the range: without a page
//     and at a minute step, that is one document per page and minute of the
//     site. Top ranks after reading them all. A result holds at most
//     MaxSteps steps and MaxCells counts (pages × steps): a request for
//     more is refused with a *TooLargeError suggesting -top or a coarser
//     step, once the pages read pass it. A Top whose pages pass it is read
//     three times (stopped at the bound, totals only, then the top pages'
//     counts). CSV and JSON are streamed from the result, not copied into
//     points. Times are from 1970 to 9999.
//   - Pages without views in the range are left out of a result for every
//     page (zero-filled, preallocated buckets do not make a page appear).
//     Unknown sites and pages are told apart from quiet ones by one more
//     find per collection, made only when the range has no bucket of them;
//     a page is known by its bucket or by an entry in a tail (that find
//     walks the site's tails in the collection, the monthly ones first).
//   - Buckets written before the measures existed hold none: their views
//     are read with 0 for every other measure, so they count as people.
//     Likewise the sites collection begins with the version that writes
//     it: days before have no site document and Classes finds no views
//     there. A client can send any user agent: a class is what the agent
//     says, or what the heuristics suspect (package botclass).
//   - MaxCells counts every sum held: pages × steps × (1 + the fields the
//     measures need: rt_avg two, error_rate two, the others one or none).
//   - Visitors are an estimate: about 68 % of steps lie within one
//     standard error of the truth, 99.7 % within three. The error stated
//     is the estimator's at large counts (small counts are closer); a sum
//     of daily estimates has the error of independent estimates added. A
//     monthly-salt document cannot be split into days (a day step over it
//     is refused); a range mixing daily and monthly salts counts each
//     document with its own period and says so. Visitors documents do not
//     expire, so no retention is checked; the table, CSV and JSON formats
//     write them, not the chart.
//   - The chart repeats each step's count across the columns of a short
//     series (a staircase of exact values) and draws at most ChartSeries
//     pages; it has no horizontal scroll, so a long range at a fine step is
//     a wide chart.
//   - Page names come from the logs and may hold any graphic or invisible
//     character: the table and the chart show them through Shown, which
//     writes bidirectional controls, zero-width and other invisible
//     characters as escapes ("/\u202etxt.exe", not a page that looks like
//     "/exe.txt"); the dashboard shows them the same way. CSV and JSON
//     keep names as they are. A name holding a literal "\u202e" shows
//     the same as one holding the character.
package query
