package referrer

import (
	"bytes"
	"errors"
	"strings"

	"github.com/logtally/logtally/recent"
)

// The Host values that are not hosts. No host can be one (a host has no
// parentheses), and none is "(other)", which the dimensions use for the
// values past their first N.
const (
	HostDirect  = "(direct)"  // Channel Direct
	HostSelf    = "(self)"    // Channel Internal
	HostSpam    = "(spam)"    // Channel Spam
	HostInvalid = "(invalid)" // Channel Other
)

// DefaultCacheSize is the number of hosts a Classifier remembers.
const DefaultCacheSize = 4096

// Result is a referrer's value in the two dimensions.
type Result struct {
	// Host is the referrer's normalised host (example.org,
	// news.google.com, [2001:db8::1], 192.0.2.1,
	// android-app://com.google.android.gm) or one of HostDirect,
	// HostSelf, HostSpam, HostInvalid.
	Host    string
	Channel Channel
}

// cached is a remembered host: its result and the map's key, kept to
// move it between generations without a copy (recent.Keyed).
type cached struct {
	key string
	r   Result
}

// Key returns the host h was remembered for (recent.Keyed).
func (h cached) Key() string { return h.key }

var (
	direct  = Result{HostDirect, Direct}
	invalid = Result{HostInvalid, Other}
)

// Classifier classifies the referrers of one site. It is not safe for
// concurrent use: make one per goroutine (per Parser).
//
// It remembers the Result of up to DefaultCacheSize hosts in two
// generations (a recent.Gen, as botclass.Cache does): a host is added to
// the current one; when that is full (half the size) it becomes the
// previous one and the old previous one is dropped; a hit in the previous
// generation moves the host to the current one. A host seen before (in either) costs a
// parse and a map lookup and allocates nothing; a new host allocates its
// string once. The referrer of the call before (up to 512 bytes) costs
// a comparison; one of the last 1,024 (up to 96 bytes), a lookup in a
// fixed table (package recent).
type Classifier struct {
	t *tables
	// self: the site's names, normalised; selfAny: the domains of its
	// "*.domain" names (the domain and all its subdomains).
	self, selfAny map[string]bool
	hosts         *recent.Gen[string, cached]
	hits, misses  uint64
	buf           [keyMax]byte
	// last is the last referrer classified (up to maxLast bytes) and
	// lastR its result: a page's images, styles and scripts follow it
	// with the page's referrer, so the next line often has the same.
	last  []byte
	lastR Result
	// recent remembers the results of the referrers classified last, by
	// the referrer as logged (up to recentKeyMax bytes): no host parsed,
	// no map.
	recent *recent.Table[Result]
}

// recentRefs is the size of Classifier.recent, recentKeyMax the longest
// referrer it keeps (nine in ten of a real log's are shorter).
const (
	recentRefs   = 1024
	recentKeyMax = 96
)

// maxLast is the longest referrer remembered as the last one.
const maxLast = 512

// New returns a Classifier for a site whose own host names and aliases
// are self: exact names, or "*.example.com" for example.com and all its
// subdomains. Names are normalised as referrers are (lower case, port
// and trailing dot dropped, "www." folded). A name CheckSelf refuses is
// ignored: check them when reading the configuration.
func New(self []string) *Classifier {
	c := &Classifier{
		t:       defaultTables(),
		self:    map[string]bool{},
		selfAny: map[string]bool{},
		hosts:   recent.NewGen[string, cached](DefaultCacheSize),
		last:    make([]byte, 0, maxLast),
		lastR:   invalid,
	}
	for _, s := range self {
		if key, wild, ok := selfName(s); ok && wild {
			c.selfAny[key] = true
		} else if ok {
			c.self[key] = true
		}
	}
	return c
}

// CheckSelf returns an error if name cannot be one of New's self names:
// a host name, an IP address or "*." and a domain name with a dot
// ("*.com" is refused).
func CheckSelf(name string) error {
	if _, _, ok := selfName(name); !ok {
		return errBadSelf
	}
	return nil
}

var errBadSelf = errors.New(`not a host name, an IP address or "*." and a domain name with a dot`)

// SelfHost returns the Host a referrer naming the host name has (name
// normalised as New's self names are: lower case, port and trailing dot
// dropped, "www." folded), and false for a name CheckSelf refuses or a
// "*." one.
func SelfHost(name string) (string, bool) {
	key, wild, ok := selfName(name)
	return key, ok && !wild
}

// IsHost reports whether host, a Result's Host, is the host name name (in
// lower case without port or trailing dot, as a site taken from a log
// line is) once "www." is folded as a referrer's is.
func IsHost(host string, name []byte) bool {
	return host == string(name[foldWWW(name):])
}

// selfName normalises one of New's self names.
func selfName(name string) (key string, wild, ok bool) {
	h, wild := strings.CutPrefix(name, "*.")
	key, k, ok := normalise(h)
	if !ok || k == kindApp || wild && (k != kindName || !strings.Contains(key, ".")) {
		return "", false, false
	}
	return key, wild, true
}

