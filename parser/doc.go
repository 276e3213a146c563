// Package parser turns one access-log line into a Hit: site, page, time
// (UTC Unix seconds), status and method, without allocating.
//
// Formats: "common" (%h %l %u %t "%r" %>s %b) and "combined" (common plus
// "%{Referer}i" "%{User-Agent}i"), the Apache and nginx defaults. Every
// field of a hit is in the common part, so for now both formats parse
// that part the same way and ignore whatever follows %b: a combined
// parser accepts common lines and a common parser combined lines (logs
// that mix the two, or change format mid-file, lose nothing), and extra
// trailing fields (nginx's "$http_x_forwarded_for", Apache's %D) are
// fine. A line whose referer or user agent is broken still counts: real
// logs have them (line 8899 of testdata/apache_combined_real.log ends in
// an unterminated user agent) and the request they record did happen.
// When user-agent filters come (issue 3), combined will read those fields.
//
// Checked fields: a non-empty client (%h, IPv6 included), two fields
// before the time (%l and %u; the user may hold spaces), the time, the
// quoted request, a status of three digits in 100..599 and a size of
// digits or "-". A trailing "\n" and then "\r" are stripped (CR LF logs);
// empty and blank lines are MalformedEmpty.
//
// Caveats:
//
//   - A Hit's slices are only valid until the next Parse on the same
//     Parser; copy what you keep. A Parser is not safe for concurrent use.
//   - Times must be "[dd/Mon/yyyy:hh:mm:ss ±hhmm]" with English month
//     abbreviations in their usual case ("Oct"). Impossible dates (31/Feb,
//     29/Feb of a common year), hours > 23 and the like are malformed, as
//     are times before 1970. A leap second (:60) is counted as :59 so the
//     hit stays in its minute instead of being lost.
//   - The page is the path as logged up to the first '?' or '#', never
//     percent-decoded. Absolute-form targets ("GET http://host/a") are
//     reduced to their path ("/a", or "/" for "http://host"). Targets that
//     are not paths ("*" of OPTIONS, "host:443" of CONNECT), requests of
//     "-" or "", and binary garbage such as TLS sent to a plain port are
//     malformed (bad request): they are not page views.
//   - The escapes servers write in quoted fields are undone in the page:
//     \" and \\ (Apache), \xHH (Apache and nginx), \b \n \r \t \v (Apache).
//     A log from a server that does not escape backslashes could thus see
//     a literal "\x41" in a path read as "A".
//   - Pages are valid UTF-8: bytes that are not valid UTF-8, ASCII controls
//     and spaces are percent-encoded with upper-case hex ("%FF", "%20"), so
//     "/a%20b" and a logged "/a b" are the same page.
//   - Pages longer than MaxPageLen are cut on a UTF-8 boundary and end in
//     "~" and 16 hex digits of the 64-bit FNV-1a hash of the whole page;
//     the result is at most MaxPageLen bytes, and stable across runs and
//     machines.
//   - The request target is everything between the method and a last word
//     starting with "HTTP/" (or the end), so a target containing a space
//     is kept whole. The method must be an HTTP token of at most 32 bytes.
//   - Lines have no length limit here (the tailer bounds them); work is
//     linear in the line length and the scratch space never grows.
package parser
