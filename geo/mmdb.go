package geo

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/oschwald/maxminddb-golang/v2"
)

// mmdbMarker starts an MMDB file's metadata section, within its last
// 128 KiB.
var mmdbMarker = []byte("\xAB\xCD\xEFMaxMind.com")

// isMMDB reports whether data looks like an MMDB file (its metadata
// marker is where the format puts it).
func isMMDB(data []byte) bool {
	tail := data[max(0, len(data)-128<<10):]
	return bytes.Contains(tail, mmdbMarker)
}

// mmdbDB is an MMDB database (MaxMind GeoLite2/GeoIP2, DB-IP Lite, the
// @ip-location-db files), read into memory whole: no mapping of a file
// that an update could truncate under the daemon.
type mmdbDB struct {
	r     *maxminddb.Reader
	typ   string    // metadata database_type, printable, bounded
	built time.Time // metadata build_epoch
	ipv4  bool      // an IPv4-only database: IPv6 addresses are unknown
	// records remembers the decoded records by their offset in the data
	// section (networks share records: a country database has a few
	// hundred, an ASN database about 100,000), so that a lookup decodes
	// only a record it has not seen lately and allocates nothing
	// otherwise. Direct-mapped and lock-free: a slot holds the last
	// record hashed to it.
	records []atomic.Pointer[record]
	shift   uint
	errs    atomic.Uint64
}

// record is what a database record gives: interned strings.
type record struct {
	off     uintptr
	country string
	asn     uint32
	org     string
}

// fields are the record fields read: GeoLite2/GeoIP2/DB-IP Lite
// (country.iso_code, registered_country.iso_code for networks without a
// country, autonomous_system_number, autonomous_system_organization) and
// @ip-location-db (country_code, and the ASN fields under the same names).
type fields struct {
	Country struct {
		ISOCode string `maxminddb:"iso_code"`
	} `maxminddb:"country"`
	Registered struct {
		ISOCode string `maxminddb:"iso_code"`
	} `maxminddb:"registered_country"`
	CountryCode string `maxminddb:"country_code"`
	ASN         uint64 `maxminddb:"autonomous_system_number"`
	Org         string `maxminddb:"autonomous_system_organization"`
}

// Record cache sizes (slots, powers of two): the country databases' few
// hundred records all fit; an ASN database's busiest networks do.
const (
	countryRecordSlots = 1 << 12
	asnRecordSlots     = 1 << 16
)

// MaxOrgLen bounds an organisation name, in bytes (cut at a character
// boundary): a dimension value is a short label.
const MaxOrgLen = 96

// errNoField is openMMDB's error for a database lacking the role's fields.
var errNoField = errors.New("no field")

// openMMDB reads the MMDB file held in data for role (roleCountry or
// roleASN) and checks, on its first networks, that its records decode
// and carry the role's fields.
func openMMDB(data []byte, role string) (*mmdbDB, error) {
	r, err := maxminddb.OpenBytes(data)
	if err != nil {
		return nil, fmt.Errorf("not a valid MMDB file: %w", err)
	}
	m := &mmdbDB{r: r, typ: clean(r.Metadata.DatabaseType, 64), ipv4: r.Metadata.IPVersion == 4}
	if e := uint64(r.Metadata.BuildEpoch); e > 0 && e < 1<<40 {
		m.built = time.Unix(int64(e), 0).UTC()
	}
	slots := countryRecordSlots
	if role == roleASN {
		slots = asnRecordSlots
	}
	m.records = make([]atomic.Pointer[record], slots)
	m.shift = uint(64 - bitsOf(slots))
	if err := m.check(role); err != nil {
		return nil, err
	}
	return m, nil
}

// bitsOf returns log2 of n, a power of two.
func bitsOf(n int) int {
	b := 0
	for n > 1 {
		n >>= 1
		b++
	}
	return b
}

// sampleNetworks is how many networks check decodes.
const sampleNetworks = 2000

// check decodes the records of the first networks and looks for the
// role's fields: an error if a record does not decode, if there is no
// network, or if no record has the fields (a country database given as
// asn_db, or the reverse).
func (m *mmdbDB) check(role string) error {
	n, country, asn := 0, 0, 0
	for res := range m.r.Networks() {
		var v map[string]any
		if err := res.Decode(&v); err != nil {
			return fmt.Errorf("a record does not decode (corrupt or truncated file): %w", err)
		}
		if s, ok := v["country_code"].(string); ok && s != "" {
			country++
		} else if c, ok := v["country"].(map[string]any); ok && c["iso_code"] != nil {
			country++
		} else if c, ok := v["registered_country"].(map[string]any); ok && c["iso_code"] != nil {
			country++
		}
		if _, ok := v["autonomous_system_number"]; ok {
			asn++
		}
		if n++; n == sampleNetworks {
			break
		}
	}
	switch {
	case n == 0:
		return errors.New("the database holds no network")
	case role == roleCountry && country == 0 && asn > 0:
		return fmt.Errorf("%w: an ASN database (type %q), not a country database: give it as the ASN database", errNoField, m.typ)
	case role == roleCountry && country == 0:
		return fmt.Errorf("%w: no country field (country.iso_code or country_code) in its records (type %q)", errNoField, m.typ)
	case role == roleASN && asn == 0 && country > 0:
		return fmt.Errorf("%w: a country database (type %q), not an ASN database: give it as the country database", errNoField, m.typ)
	case role == roleASN && asn == 0:
		return fmt.Errorf("%w: no autonomous_system_number field in its records (type %q)", errNoField, m.typ)
	}
	return nil
}

// lookup returns the record of a (not IPv4-mapped), nil when the database
// has none. A record seen lately is not decoded again: no allocation.
func (m *mmdbDB) lookup(a netip.Addr) *record {
	if m.ipv4 && a.Is6() {
		return nil
	}
	res := m.r.Lookup(a)
	if res.Err() != nil {
		m.errs.Add(1)
		return nil
	}
	if !res.Found() {
		return nil
	}
	off := res.Offset()
	slot := &m.records[(uint64(off)*0x9E3779B97F4A7C15)>>m.shift]
	if e := slot.Load(); e != nil && e.off == off {
		return e
	}
	var f fields
	if err := res.Decode(&f); err != nil {
		m.errs.Add(1)
		return nil
	}
	e := &record{off: off, country: Country(f.Country.ISOCode)}
	if e.country == "" {
		e.country = Country(f.CountryCode)
	}
	if e.country == "" {
		e.country = Country(f.Registered.ISOCode)
	}
	if f.ASN <= 1<<32-1 {
		e.asn = uint32(f.ASN)
	}
	e.org = clean(f.Org, MaxOrgLen)
	slot.Store(e)
	return e
}

// clean returns s as valid UTF-8 without control characters, spaces
// trimmed, cut to at most n bytes at a character boundary.
func clean(s string, n int) string {
	s = strings.TrimSpace(strings.ToValidUTF8(s, "\uFFFD"))
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
	if len(s) > n {
		i := n
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = strings.TrimSpace(s[:i])
	}
	return s
}
