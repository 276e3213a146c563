// Package parser turns one access-log line into a Hit: site, page, time
// (UTC Unix seconds), status and method, and decides whether it counts;
// with the measures beside it: response bytes, response time and the bot
// class of the user agent.
//
// Formats (Config.Format):
//
//   - "common" (%h %l %u %t "%r" %>s %b) and "combined" (common plus
//     "%{Referer}i" "%{User-Agent}i"), the Apache and nginx defaults. Both
//     read the common part the same way and ignore what follows %b but
//     combined's user agent (a common parser does not read it): a combined
//     parser accepts common lines and a common parser combined lines, and extra
//     trailing fields (nginx's "$http_x_forwarded_for", Apache's %D) are
//     fine. A line whose referer or user agent is broken still counts:
//     real logs have them (line 8899 of testdata/apache_combined_real.log
//     ends in an unterminated user agent) and the request did happen.
//   - "vhost_combined": combined after Apache's "%v:%p " prefix; with
//     Site SiteFromLine the vhost is the site.
//   - "nginx": Config.LogFormat, an nginx log_format string, compiled once.
//     Read: $time_local, $time_iso8601, $msec (the first of them is the
//     time), $request, $request_uri, $uri, $request_method, $status, $host,
//     $http_host, $server_name, $http_user_agent, $remote_addr (and
//     $http_x_forwarded_for with Config.Client ClientForwardedFor), and
//     for the measures $body_bytes_sent, $bytes_sent, $request_time and
//     $upstream_response_time; other variables ($binary_remote_addr
//     included) are skipped, and nothing
//     after the last variable read is split. A variable's value ends where the literal text after it
//     starts (for text starting with '"', at a '"' not escaped by a
//     backslash), so two variables must not touch, and a value holding the
//     text that follows it in the format (a $remote_user with " [") splits
//     wrongly. A broken field after every field a hit needs (a cut user
//     agent) does not lose the hit; the measures and addresses after it
//     are then not read.
//   - "json": one object per line; Config.JSON names the fields (dotted
//     for nested objects, Caddy's "request.uri"), Config.TimeLayout the
//     time. Values are JSON-unescaped; the path is not log-unescaped.
//     Arrays are skipped (Caddy's header arrays cannot be read), objects
//     deeper than 16 are malformed. Decoding escaped strings may allocate.
//   - "regex": Config.Regex with named groups time, path or request,
//     status, and optionally method, site, user_agent, client, bytes,
//     request_time (seconds, Apache's %T), request_time_ms and
//     request_time_us (Apache's %D; the first of the three that holds a
//     number is the response time). The slow path: a match allocates.
//
// Measures (Hit.Bytes, RT, Bot):
//
//   - Bytes: %b of the CLF formats ("-" is 0; a size that is not digits
//     stays a malformed line, as before the measures), $body_bytes_sent
//     (else $bytes_sent), the json Bytes field, the regex bytes group. In
//     nginx, json and regex a size that is not digits ("-", garbage, a
//     negative number) is 0 and the hit counts. Sizes above MaxBytes
//     (1 PiB) count as MaxBytes.
//   - RT, in microseconds: nginx's $request_time, or when the line logs
//     none ("-" or not a number) the sum of $upstream_response_time (a
//     list "0.012, 0.030" or "0.012 : 0.030": every element a number or
//     "-", "-" skipped); json's RequestTime then UpstreamResponseTime, in
//     JSONFields.TimeUnit; regex's groups. NoRT (-1) when the line logs
//     none, or the value is not an unsigned decimal number (a sign, garbage,
//     an element of a list that is not a number): a bad time never loses
//     the hit. Values are read with integer arithmetic: digits below a
//     microsecond are truncated (toward zero); an exponent ("1.5e-3") is
//     accepted; values above MaxRT (one day) count as MaxRT.
//   - Bot: the class (botclass) of the user agent as logged: Apache's \"
//     and nginx's \x22 escapes are left in, JSON strings are unescaped; its
//     first 1 KiB (maxUALen), as for the filters. botclass.Person when the
//     format logs no user agent (common, nginx without $http_user_agent,
//     regex without user_agent) or the line lacks the field (a common line
//     read as combined, a JSON line without it); an empty one ("") is
//     classified (suspect). Config.Bots are tried before the embedded
//     lists. Only hits are classified: a line a filter excludes is not.
//     With Config.Dims and an ASN database, a person's user agent from a
//     hosting network (geo.DB.Hosting) is botclass.Suspect instead.
//     Each Parser keeps a bounded cache (botclass.Cache) behind a small
//     table of the user agents classified last (256 slots, one compare a
//     line); classifying one the cache does not hold allocates.
//
// Client and user agent (Hit.Client, UA), for a visitor key; the hit
// counts whether or not it has them:
//
//   - Client: the address as logged, never checked to be an IP (hosts
//     behind odd proxies log names; "2001:db8::1" and "fe80::1%eth0" are
//     kept whole): %h of the CLF formats (after the vhost of
//     vhost_combined), $remote_addr, the json Client field (a string,
//     JSON-unescaped), the regex client group. nil when the format or the
//     line has none, when it is "-" or empty, and when it is longer than
//     maxClientLen (64) bytes: that is garbage, so no client (not cut).
//     With Config.Client ClientForwardedFor (nginx with
//     $http_x_forwarded_for, json's ForwardedFor field; other formats are a
//     config error naming client) it is the leftmost element of the list,
//     up to its first ',' and trimmed of spaces and tabs, or the remote
//     address when that element is "-" or empty or the field is absent
//     (or, in nginx, cut short); a leftmost element over the bound is no
//     client. The leftmost element is what the client or the first proxy
//     claims: a client can send any. A port is not removed (Traefik's
//     ClientAddr holds one: use ClientHost).
//   - UA: the user agent the bot class was decided on, its first
//     maxUALen bytes as logged (Apache's \" escapes left in, JSON
//     unescaped); nil when the format logs none or the line lacks it, empty
//     for "". A json value with escapes (client or user agent) is decoded
//     into the Parser's buffers; a client whose escapes are bad, or that is
//     more than 6 × maxClientLen bytes before decoding, is no client.
//   - Referer (Hit.Referer, only with Config.Referer, where traffic comes
//     from): the referer as logged, "-" as it is, its first MaxRefererLen
//     bytes (2 KiB: the host is at its start): combined's and
//     vhost_combined's "%{Referer}i", nginx's $http_referer, json's
//     Referer field (default "http_referer", unescaped; bad escapes, or
//     more than 6 × MaxRefererLen bytes before decoding, give none), the
//     regex group referer; nil when the line has none (a common line, a
//     referer not closed). Config.Referer with a format that logs none is
//     a config error naming referer. A broken referer never loses the hit.
//
// Dimensions (Hit.Dims, with Config.Dims; see package dims): the
// referrer's host and channel (package referrer, the line's own host and
// the site's names, the SiteAliases names mapped to it among them, counted
// as internal), the client's country and network
// (package geo; dims.Unknown without a database, a client or an address),
// the agent's families and crawler (botclass.Agent, People for a person).
// Each Parser keeps, besides the referrer's cache, the values of the last
// 16,384 clients by the address as logged (in memory only, about 1.3 MiB, made on the
// first lookup; geo's database is looked up for the others), forgotten
// when geo's Holder is reloaded. A warm line allocates nothing.
//
// Formats without a method give Method "-", and cannot use filter.methods.
// With Site SiteFromLine the host is lowercased, its port and a trailing
// dot removed and mapped through SiteAliases; a missing host ("-") or one
// with bytes that are not a host name is MalformedHost. Config.MaxSites
// bounds the hosts that become sites, but Parse does not apply it: it
// marks the hits whose site is a host not in SiteAliases (Hit.FromHost),
// and the aggregator (package aggregate's Summer) gives those of hosts
// past the bound the site OtherSite ("(other)"), in line order. Parse
// keeps no state across lines: a line's hit depends on the Config and the
// line alone, so lines may be parsed on any goroutine, in any order.
//
// Pages: the path as logged up to '?' or '#', then the page rules (see
// PageConfig) in this order: lowercase, index_files, strip_trailing_slash,
// rewrite, keep_query; the length bound last. A path whose decoded form is
// longer than 4 KiB (or 4 × MaxPageLen) skips the rules other than
// lowercase and is cut and hashed as it is. Rewrites that match allocate.
//
// Filters (see FilterConfig) give Filtered outcomes; the first that
// applies, in the order methods, status, user agent, extension, path,
// names the reason. User agents are read up to their first 1 KiB.
// Parser.Counts keeps per-outcome counts. max_pages_per_minute is not
// applied by Parse either: it needs state across lines, and the aggregator
// applies it (package aggregate's Summer), pages past it counted as Other.
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
//   - Times ($time_local, "clf") must be "[dd/Mon/yyyy:hh:mm:ss ±hhmm]" with English month
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
//   - Times after 9999-12-31 are malformed; fractions of a second are
//     dropped (rfc3339, unix, unix_ms). Go time layouts allocate.
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
//     linear in the line length, and the scratch space never grows except
//     json's buffers for escaped fields, which grow to the longest seen.
package parser
