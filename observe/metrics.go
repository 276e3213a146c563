package observe

import (
	"cmp"
	"log/slog"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/logtally/logtally/aggregate"
	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/dims"
	"github.com/logtally/logtally/flusher"
	"github.com/logtally/logtally/geo"
	"github.com/logtally/logtally/measure"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/pipeline"
)

// collector turns the pipeline's counters into metrics at scrape time.
type collector struct {
	src     Source
	version string
	geo     *geo.Holder // nil: no [geo] databases read
	clock   clock.Clock
	log     *slog.Logger

	buildInfo, alive *prometheus.Desc
	read             readDescs
	measures         measureDescs
	visitors         visitorDescs
	buffer           bufferDescs
	flush            flushDescs
	files            fileDescs
	geoDB            geoDescs
}

// geoDescs are the descriptors of the [geo] databases: each one's build
// time and age.
type geoDescs struct {
	built, age *prometheus.Desc
}

// readDescs are the descriptors of the aggregator's reading and commits:
// lines, hits by site, outcomes, commits to the buffer, the state dir.
type readDescs struct {
	lines, tooLong, hits, other, sitesFolded               *prometheus.Desc
	malformed, filtered, commits, lastCommit, stateDirFull *prometheus.Desc
}

// measureDescs are the descriptors of the counted hits' measures: by user
// agent class and status class, bytes, response times.
type measureDescs struct {
	byClass, byStatus, respBytes, respTime, respTimeCount *prometheus.Desc
	byDim                                                 *prometheus.Desc
}

// visitorDescs are the descriptors of the visitors: hits unsalted, this
// host's estimates and their error.
type visitorDescs struct {
	visitorsUnsalted, visitorsNow, visitorsError *prometheus.Desc
}

// bufferDescs are the descriptors of the buffer: what is pending and its
// size.
type bufferDescs struct {
	pendingKeys, pendingHits, bufferBytes *prometheus.Desc
}

// flushDescs are the descriptors of the flusher: batches, MongoDB's
// operations, flush times, bucket expiry and preallocation.
type flushDescs struct {
	batches, flushedHits, retries, lastAcked, mongoOps             *prometheus.Desc
	created, flushDuration, lastFlush, expiryMode, expired         *prometheus.Desc
	late, expiredHits, prealloc, preallocFailures, preallocTracked *prometheus.Desc
	tailWrites, tailSpills, spillDocs, plans                       *prometheus.Desc
}

// fileDescs are the descriptors of the tailers' files, by source: followed,
// lag, lost, symlinks refused.
type fileDescs struct {
	followed, lag, lostFiles, refusedLinks *prometheus.Desc
}

// visitorsSource is a Source that can tell this host's visitors of the
// current salt period (a *pipeline.Pipeline).
type visitorsSource interface {
	VisitorsNow(now time.Time) (pipeline.VisitorsNow, bool, error)
}

