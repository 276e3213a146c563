package parser

// The hit's value in each dimension of where traffic comes from
// (package dims), with Config.Dims: the referrer's host and channel
// (package referrer), the client address's country and network (package
// geo), the user agent's families and crawler (botclass.Agent).

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/dims"
	"github.com/logtally/logtally/geo"
	"github.com/logtally/logtally/recent"
	"github.com/logtally/logtally/referrer"
)

// DimsConfig turns on Hit.Dims.
type DimsConfig struct {
	// Geo tells the client address's country and network; nil: both
	// unknown.
	Geo *geo.Holder `json:"-"`
	// Self are the site's own host names besides Site and the
	// SiteAliases that map to it (its names as a referrer: a
	// self-referral is internal). With the site taken from the line, a
	// referrer is internal when it names the line's site or an alias
	// mapped to it; Self are then names of every site.
	Self []string
	// Values are the values of each open dimension counted by name per
	// site and day (dims.LimitsFor; 0: dims.DefaultValues): the
	// aggregator's bound, carried with the rest of the dimensions'
	// settings (Parser.DimsLimits).
	Values int `json:",omitempty"`
}

// DimsLimits returns the bounds of the counts by dimension of the hits p
// gives (Config.Dims's Values), and false without Config.Dims.
func (p *Parser) DimsLimits() (dims.Limits, bool) {
	if p.dims == nil {
		return dims.Limits{}, false
	}
	return dims.LimitsFor(p.dims.limit), true
}

// People is the crawler value of a hit that is no bot's; Hosting that
// of a person's user agent from a hosting network, a suspected bot.
const (
	People  = "(people)"
	Hosting = "(hosting network)"
)

// asnNamesMax bounds the network values a Parser keeps ("AS<n> <org>").
const asnNamesMax = 4096

// dimsState is what a Parser keeps to give a hit its dimension values:
// caches, so that a warm line allocates nothing.
type dimsState struct {
	hasRef, hasUA, hasClient bool // what the format logs
	limit                    int  // DimsConfig.Values
	fromLine                 bool // Site is the line's host: compared with the referrer's
	ref                      *referrer.Classifier
	geo                      *geo.Holder // nil without Geo
	asn                      map[uint32]string
	// The client of the line before and its values (lastOK: held), from
	// clientsDB: a visitor's lines come in runs.
	lastClient          []byte
	lastCountry, lastAS string
	lastHosting, lastOK bool
	// clients remembers the values of recent clients by the address as
	// logged (no address parsed, no map): made on the first lookup,
	// forgotten when the database is reloaded (clientsDB is the one its
	// values come from).
	clients   *recent.Table[clientValues]
	clientsDB *geo.DB
	// aliasOf maps the referrer host of each SiteAliases name to its
	// site, with fromLine: a referrer naming an alias of the line's site
	// is internal.
	aliasOf map[string]string
}

// recentClients is the size of dimsState.clients (about 100 bytes an
// entry), clientKeyMax the longest address it holds (an IPv6 address in
// full).
const (
	recentClients = 1 << 14
	clientKeyMax  = 39
)

// clientValues are a client's values in the dimensions.
type clientValues struct {
	country, as string
	hosting     bool
}

// newDims returns the state of c for a format logging what the flags say.
//
// The site's own names are its self names: a configured Site, the
// SiteAliases names mapped to it and DimsConfig.Self. With the site taken
// from the line, the aliases are each their site's (aliasOf), not every
// site's: one log's sites link to each other as other sites do.
func newDims(c *DimsConfig, cfg *Config, hasRef, hasUA bool) *dimsState {
	fromLine := cfg.Site == SiteFromLine
	names := slices.Clone(c.Self)
	var aliasOf map[string]string
	if fromLine && len(cfg.SiteAliases) > 0 {
		aliasOf = make(map[string]string, len(cfg.SiteAliases))
	} else if !fromLine {
		names = append(names, cfg.Site)
	}
	for k, v := range cfg.SiteAliases {
		switch h, ok := referrer.SelfHost(strings.ToLower(k)); {
		case !fromLine && v == cfg.Site:
			names = append(names, k)
		case fromLine && ok:
			// www.x and x are one referrer host: the name as written wins.
			if _, dup := aliasOf[h]; !dup || h == strings.ToLower(k) {
				aliasOf[h] = v
			}
		}
	}
	var self []string
	for _, n := range names {
		if referrer.CheckSelf(n) == nil {
			self = append(self, n)
		}
	}
	d := &dimsState{hasRef: hasRef, hasUA: hasUA, hasClient: true, fromLine: fromLine, aliasOf: aliasOf,
		ref: referrer.New(self), asn: map[uint32]string{}, limit: c.Values}
	if c.Geo != nil {
		d.geo = c.Geo
	}
	return d
}

