// Package observe serves logtally's HTTP endpoints for operators, on the
// address of [http] listen (default 127.0.0.1:9464; empty disables them):
//
//   - GET /metrics: Prometheus text format, from a registry of its own
//     (never the global one). The counters are read from the pipeline at
//     scrape time (Source.Stats and Source.Status); nothing is counted
//     twice and nothing is kept here. Besides logtally_* it has the Go
//     runtime's go_* and the process's process_* metrics.
//   - GET /healthz: 200 "ok" while the source is healthy (its Health when
//     it has one, else Alive), else 503 and the reason: one line saying
//     since when (UTC, RFC 3339), never anything read from the logs, an
//     address or a secret. Healthy is making progress
//     (pipeline.Pipeline.Health): not while the aggregator or the flusher
//     has stopped turning, nor while commits fail on a full state dir,
//     nor while hits have waited longer than [http] unhealthy_after with
//     nothing written to MongoDB ("MongoDB unreachable since T: N hits
//     pending, …"), nor while reading has been paused that long on a full
//     buffer, nor while package daemon's stand-in waits for MongoDB at the
//     first start. An idle pipeline, nothing pending, is healthy however
//     long ago its last batch was. A 503 stops nothing: the daemon goes on
//     counting into its buffer, and systemd's watchdog, which asks Alive
//     only, does not restart it for waiting on MongoDB.
//   - GET /status: JSON for people and for `logtally state` while the
//     daemon runs: instance, buffer id, files per source (path, dev:ino,
//     committed offset, size, lag), pending counts, the batch in flight,
//     the last acknowledged batch, the bucket lifecycle ("buckets": each
//     level's retention and expiry mode, preallocation's counters), health,
//     the pinned data lists built in (Lists: each list's commit and date),
//     and the last warning or error of each component when a Tap is wired.
//
// Who is asking: the endpoints have no authentication, so they answer
// only a Host header that is an IP address in its usual form, localhost,
// Listen's own name or one of Config.Hosts (internal/hostcheck): a web
// page in the operator's browser that has its name resolve to 127.0.0.1
// (DNS rebinding) gets 403, not /status. /healthz is checked too (its
// failure names what is wrong); probers by address pass. The dashboard,
// mounted at /dashboard/, keeps its own checks (the same rule without a
// password).
//
// Server is the whole of it: New, then Run until the context ends (Listen
// first, to fail at start on an address in use). Source is what it reads
// of the pipeline; *pipeline.Pipeline implements it.
//
// Metrics (all totals since the daemon started, except the gauges):
//
//	logtally_build_info{version}                      1
//	logtally_alive                                    1 while Source.Alive is nil, else 0 (a full state dir, MongoDB
//	                                                  or a full buffer past unhealthy_after fail /healthz only)
//	logtally_lines_total{source}                      lines parsed (every outcome)
//	logtally_too_long_lines_total                     lines over max_line_bytes, skipped (not in lines_total)
//	logtally_hits_total{site}                         lines counted as hits (at most 200 sites, the rest as "(other sites)")
//	logtally_other_hits_total                         hits counted as "(other)" by max_pages_per_minute
//	logtally_sites_folded_hits_total                  hits counted under the site "(other)" by max_sites
//	logtally_hits_by_class_total{class}               hits by user-agent class: people, search, ai, tool, bot, suspect
//	                                                  (people: views minus the bot classes)
//	logtally_hits_by_status_total{class}              hits by status class: 2xx, 3xx, 4xx, 5xx, other
//	logtally_response_bytes_total                     response bytes the counted hits' lines log
//	logtally_response_time_seconds_total              sum of the response times of the hits that log one
//	logtally_response_time_count_total                hits that log a response time
//	logtally_traffic_views_total{dimension,value}     hits committed by where they came from ([dimensions] on): per
//	                                                  dimension its 20 values with the most hits, the rest as "(other)"
//	logtally_malformed_lines_total{reason}            empty_line, fields, time, request, status, host
//	logtally_filtered_lines_total{reason}             method, status, user_agent, extension, path
//	logtally_commits_total                            buffer commits of counts and checkpoints
//	logtally_last_commit_timestamp_seconds            wall-clock time of the last commit (0: none yet)
//	logtally_buffer_pending_buckets                   (site, page, second) keys not yet acknowledged, batch in flight included
//	logtally_buffer_pending_hits                      hits not yet acknowledged, batch in flight included
//	logtally_buffer_size_bytes                        live data in buffer.db (pending and sealed counts)
//	logtally_flush_batches_total{result}              batch writes: ok (acknowledged) or failed
//	logtally_flush_duration_seconds                   histogram of the time to write one batch, record to acknowledgement
//	logtally_last_flush_timestamp_seconds             when MongoDB last acknowledged a batch
//	logtally_flushed_hits_total                       hits in those batches
//	logtally_flush_retries_total                      failed attempts retried
//	logtally_last_acked_batch_sealed_timestamp_seconds seal time of the last acknowledged batch (absent: none yet)
//	logtally_mongo_operations_total{op}               bulk_write (calls), update (bucket updates sent in them),
//	                                                  find (calls), insert (InsertMany calls), plan_find and
//	                                                  plan_insert (the plans' find and InsertMany calls)
//	logtally_mongo_buckets_created_total              buckets this daemon inserted
//	logtally_bucket_expiry_mode{level,collection,mode} 1 per level and collection (buckets, site totals,
//	                                                  visitors of each salt period): off, pending, ttl or deletemany
//	logtally_expired_buckets_deleted_total{level,collection} documents the deleteMany fallback deleted
//	logtally_late_buckets_created_total               buckets created again for counts later than the retention
//	logtally_expired_hits_total                       hits not written to a level (or the site totals) past its retention
//	logtally_preallocated_buckets_total{result}       created, existing or dropped by preallocation
//	logtally_preallocation_failures_total             failed preallocation inserts (counts are written regardless)
//	logtally_preallocation_tracked_pages              pages tracked for preallocation now
//	logtally_tail_writes_total                        tail documents written (cold pages' counts; docs/buckets.md)
//	logtally_tail_spills_total                        tails' shares of a batch sent to spill documents instead
//	logtally_tail_spill_documents_total               spill documents sent
//	logtally_plans_proposed_total{result}             plans proposed: inserted, or lost to another writer's
//	logtally_files_followed{source}                   files a source's tailer follows now
//	logtally_file_lag_bytes{source}                   sum over the source's files of size - committed offset
//	logtally_lost_files_total{source}                 followed files not found again with lines possibly unread
//	logtally_refused_symlinks_total{source}           symbolic links not followed (follow_symlinks off), each path once
//	logtally_state_dir_full                           1 while commits fail for lack of space on the state dir
//	logtally_visitors_unsalted_hits_total             hits of people that added no visitor: their salt period's salt not held
//	logtally_visitors_today{site}                     this host's estimate of the current salt period's visitors (at most
//	                                                  200 sites, the first by name; absent with visitors off)
//	logtally_visitors_error_ratio                     its relative standard error (1 s.e.: 0.01625)
//	logtally_geo_database_build_timestamp_seconds{database} when the [geo] database (country, asn) the parsers read
//	                                                  was built: an MMDB's build_epoch, a Tor geoip file's "Generated:"
//	                                                  header, else its modification time (absent: not read, not known)
//	logtally_geo_database_age_seconds{database}       the clock's now minus that, at the scrape (alert on it)
//
// Caveats:
//   - Labels are bounded: source names (from the config), fixed reason, op
//     and class names, the version, at most 200 sites (the aggregator
//     counts the rest as "(other sites)") and 21 values per dimension
//     (aggregate.Stats.ByDim keeps 1000 a dimension, the rest as
//     "(other)"; the 20 with the most hits are shown by name). Never a
//     file path, a page or a user agent. A dimension's value (a referrer
//     host, a network's organisation, a crawler's name) is data from the
//     lines or the geo databases: made valid UTF-8, cut to 64 bytes (with
//     "…"; values cut alike are one series) and escaped by the exposition
//     format.
//   - logtally_traffic_views_total counts the hits committed to the
//     buffer (as the measures' counters), so it lags hits_total by up to
//     a commit; the top 20 are this host's since it started, not the
//     site's (logtally query -by and the dashboard read those).
//   - logtally_visitors_today is this host's own sketch, read from its
//     buffer at each scrape: the visitors it read since its sketch of the
//     period began (a lost state dir starts it again), not the fleet's,
//     which only MongoDB holds (logtally query -measure visitors). Hosts'
//     estimates do not add up: one visitor seen by two hosts is in both.
//     It needs a Source with VisitorsNow (*pipeline.Pipeline has it).
//   - The counters restart at 0 with the daemon (Prometheus handles that);
//     after a crash the lines read again are counted again here, never in
//     the page views.
//   - Lag is measured against the committed checkpoint, so it includes up
//     to one commit interval of lines already read. A file that is found
//     neither at its path nor among its rotated candidates (path.*,
//     path-*) has no size and adds no lag. A file not yet matched by a
//     glob is not known and adds none either.
//   - logtally_last_acked_batch_sealed_timestamp_seconds is when the last
//     successful flush began (a batch is sealed when its write begins);
//     logtally_last_flush_timestamp_seconds when it ended. With nothing
//     pending both stay put: alert on them only together with
//     logtally_buffer_pending_hits > 0.
//   - unhealthy_after counts from the pipeline's start: a reload (SIGHUP)
//     makes a new pipeline, so /healthz answers 200 again for up to
//     unhealthy_after even if MongoDB is still down.
//   - The geo gauges read the databases held at each scrape: after a
//     reload (SIGHUP) that read new files, the new ones'; a file that no
//     longer reads keeps the old database, and its age goes on growing.
//     They need Config.Geo (the daemon's geo.Holder, with [dimensions]
//     enabled and a [geo] file named).
//   - The MongoDB URI appears only redacted, and its password is cut out
//     of every /status and /healthz response whatever field it got into.
//   - /status reads the buffer in a few read transactions: a batch sealed
//     between two of them can show in both pending and in flight for that
//     one response.
//   - The Source must stay usable until Run has returned: stop the server
//     before closing the pipeline.
package observe