func newCollector(src Source, version string, g *geo.Holder, clk clock.Clock, log *slog.Logger) *collector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("logtally_"+name, help, labels, nil)
	}
	return &collector{
		src: src, version: version, geo: g, clock: clk, log: log,
		buildInfo: d("build_info", "Always 1; the version label is logtally's version.", "version"),
		alive:     d("alive", "1 while the aggregator and the flusher make their rounds, else 0 (GET /healthz then fails; it also fails while the state dir is full, and while hits wait for MongoDB or reading is paused on a full buffer longer than http.unhealthy_after)."),
		read: readDescs{
			lines:       d("lines_total", "Lines parsed, whatever their outcome (too long lines are not in it), by source.", "source"),
			tooLong:     d("too_long_lines_total", "Lines longer than max_line_bytes, skipped."),
			hits:        d("hits_total", "Lines counted as page views, by site (at most 200 sites; the rest as \"(other sites)\").", "site"),
			other:       d("other_hits_total", "Hits counted as page \"(other)\" by max_pages_per_minute."),
			sitesFolded: d("sites_folded_hits_total", "Hits counted under the site \"(other)\" by max_sites: their host came after max_sites others."),
			malformed:   d("malformed_lines_total", "Lines that could not be read, by reason.", "reason"),
			filtered:    d("filtered_lines_total", "Lines read but excluded by a filter, by reason.", "reason"),
			commits:     d("commits_total", "Commits of counts and checkpoints to the buffer."),
			lastCommit:  d("last_commit_timestamp_seconds", "Wall-clock time of the last commit to the buffer; 0 before the first."),
			stateDirFull: d("state_dir_full",
				"1 while commits to the buffer fail for lack of space on the state dir (reading paused, the commit retried), else 0."),
		},
		measures: measureDescs{
			byClass: d("hits_by_class_total",
				"Hits counted, by the user agent's class: people, search, ai, tool, bot or suspect (people: the hits of no bot class; a client can send any user agent).", "class"),
			byStatus:      d("hits_by_status_total", "Hits counted, by status class: 2xx, 3xx, 4xx, 5xx or other.", "class"),
			respBytes:     d("response_bytes_total", "Response bytes the counted hits' lines log ($body_bytes_sent, %b, %O)."),
			respTime:      d("response_time_seconds_total", "Sum of the response times of the counted hits whose line logs one."),
			respTimeCount: d("response_time_count_total", "Counted hits whose line logs a response time."),
			byDim: d("traffic_views_total",
				"Hits counted by this host since it started, by where they came from ([dimensions] enabled): per dimension (referrer, channel, country, asn, browser, os, device, crawler) its 20 values with the most hits, the rest summed under value \"(other)\"; a value is cut to 64 bytes. Absent with [dimensions] off.", "dimension", "value"),
		},
		visitors: visitorDescs{
			visitorsUnsalted: d("visitors_unsalted_hits_total",
				"Hits of people that added no visitor: this host never held their salt period's salt (MongoDB away at a fresh start across midnight), or it was deleted (a replay of archives older than the salt's grace)."),
			visitorsNow: d("visitors_today",
				"This host's estimate of the site's unique visitors since its sketch of the current salt period (today, or this month with salt_period = month) began: what this host read, not the fleet's (logtally query -measure visitors reads that). At most 200 sites, the first by name. Absent with visitors off.", "site"),
			visitorsError: d("visitors_error_ratio",
				"The relative standard error (1 s.e.) of logtally_visitors_today: about 68 % of estimates lie within it of the truth. Absent with visitors off."),
		},
		buffer: bufferDescs{
			pendingKeys: d("buffer_pending_buckets", "(site, page, second) counts in the buffer not yet acknowledged by MongoDB, the batch in flight included."),
			pendingHits: d("buffer_pending_hits", "Hits in the buffer not yet acknowledged by MongoDB, the batch in flight included."),
			bufferBytes: d("buffer_size_bytes", "Live data in the buffer file (pending and sealed counts)."),
		},
		flush: flushDescs{
			batches:     d("flush_batches_total", "Attempts to write a batch to MongoDB: result ok (acknowledged) or failed (retried).", "result"),
			flushedHits: d("flushed_hits_total", "Hits in the acknowledged batches."),
			retries:     d("flush_retries_total", "Failed flush attempts, retried."),
			lastAcked: d("last_acked_batch_sealed_timestamp_seconds",
				"When the last batch MongoDB acknowledged was sealed, i.e. when the last successful flush began. Absent before the first."),
			mongoOps: d("mongo_operations_total",
				"MongoDB operations sent: bulk_write, find and insert count calls (buckets' and tails'), update the updates inside the bulk writes, plan_find and plan_insert the plans' find and insertMany calls.", "op"),
			created:       d("mongo_buckets_created_total", "Buckets this daemon inserted (whole, with their first counts, or zero-filled)."),
			flushDuration: d("flush_duration_seconds", "Time to write one batch to MongoDB, from its record to its acknowledgement."),
			lastFlush:     d("last_flush_timestamp_seconds", "When MongoDB last acknowledged a batch. Absent before the first."),
			expiryMode:    d("bucket_expiry_mode", "1 for each expiry's mode, by the level whose retention applies and the collection (the bucket levels', the site totals' with the daily one, the visitors' with daily for day salts and monthly for month salts): off (kept), pending, ttl (a TTL index) or deletemany (the periodic fallback).", "level", "collection", "mode"),
			expired:       d("expired_buckets_deleted_total", "Documents the deleteMany fallback deleted, by level and collection as logtally_bucket_expiry_mode (a TTL index's deletions are not seen here).", "level", "collection"),
			late:          d("late_buckets_created_total", "Buckets created again for counts written after their period had expired."),
			expiredHits:   d("expired_hits_total", "Hits not written to a level (or to the site totals) whose document was already past its retention (the levels kept took them)."),
			prealloc: d("preallocated_buckets_total",
				"Buckets preallocation handled: created, existing (already there) or dropped (not done before their period began).", "result"),
			preallocFailures: d("preallocation_failures_total", "Preallocation insertMany calls that failed (counts are written regardless)."),
			preallocTracked:  d("preallocation_tracked_pages", "Pages tracked for preallocation now, all levels together."),
			tailWrites:       d("tail_writes_total", "Tail documents written: a cold page's counts go to its site's tail (one write per tail and batch; in the updates and inserts too)."),
			tailSpills:       d("tail_spills_total", "Tails' shares of a batch written to spill documents instead (the tail full, or the share more than one update carries), resends included."),
			spillDocs:        d("tail_spill_documents_total", "Spill documents sent."),
			plans: d("plans_proposed_total",
				"Plans (a site's hot pages of a level's period) this daemon proposed: inserted, or lost to another writer's (a duplicate key: that one is read and followed).", "result"),
		},
		files: fileDescs{
			followed: d("files_followed", "Files the source's tailer follows now.", "source"),
			lag:      d("file_lag_bytes", "Sum over the source's files of size minus committed offset.", "source"),
			lostFiles: d("lost_files_total",
				"Followed files not found again with lines possibly unread (rotated where the source's rotated globs do not look, compressed or deleted first, truncated with no copy found); each is logged at ERROR with the `logtally replay` command that counts the rest.", "source"),
			refusedLinks: d("refused_symlinks_total", "Symbolic links not followed because their target leaves the source's directories (follow_symlinks off), each path once.", "source"),
		},
		geoDB: geoDescs{
			built: d("geo_database_build_timestamp_seconds",
				"When the [geo] database the daemon reads was built, by database (country, asn): an MMDB's build_epoch, a Tor geoip file's \"Generated:\" header or else its modification time. Absent for a database not read or whose build time is not known.", "database"),
			age: d("geo_database_age_seconds",
				"Seconds from the [geo] database's build time (logtally_geo_database_build_timestamp_seconds) to the scrape, by database (country, asn).", "database"),
		},
	}
}