// values sets v to the hit's values: site (its site), ref (the referer as
// logged, nil: none), client (as logged, nil: none), whether the line
// has a user agent, and its agent. It reports whether the client's
// network is a hosting one (geo's pinned list).
func (d *dimsState) values(v *dims.Values, site, ref, client []byte, hasUA bool, agent botclass.Agent) (hosting bool) {
	v[dims.Referrer], v[dims.Channel] = dims.Unknown, dims.Unknown
	if d.hasRef && ref != nil {
		r := d.ref.Classify(ref)
		if d.fromLine && r.Channel != referrer.Internal && d.sameSite(r.Host, site) {
			r = referrer.Result{Host: referrer.HostSelf, Channel: referrer.Internal}
		}
		v[dims.Referrer], v[dims.Channel] = r.Host, r.Channel.String()
	}
	v[dims.Country], v[dims.ASN] = dims.Unknown, dims.Unknown
	switch {
	case d.geo == nil || client == nil:
	case d.lastOK && string(client) == string(d.lastClient) && d.geo.DB() == d.clientsDB: // not reloaded since
		v[dims.Country], v[dims.ASN], hosting = d.lastCountry, d.lastAS, d.lastHosting
	default:
		v[dims.Country], v[dims.ASN], hosting = d.place(client)
		d.lastClient = append(d.lastClient[:0], client...)
		d.lastCountry, d.lastAS, d.lastHosting, d.lastOK = v[dims.Country], v[dims.ASN], hosting, true
	}
	if !hasUA {
		v[dims.Browser], v[dims.OS], v[dims.Device], v[dims.Crawler] = dims.Unknown, dims.Unknown, dims.Unknown, dims.Unknown
		return hosting
	}
	v[dims.Browser], v[dims.OS], v[dims.Device] = agent.Browser.String(), agent.OS.String(), agent.Device.String()
	v[dims.Crawler] = People
	if agent.Crawler != nil && agent.Crawler.Name != "" {
		v[dims.Crawler] = agent.Crawler.Name
	} else if hosting && agent.Class == botclass.Person {
		v[dims.Crawler] = Hosting
	}
	return hosting
}

// place returns the country and network values of client (an address as
// logged) and whether the network is a hosting one: from clients when it
// holds client, else looked up (and put there), in the database read now.
func (d *dimsState) place(client []byte) (country, as string, hosting bool) {
	db := d.geo.DB()
	switch {
	case d.clients == nil:
		d.clients, d.clientsDB = recent.New[clientValues](recentClients, clientKeyMax), db
	case db != d.clientsDB: // reloaded
		d.clients.Clear()
		d.clientsDB = db
		clear(d.asn) // an organisation's name may have changed
	}
	e, ok := d.clients.Lookup(client)
	if ok {
		return e.country, e.as, e.hosting
	}
	country, as = dims.Unknown, dims.Unknown
	// netip keeps nothing of the string (a zone is copied): it may alias
	// the line.
	if addr, err := netip.ParseAddr(unsafe.String(unsafe.SliceData(client), len(client))); err == nil {
		pl := db.Lookup(addr)
		if pl.Country != "" {
			country = pl.Country
		}
		if pl.ASN != 0 {
			as = d.asnName(pl)
			hosting = db.Hosting(pl.ASN)
		}
	}
	if e != nil {
		*e = clientValues{country, as, hosting}
	}
	return country, as, hosting
}

// asnName returns the network value of pl: "AS<n> <organisation>" (or
// "AS<n>"), kept per number while the Parser keeps at most asnNamesMax.
func (d *dimsState) asnName(pl geo.Place) string {
	if s, ok := d.asn[pl.ASN]; ok {
		return s
	}
	if len(d.asn) >= asnNamesMax {
		clear(d.asn)
	}
	s := "AS" + strconv.FormatUint(uint64(pl.ASN), 10)
	if pl.Org != "" {
		s += " " + pl.Org
	}
	d.asn[pl.ASN] = s
	return s
}

// sameSite reports whether host, a referrer's normalised host (a leading
// "www." folded), names site, the line's site: its host, or an alias
// mapped to it.
func (d *dimsState) sameSite(host string, site []byte) bool {
	if referrer.IsHost(host, site) {
		return true
	}
	s, ok := d.aliasOf[host]
	return ok && s == string(site)
}