// Classify returns the referrer ref's host and channel. ref is the
// referrer as logged: "" and "-" are no referrer. It allocates nothing
// once the host has been seen (see Classifier).
func (c *Classifier) Classify(ref []byte) Result {
	if len(ref) == 0 || len(ref) == 1 && ref[0] == '-' {
		return direct
	}
	if string(ref) == string(c.last) {
		c.hits++
		return c.lastR
	}
	if c.recent == nil {
		c.recent = recent.New[Result](recentRefs, recentKeyMax)
	}
	e, ok := c.recent.Lookup(ref)
	if ok {
		if *e != invalid {
			c.hits++
		}
		return *e
	}
	r := c.lookup(ref)
	if e != nil {
		*e = r
	}
	if len(ref) <= maxLast && r != invalid {
		c.last = append(c.last[:0], ref...)
		c.lastR = r
	}
	return r
}

// HostChannel returns the channel of a Result's Host as c classifies it
// now: HostDirect's, HostSelf's, HostSpam's and HostInvalid's own, a
// host's by the lists (and c's self names); false for anything else (a
// value that is no Result's Host, such as "(other)"). A reader uses it
// to tell the channel of a stored referrer host: the lists of the
// logtally that counted it may have been older.
func (c *Classifier) HostChannel(host string) (Channel, bool) {
	switch host {
	case HostDirect:
		return Direct, true
	case HostSelf:
		return Internal, true
	case HostSpam:
		return Spam, true
	case HostInvalid:
		return Other, true
	}
	ref := host
	switch {
	case strings.Contains(host, "://"):
	case foldWWW([]byte(host)) > 0:
		// www.example.org is the host of www.www.example.org: one www.
		// is folded.
		ref = "http://www." + host + "/"
	default:
		ref = "http://" + host + "/"
	}
	r := c.Classify([]byte(ref))
	if r.Host != host && r.Host != HostSelf && r.Host != HostSpam {
		return 0, false // not a host as Classify writes one
	}
	return r.Channel, true
}

// lookup classifies a referrer other than the last one.
func (c *Classifier) lookup(ref []byte) Result {
	s, e, k := parseHost(ref, &c.buf)
	if k == kindInvalid {
		return invalid
	}
	key := c.buf[s:e]
	if h, ok := recent.GetBytes(c.hosts, key); ok {
		c.hits++
		return h.r
	}
	c.misses++
	r, ks := c.classify(key, k)
	c.hosts.Put(ks, cached{ks, r})
	return r
}

// classify classifies a normalised host the cache did not hold. It
// returns the result and the string to key it by: the table's string for
// a listed host, else one allocation (also the Result's Host).
func (c *Classifier) classify(key []byte, k kind) (Result, string) {
	t := c.t
	var ks string
	if e, ok := t.exact[string(key)]; ok {
		ks = e.host
	} else {
		ks = string(key)
	}
	if c.isSelf(key, k) {
		return Result{HostSelf, Internal}, ks
	}
	if k != kindName {
		// An app or an IP address: the host alone, no parent domains.
		e := t.exact[ks]
		switch {
		case e.spam:
			return Result{HostSpam, Spam}, ks
		case e.ch != Direct:
			return Result{ks, e.ch}, ks
		}
		return Result{ks, Referral}, ks
	}
	// The host and its parent domains, most specific first: spam at any
	// level wins; else the first channel found.
	ch := Direct
	for i := 0; ; {
		if e, ok := t.exact[string(key[i:])]; ok {
			if e.spam {
				return Result{HostSpam, Spam}, ks
			}
			if ch == Direct {
				ch = e.ch
			}
		}
		j := bytes.IndexByte(key[i:], '.')
		if j < 0 {
			break
		}
		i += j + 1
	}
	if ch == Direct {
		ch = t.anyTLDChannel(key)
	}
	if ch == Direct {
		ch = Referral
	}
	return Result{ks, ch}, ks
}

// anyTLDChannel looks the host up in the "name.{}" entries: the host
// without its top-level domain (one label, or two when the second-level
// one is com, org, net, co, it or edu, as Matomo's lists define "{}"),
// then its parent domains; Direct if none matches.
func (t *tables) anyTLDChannel(h []byte) Channel {
	last := bytes.LastIndexByte(h, '.')
	if last < 0 {
		return Direct
	}
	cut := last
	if p := bytes.LastIndexByte(h[:last], '.'); p >= 0 {
		switch string(h[p+1 : last]) {
		case "com", "org", "net", "co", "it", "edu":
			cut = p
		}
	}
	base := h[:cut]
	for i := 0; ; {
		if ch, ok := t.anyTLD[string(base[i:])]; ok {
			return ch
		}
		j := bytes.IndexByte(base[i:], '.')
		if j < 0 {
			return Direct
		}
		i += j + 1
	}
}

// isSelf reports whether the normalised host is one of the site's names.
func (c *Classifier) isSelf(key []byte, k kind) bool {
	if c.self[string(key)] {
		return true
	}
	if k != kindName || len(c.selfAny) == 0 {
		return false
	}
	for i := 0; ; {
		if c.selfAny[string(key[i:])] {
			return true
		}
		j := bytes.IndexByte(key[i:], '.')
		if j < 0 {
			return false
		}
		i += j + 1
	}
}

// Len returns the number of hosts the Classifier remembers.
func (c *Classifier) Len() int { return c.hosts.Len() }

// Stats returns how many Classify calls found their host remembered
// (hits) and how many classified it (misses); no referrer and invalid
// ones are neither.
func (c *Classifier) Stats() (hits, misses uint64) { return c.hits, c.misses }
