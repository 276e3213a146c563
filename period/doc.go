// Package period is the one calendar arithmetic of logtally: the UTC
// minute, hour, day and month (Unit) that the buckets (bucket.Level), the
// visitor salt periods (visitor.Period) and the query steps (query.Step)
// are cut by, and the one retention rule (Expires, Cutoff). It does no I/O
// and imports nothing of logtally.
//
// A period is the half-open range [start, end) of Unix seconds, aligned
// to UTC: minutes and hours to the epoch, days to UTC midnight, months to
// the first midnight of the month. Bounds is the only place these are
// computed; Truncate, Next, Ceil and Steps are the same rule on a
// time.Time.
//
// AppendID writes a period's start in the time part of the stored _ids
// (YYYYMMDDhhmm, YYYYMMDDhh, YYYYMMDD, YYYYMM): the bucket, site and
// visitor documents and the salts are named by it, so its layouts are a
// stored format (a test pins them).
//
// A period expires a keep (a retention, a salt's grace) after its end,
// whatever its length: Expires is that rule, Cutoff its inverse (the start
// of the oldest period not yet expired), and they agree by construction
// (a test checks them over random periods and keeps).
//
// # Caveats
//
//   - Seconds before 1970 are handled (the bounds floor), but the ids of
//     years outside 0000–9999 are not fixed-width: time's layout writes
//     them as it does.
package period