// Describe implements prometheus.Collector.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		c.buildInfo, c.alive,
		c.read.lines, c.read.tooLong, c.read.hits, c.read.other, c.read.sitesFolded,
		c.read.malformed, c.read.filtered, c.read.commits, c.read.lastCommit, c.read.stateDirFull,
		c.measures.byClass, c.measures.byStatus, c.measures.respBytes, c.measures.respTime, c.measures.respTimeCount,
		c.measures.byDim,
		c.visitors.visitorsUnsalted, c.visitors.visitorsNow, c.visitors.visitorsError,
		c.buffer.pendingKeys, c.buffer.pendingHits, c.buffer.bufferBytes,
		c.flush.batches, c.flush.flushedHits, c.flush.retries, c.flush.lastAcked, c.flush.mongoOps,
		c.flush.created, c.flush.flushDuration, c.flush.lastFlush, c.flush.expiryMode, c.flush.expired,
		c.flush.late, c.flush.expiredHits, c.flush.prealloc, c.flush.preallocFailures, c.flush.preallocTracked,
		c.flush.tailWrites, c.flush.tailSpills, c.flush.spillDocs, c.flush.plans,
		c.files.followed, c.files.lag, c.files.lostFiles, c.files.refusedLinks,
		c.geoDB.built, c.geoDB.age,
	} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(c.buildInfo, 1, c.version)
	alive := 1.0
	if c.src.Alive(c.clock.Now()) != nil {
		alive = 0
	}
	gauge(c.alive, alive)

	st := c.src.Stats()
	a, f := st.Aggregator, st.Flusher
	for src, n := range a.BySource {
		counter(c.read.lines, n.Lines, src)
	}
	counter(c.read.tooLong, a.TooLong)
	for site, n := range a.HitsBySite {
		counter(c.read.hits, n, site)
	}
	counter(c.read.other, a.Other)
	counter(c.read.sitesFolded, a.SitesFolded)
	counter(c.read.commits, a.Commits)
	full := 0.0
	if !a.FullSince.IsZero() {
		full = 1
	}
	gauge(c.read.stateDirFull, full)
	for o := range parser.NumOutcomes {
		switch {
		case o.Malformed():
			counter(c.read.malformed, a.Outcomes[o], reason(o))
		case o.Filtered():
			counter(c.read.filtered, a.Outcomes[o], reason(o))
		}
	}
	c.collectMeasures(ch, &a.Measures)
	for d, vs := range dimLabels(&a.ByDim) {
		for _, v := range vs {
			counter(c.measures.byDim, v.n, dims.Dim(d).String(), v.value)
		}
	}
	counter(c.visitors.visitorsUnsalted, a.VisitorsUnsalted)
	c.collectVisitors(ch)
	c.collectGeo(ch)
	gauge(c.buffer.pendingKeys, float64(st.PendingKeys))
	gauge(c.buffer.pendingHits, float64(st.PendingHits))
	gauge(c.buffer.bufferBytes, float64(st.BufferBytes))
	counter(c.flush.batches, f.Batches, "ok")
	counter(c.flush.batches, f.FailedFlushes, "failed")
	buckets := make(map[float64]uint64, len(flusher.FlushBuckets))
	var cum uint64
	for i, b := range flusher.FlushBuckets {
		if i < len(f.FlushDurations) {
			cum += f.FlushDurations[i]
		}
		buckets[b] = cum
	}
	ch <- prometheus.MustNewConstHistogram(c.flush.flushDuration, f.FlushCount, f.FlushSeconds, buckets)
	if !f.LastAck.IsZero() {
		gauge(c.flush.lastFlush, seconds(f.LastAck.UnixNano()))
	}
	counter(c.flush.flushedHits, f.Hits)
	counter(c.flush.retries, f.Retries)
	counter(c.flush.mongoOps, f.BulkWrites, "bulk_write")
	counter(c.flush.mongoOps, f.Updates, "update")
	counter(c.flush.mongoOps, f.Finds, "find")
	counter(c.flush.mongoOps, f.InsertCalls, "insert")
	counter(c.flush.mongoOps, f.PlanFinds, "plan_find")
	counter(c.flush.mongoOps, f.PlanInsertCalls, "plan_insert")
	counter(c.flush.created, f.Inserts)
	counter(c.flush.tailWrites, f.Tails.Writes)
	counter(c.flush.tailSpills, f.Tails.Spills)
	counter(c.flush.spillDocs, f.Tails.SpillDocs)
	counter(c.flush.plans, f.PlanInserts-min(f.PlanDups, f.PlanInserts), "inserted")
	counter(c.flush.plans, f.PlanDups, "lost")
	for _, e := range f.Expiry {
		gauge(c.flush.expiryMode, 1, e.Level, e.Collection, e.Mode)
		counter(c.flush.expired, e.Deleted, e.Level, e.Collection)
	}
	counter(c.flush.late, f.LateBuckets)
	counter(c.flush.expiredHits, f.ExpiredHits)
	counter(c.flush.prealloc, f.Prealloc.Created, "created")
	counter(c.flush.prealloc, f.Prealloc.Existing, "existing")
	counter(c.flush.prealloc, f.Prealloc.Dropped, "dropped")
	counter(c.flush.preallocFailures, f.Prealloc.Failures)
	gauge(c.flush.preallocTracked, float64(f.Prealloc.Tracked))
	for src, t := range st.Tailers {
		counter(c.files.lostFiles, t.LostFiles, src)
		counter(c.files.refusedLinks, t.RefusedLinks, src)
	}

	status, err := c.src.Status()
	if err != nil {
		c.log.Warn("metrics: cannot read the status; file and time metrics left out", "err", err)
		return
	}
	var last float64
	if !status.LastCommit.IsZero() {
		last = seconds(status.LastCommit.UnixNano())
	}
	gauge(c.read.lastCommit, last)
	if status.LastAcked != nil && !status.LastAcked.SealedAt.IsZero() {
		gauge(c.flush.lastAcked, seconds(status.LastAcked.SealedAt.UnixNano()))
	}
	for _, s := range status.Sources {
		var n int
		for _, file := range s.Files {
			if file.Followed {
				n++
			}
		}
		gauge(c.files.followed, float64(n), s.Name)
		gauge(c.files.lag, float64(s.LagBytes), s.Name)
	}
}

