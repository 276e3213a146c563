// Package referrer turns a hit's referrer into its value in two
// dimensions of a site's traffic: the referrer host and the channel.
// Every referrer gets exactly one of each, so per site and day the hosts'
// counts, and the channels' counts, each sum to the views.
//
// Caveat: a referrer is what the client sends, and many send little or
// nothing. Since browsers default to Referrer-Policy
// strict-origin-when-cross-origin (2020-2021), another site's referrer
// is its origin alone (https://news.example.org/, no path); a site may
// send none at all (no-referrer, rel=noreferrer links, most link
// shorteners and redirectors pass their own host or nothing), and
// https pages send none to http ones. Apps, mail clients, chat
// clients, PDFs and typed or bookmarked addresses send none: all of it is
// "direct", which is therefore an upper bound of direct visits. AI
// assistants often send none (links opened from their apps, answers
// copied), so the "ai" channel counts only the visits whose client said
// so; many carry utm_source=chatgpt.com in the page's query instead,
// which logtally does not read here. A referrer can also be forged: spam
// is counted apart, but a forged referrer of a listed search engine is
// counted as search.
//
// # Values
//
// Classify tries, in order, and the first that applies decides:
//
//  1. no referrer ("" or "-", the log's placeholder): Host "(direct)",
//     channel direct;
//  2. not an http(s) or android-app URL with a valid host: Host
//     "(invalid)", channel other. That is: no scheme ("www.google.com"),
//     another scheme (ftp:, about:blank, chrome-extension:, ios-app:),
//     no host, a host over 253 bytes or with a label over 63 bytes or
//     an empty label, bytes a host name cannot hold (anything but
//     letters, digits, "-", "_" and "."; raw UTF-8 too: an IDN must be
//     sent as punycode, as browsers send it), a port that is not 0 to 5
//     digits, an IPv6 zone;
//  3. the site itself (its host is one of New's self names): Host
//     "(self)", channel internal;
//  4. a referrer-spam host (the host or any of its parent domains is in
//     Matomo's spam list): Host "(spam)", channel spam. The hit is still
//     a view; the spam is counted apart so that it can be subtracted;
//  5. else Host is the normalised host, and the channel is that of the
//     most specific of the host and its parent domains a list names
//     (news.google.com: google.com's, search; gemini.google.com: its
//     own, ai; a name in several lists: the first list's, see
//     Channels), or, failing that, of a "name.{}" entry (google.{}:
//     google.de, google.co.uk), else referral.
//
// The Host strings "(direct)", "(self)", "(spam)" and "(invalid)" are no
// host (a host has no parentheses), and Host is never "(other)", which
// the dimensions use for the values past their first N.
//
// # Hosts
//
// The host is normalised: userinfo and port dropped, %-escapes decoded,
// lower-cased, one trailing dot dropped, and a leading "www." folded
// when a name with a dot follows: www.example.org and example.org are
// one referrer (example.org); www.localhost stays. Only "www." is
// folded (m.facebook.com, l.facebook.com and facebook.com are three
// hosts, each social). IDNs stay as sent: punycode (xn--...). IP
// literals stay as written, IPv6 in brackets and lower case
// ([2001:db8::1]); a name whose last label is all digits is taken as an
// IPv4 address. They have no parent domains and no www. folded. For a listed host's subdomain, Host is the actual
// host (news.google.com), not the list's entry (google.com): a site owner
// sees where the links are, the channel says what kind of place it is.
//
// An Android app sends android-app://package (Intent.EXTRA_REFERRER):
// Host is "android-app://" and the package, lower-cased
// (android-app://com.google.android.gm, email), its channel from our
// lists (exact names, no parents), else referral.
//
// The self names are normalised the same way (www.example.com is
// example.com); "*.example.com" names example.com and all its
// subdomains. CheckSelf says whether a name can be one; SelfHost gives a
// name's Host, and IsHost tells whether a Host is a host name as a log
// line gives it (a site taken from the line, www. folded alike).
//
// # Channels
//
//   - direct: no referrer.
//   - internal: the site itself.
//   - search: a search engine (Matomo's SearchEngines.yml, our
//     data/search.txt).
//   - social: a social network, messenger or forum (Matomo's
//     Socials.yml, our data/social.txt).
//   - email: a webmail or a mail app (our data/email.txt).
//   - ai: an AI assistant or AI search (our data/ai.txt, Matomo's
//     AIAssistants.yml).
//   - referral: any other site or app.
//   - spam: a referrer-spam host.
//   - other: "(invalid)".
//
// The set is closed (Channel, NumChannels); its values are stored, so the
// order never changes.
//
// When lists disagree on one host, the first wins: our data/ai.txt,
// data/email.txt, data/search.txt, data/social.txt, then Matomo's AI,
// social and search lists. So ChatGPT, Perplexity and You.com, which
// Matomo's search list also names (they take a query parameter), are ai;
// facebook.com, in its social and search lists, is social. A more
// specific host wins over its parent whatever the list (mail.google.com
// is email, google.com search). Spam wins at any level.
//
// # Lists
//
// data/VERSIONS names the repository, commit, commit date and licence of
// each upstream list; Version returns the commits. referrer/refresh.sh
// regenerates data/ from a commit (downloaded from
// raw.githubusercontent.com, or read from local clones) and reproduces
// the committed files byte for byte from the pinned commits
// (TestRefreshReproduces, given the clones).
//
//   - searchengine-and-social-list (github.com/matomo-org/
//     searchengine-and-social-list, CC0 1.0, LICENSE next to the list):
//     the hosts of SearchEngines.yml, Socials.yml and AIAssistants.yml,
//     one "host<TAB>search|social|ai" line each, in upstream order, as
//     written. "{}.name" entries are name (whose subdomains match anyway);
//     "name.{}" entries match name under any top-level domain, one label
//     or two when the second is com, org, net, co, it or edu (Matomo's
//     rule: google.de, google.co.uk). Entries with a path
//     (google.com/cse, x.com/i/grok) or a "{}" inside
//     (images.{}.ask.com) are skipped: the host alone would say more
//     than the entry (their hosts are listed anyway).
//   - referrer-spam-list (github.com/matomo-org/referrer-spam-list,
//     spammers.txt): public domain (its README; its composer.json says
//     CC0-1.0), the README's licence section kept as its LICENSE.
//   - data/ai.txt, data/email.txt, data/search.txt, data/social.txt: our
//     lists (the project's), each entry with its source: AI assistants
//     (checked first), webmail (with the European webmails' link
//     redirectors, deref-gmx.{}...), and the Android apps and hosts the
//     upstream lists lack. Entries are written as upstream's: a host,
//     "name.{}" or android-app://package.
//
// Against the 118 cases of Snowplow's referer-tests.json (read, not
// kept), the channel agrees with Snowplow's medium for 109: the others
// are three small search sites neither Matomo nor we list (referral),
// five ad servers Snowplow calls "paid" (referral here: there is no paid
// channel) and lnk.bio (social there, referral here).
//
// Snowplow's referer-parser (referers.yml, also in Debian's
// ruby-referer-parser) was the other candidate and is not used: its
// README puts referers.yml, derived from Piwik's lists, under the GNU GPL
// v3 (Debian's copyright file says Apache-2.0 for the whole package, the
// code's licence), and Matomo's own lists, its source, are CC0 now and
// newer. Of its media, email is our email list's; paid (ad servers) and
// unknown are referral here.
//
// # Speed
//
// A Classifier (one per parser goroutine; not safe for concurrent use)
// remembers the result of up to DefaultCacheSize normalised hosts in two
// generations (recent.Gen, as botclass.Cache), and the last referrer
// with its result (a page's images, styles and scripts follow the page
// with its referrer: 56% of the real Apache log's referrers other than
// "-" are the line before's), and behind it the results of the last
// 1,024 referrers of up to 96 bytes, by their bytes as logged (package
// recent, about 130 KiB, made on the first referrer). Otherwise Classify
// parses the host into a buffer it owns (the common http(s) host in one
// table-driven pass) and looks it up: a host seen before allocates
// nothing (TestZeroAllocs); a new host allocates its string once (a
// listed host's string is the table's) and looks up the host and each
// parent domain in one map.
// Hosts past the bound push the oldest out: a flood of random hosts
// keeps the cache at its size (TestCacheBounded), at most 4,096 keys of
// at most 267 bytes (android-app:// and a 253-byte package) per
// Classifier. The tables (3,300 hosts) are built once, on the first New,
// and shared. BenchmarkClassify and BenchmarkApacheLog report the cost
// against botclass.Cache.Class on a cached user agent in the same run.
package referrer
