package geo

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"time"
)

// torDB is a country database in Tor's geoip text format (Debian's
// tor-geoipdb: /usr/share/tor/geoip and geoip6): after '#' comments, one
// range a line, "FIRST,LAST,CC", where FIRST and LAST are IPv4 addresses
// written as decimal integers (geoip) or IPv6 addresses (geoip6). Both
// kinds may be in one file. Ranges are inclusive, sorted here by their
// first address, and may not overlap.
type torDB struct {
	v4 []range4
	v6 []range6
	// header is what the file's comments say of its source.
	generated time.Time // "# Generated: <RFC 1123 date>", zero if none
	vendor    string    // "# Vendor: ...", "" if none
	licence   string    // "# License: ...", "" if none
}

// range4 is an IPv4 range, its country an index in countries.
type range4 struct {
	first, last uint32
	country     uint16
}

// range6 is an IPv6 range, its country an index in countries.
type range6 struct {
	first, last u128
	country     uint16
}

// u128 is an IPv6 address as a number.
type u128 struct{ hi, lo uint64 }

func (x u128) cmp(y u128) int {
	if c := cmp.Compare(x.hi, y.hi); c != 0 {
		return c
	}
	return cmp.Compare(x.lo, y.lo)
}

func toU128(a netip.Addr) u128 {
	b := a.As16()
	return u128{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])}
}

// errNotTor is parseTor's error for a file whose first data line is not a
// Tor geoip range: not this format at all.
var errNotTor = errors.New("not a tor geoip file")

// maxHeaderValue bounds the vendor and licence strings kept from the
// header.
const maxHeaderValue = 80

// parseTor reads a Tor geoip file. Its errors name the line and what is
// wrong, never the line's text. Lines of unknown countries ("??") are
// kept out: an address no range holds is unknown too.
func parseTor(data []byte) (*torDB, error) {
	t := &torDB{}
	seen := false // a data line was read
	for n := 1; len(data) > 0; n++ {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte{'\n'})
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if line[0] == '#' {
			if !seen {
				t.header(line)
			}
			continue
		}
		a, rest, ok1 := bytes.Cut(line, []byte{','})
		b, cc, ok2 := bytes.Cut(rest, []byte{','})
		if !ok1 || !ok2 {
			if !seen {
				return nil, errNotTor
			}
			return nil, fmt.Errorf("line %d: want FIRST,LAST,COUNTRY", n)
		}
		if len(cc) != 2 {
			if !seen {
				return nil, errNotTor
			}
			return nil, fmt.Errorf("line %d: the country is not a two-letter code", n)
		}
		country, known := countryIndex(cc)
		if bytes.IndexByte(a, ':') >= 0 || bytes.IndexByte(b, ':') >= 0 {
			first, err1 := netip.ParseAddr(string(a))
			last, err2 := netip.ParseAddr(string(b))
			if err1 != nil || err2 != nil || !first.Is6() || !last.Is6() || first.Zone() != "" || last.Zone() != "" {
				if !seen {
					return nil, errNotTor
				}
				return nil, fmt.Errorf("line %d: want two IPv6 addresses", n)
			}
			if last.Less(first) {
				return nil, fmt.Errorf("line %d: the range ends before it starts", n)
			}
			seen = true
			if known {
				t.v6 = append(t.v6, range6{toU128(first), toU128(last), country})
			}
			continue
		}
		first, err1 := strconv.ParseUint(string(a), 10, 32)
		last, err2 := strconv.ParseUint(string(b), 10, 32)
		if err1 != nil || err2 != nil {
			if !seen {
				return nil, errNotTor
			}
			return nil, fmt.Errorf("line %d: want two IPv4 addresses as integers (0 to 4294967295)", n)
		}
		if last < first {
			return nil, fmt.Errorf("line %d: the range ends before it starts", n)
		}
		seen = true
		if known {
			t.v4 = append(t.v4, range4{uint32(first), uint32(last), country})
		}
	}
	if !seen {
		return nil, errNotTor
	}
	slices.SortFunc(t.v4, func(x, y range4) int { return cmp.Compare(x.first, y.first) })
	slices.SortFunc(t.v6, func(x, y range6) int { return x.first.cmp(y.first) })
	for i := 1; i < len(t.v4); i++ {
		if t.v4[i].first <= t.v4[i-1].last {
			return nil, fmt.Errorf("IPv4 ranges overlap (%d of %d)", i, len(t.v4))
		}
	}
	for i := 1; i < len(t.v6); i++ {
		if t.v6[i].first.cmp(t.v6[i-1].last) <= 0 {
			return nil, fmt.Errorf("IPv6 ranges overlap (%d of %d)", i, len(t.v6))
		}
	}
	return t, nil
}

// header reads a comment line of the file's header ("# Generated: ...",
// "# Vendor: ...", "# License: ...": the IPFire export's).
func (t *torDB) header(line []byte) {
	key, val, ok := bytes.Cut(bytes.TrimSpace(line[1:]), []byte{':'})
	if !ok {
		return
	}
	val = bytes.TrimSpace(val)
	if len(val) > maxHeaderValue || !printable(val) {
		return
	}
	switch string(bytes.TrimSpace(key)) {
	case "Generated":
		if g, err := time.Parse(time.RFC1123, string(val)); err == nil {
			t.generated = g.UTC()
		}
	case "Vendor":
		t.vendor = string(val)
	case "License":
		t.licence = string(val)
	}
}

// printable reports whether b is printable ASCII.
func printable(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// country returns the country of a (unmapped), "" if no range holds it.
func (t *torDB) country(a netip.Addr) string {
	if a.Is4() {
		v := a.As4()
		x := uint32(v[0])<<24 | uint32(v[1])<<16 | uint32(v[2])<<8 | uint32(v[3])
		// The first range starting after x; the one before may hold it.
		i, _ := slices.BinarySearchFunc(t.v4, x, func(r range4, x uint32) int {
			if r.first <= x {
				return -1
			}
			return 1
		})
		if i > 0 && x <= t.v4[i-1].last {
			return countries[t.v4[i-1].country]
		}
		return ""
	}
	x := toU128(a)
	i, _ := slices.BinarySearchFunc(t.v6, x, func(r range6, x u128) int {
		if r.first.cmp(x) <= 0 {
			return -1
		}
		return 1
	})
	if i > 0 && t.v6[i-1].last.cmp(x) >= 0 {
		return countries[t.v6[i-1].country]
	}
	return ""
}