// statusClasses are the status measures and their label values.
var statusClasses = [...]struct {
	m     measure.Index
	label string
}{
	{measure.Status2xx, "2xx"}, {measure.Status3xx, "3xx"}, {measure.Status4xx, "4xx"},
	{measure.Status5xx, "5xx"}, {measure.StatusOther, "other"},
}

// collectMeasures sends the measures' counters: hits by bot class (people
// are the views of no bot class) and by status class, bytes, response
// times. The labels are the fixed class names.
func (c *collector) collectMeasures(ch chan<- prometheus.Metric, v *measure.Vector) {
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	var bots uint64
	for cl := botclass.Person + 1; cl < botclass.NumClasses; cl++ {
		m, _ := measure.Bot(cl)
		bots += v[m]
		counter(c.measures.byClass, float64(v[m]), cl.String())
	}
	people := v[measure.Views] - min(bots, v[measure.Views])
	counter(c.measures.byClass, float64(people), botclass.Person.String())
	for _, s := range statusClasses {
		counter(c.measures.byStatus, float64(v[s.m]), s.label)
	}
	counter(c.measures.respBytes, float64(v[measure.Bytes]))
	counter(c.measures.respTime, float64(v[measure.RTSum])/1e6)
	counter(c.measures.respTimeCount, float64(v[measure.RTCount]))
}

