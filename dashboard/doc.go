// Package dashboard serves logtally's web page: one read-only page of the
// buckets, for one host or the whole fleet, embedded in the binary
// (static/: the page, its script modules and style, and uPlot vendored at a
// pinned version, with its licence and refresh script; vendor/VERSION
// records the vendored files' SHA-256, which TestVendoredHashes checks).
// The modules that touch no DOM (format.js, hash.js, model.js) have unit
// tests, testdata/jstest, run in headless Chromium by TestModules.
//
// The page asks two JSON endpoints, relative to where it is mounted:
//
//   - GET api/sites: the sites with buckets (query.Reader.Sites), the
//     refresh interval (the flush interval) and the top pages' bound;
//   - GET api/view?site=S&from=MS&to=MS[&page=P][&top=N]: the range at
//     the step that suits it (minute up to 3 hours, hour up to 8 days,
//     day up to 400 days, then month; coarser where the finer buckets
//     are past their retention, with a note), every measure of the site
//     (or the page) over the range and per step, its unique visitors,
//     the previous period of the same length (or why there is none),
//     and without a page the top pages with their measures, visitors and
//     a sparkline of their views; each page named as it is and as shown
//     (query.Shown); without a page too, the site's views by where they
//     came from (sources: query.Reader.Breakdowns of every dimension over
//     the range's whole UTC days, each table SourcesTop values then
//     "(other)" and "(not counted)", each value as it is and as shown,
//     a crawler the lists name with its operator and purpose, whether any view was counted by dimension, and Config.Attribution,
//     the geo databases' attribution lines).
//
// Everything is read through package query, in the requests `logtally
// query` makes: the site's series is query.Result.Site of the same read
// as its top pages, so the page and the command cannot disagree; a cold
// page's counts are its entries in the site's tails, added by query to
// its bucket's (if any).
//
// Who is asking: every response carries a Content-Security-Policy (the
// page's own script, style and API only; no inline script), nosniff and
// no framing. GET and HEAD only: there is no write path; the embedded
// files are served, never a listing of their directories. Without
// authentication, only Host names that are IP addresses, localhost or
// Config.Hosts are answered, against DNS rebinding (internal/hostcheck,
// the rule of the daemon's endpoints too); config refuses a listen beyond
// loopback without a user and password (basic authentication, compared
// in constant time). The reads are bounded: Concurrent requests at once
// (503 beyond), Timeout each (Config.Timeout), MaxCells counts per query (query's
// three-pass top beyond), MaxRange, Top pages per table.
//
// Caveats:
//   - Steps are UTC, as the buckets are: the page shows each step's
//     start in the browser's zone, so a day step seen from Paris starts
//     at 01:00 or 02:00.
//   - Unique visitors exist per salt period (a UTC day, or a month): the
//     range is widened to whole periods for them, and over more than one
//     the value is a sum of the periods' uniques, labelled so.
//   - Buckets written before the measures existed hold views alone: the
//     unmeasured measure counts those views, and the page says that their
//     other measures are not recorded.
//   - Where traffic comes from is counted per site and UTC day, each
//     dimension on its own: its panels cover the range's whole UTC days,
//     not a page's, and a value cannot filter the other panels (there is
//     no count of one dimension's values within another's), except a
//     channel its referrers: a host's channel is a function of the host,
//     told by the lists built in (referrer.Classifier.HostChannel). Lists
//     newer than those that counted a host's views can put it in another
//     channel: the channel's referrers then hold views its count does
//     not, and show no (other) row.
//   - The attribution lines are the geo databases' the process can open:
//     logtally serve's [geo] files (none on a host without them), the
//     daemon's databases at its start or reload.
//   - Page names and sites come from the logs: the page inserts them as
//     text, never as markup, and the CSP forbids inline script. It shows a
//     page name only as api/view does (pages[].shown, page_shown:
//     query.Shown, bidirectional controls and invisible characters
//     escaped), never the name in the URL hash; page is the name as it
//     is, for links and requests. The values of where traffic comes
//     from (a network's organisation, a crawler's name) are shown the
//     same way (sources' shown), as text. Sites are not escaped: a site from the
//     Host header is ASCII (the parser keeps host characters only), any
//     other is the config's.
//   - Over plain HTTP a basic-auth password crosses the network readable:
//     beyond loopback, put TLS in front (the web server on the host).
package dashboard