// collectVisitors sends this host's estimates of the current salt
// period's visitors, per site (bounded: buffer.ReadTx.VisitorEstimates' limit),
// and their error, when the source keeps visitors.
func (c *collector) collectVisitors(ch chan<- prometheus.Metric) {
	vs, ok := c.src.(visitorsSource)
	if !ok {
		return
	}
	v, on, err := vs.VisitorsNow(c.clock.Now())
	if err != nil {
		c.log.Warn("metrics: cannot read the visitors; left out", "err", err)
		return
	}
	if !on {
		return
	}
	for _, e := range v.Sites {
		ch <- prometheus.MustNewConstMetric(c.visitors.visitorsNow, prometheus.GaugeValue, math.Round(e.Estimate), e.Site)
	}
	ch <- prometheus.MustNewConstMetric(c.visitors.visitorsError, prometheus.GaugeValue, v.StdError)
}

// collectGeo sends each [geo] database's build time and its age at the
// clock's now, from the database held now (a reload's new one at once);
// nothing for a database not read or whose build time is not known.
func (c *collector) collectGeo(ch chan<- prometheus.Metric) {
	if c.geo == nil {
		return
	}
	now := c.clock.Now()
	country, asn := c.geo.DB().Built()
	for _, db := range [...]struct {
		name  string
		built time.Time
	}{{"country", country}, {"asn", asn}} {
		if db.built.IsZero() {
			continue
		}
		ch <- prometheus.MustNewConstMetric(c.geoDB.built, prometheus.GaugeValue, seconds(db.built.UnixNano()), db.name)
		ch <- prometheus.MustNewConstMetric(c.geoDB.age, prometheus.GaugeValue, now.Sub(db.built).Seconds(), db.name)
	}
}

// Bounds of logtally_traffic_views_total's values, which come from the
// lines: the values a dimension shows by name, and a value's bytes.
const (
	MaxDimValuesShown = 20
	MaxLabelBytes     = 64
)

// dimValue is a label value and its hits.
type dimValue struct {
	value string
	n     uint64
}

// dimLabels returns each dimension's label values of h: each value made
// valid UTF-8 and cut to MaxLabelBytes (values that become equal merge),
// the MaxDimValuesShown with the most hits (ties by value), then
// dims.Other with the rest (and the hits counted as dims.Other).
func dimLabels(h *aggregate.DimHits) [dims.N][]dimValue {
	var out [dims.N][]dimValue
	for d, m := range h {
		if len(m) == 0 {
			continue
		}
		merged := make(map[string]uint64, len(m))
		for v, n := range m {
			merged[labelValue(v)] += n
		}
		other := merged[dims.Other]
		delete(merged, dims.Other)
		vs := make([]dimValue, 0, len(merged))
		for v, n := range merged {
			vs = append(vs, dimValue{v, n})
		}
		slices.SortFunc(vs, func(x, y dimValue) int { return cmp.Or(cmp.Compare(y.n, x.n), cmp.Compare(x.value, y.value)) })
		for _, v := range vs[min(len(vs), MaxDimValuesShown):] {
			other += v.n
		}
		vs = vs[:min(len(vs), MaxDimValuesShown)]
		if other > 0 || len(vs) == 0 {
			vs = append(vs, dimValue{dims.Other, other})
		}
		out[d] = vs
	}
	return out
}

// labelValue returns v as a label value: valid UTF-8, at most
// MaxLabelBytes, a cut value ending in "…".
func labelValue(v string) string {
	v = strings.ToValidUTF8(v, "\uFFFD")
	if len(v) <= MaxLabelBytes {
		return v
	}
	const ellipsis = "…"
	cut := MaxLabelBytes - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return v[:cut] + ellipsis
}

func seconds(nanos int64) float64 { return float64(nanos) / 1e9 }

// reason turns an outcome's description ("malformed: bad time",
// "filtered: user agent") into a label value ("time", "user_agent").
func reason(o parser.Outcome) string {
	s := o.String()
	if _, after, ok := strings.Cut(s, ": "); ok {
		s = after
	}
	s = strings.TrimPrefix(s, "bad ")
	return strings.ReplaceAll(s, " ", "_")
}
