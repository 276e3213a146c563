package geo

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"
)

// Place is where an address is: its country and its network. The strings
// are interned (see Lookup).
type Place struct {
	// Country is an upper-case ISO 3166-1 alpha-2 code, "" when unknown.
	Country string
	// ASN is the number of the network's autonomous system, 0 when
	// unknown.
	ASN uint32
	// Org is the autonomous system's organisation, "" when unknown.
	Org string
}

// Roles of a database.
const (
	roleCountry = "country"
	roleASN     = "asn"
)

// Formats of a database file, detected by content.
const (
	FormatMMDB = "mmdb" // MaxMind DB
	FormatTor  = "tor"  // Tor's geoip text ranges
)

// Info describes a database DB read.
type Info struct {
	// Role is "country" or "asn".
	Role string
	// Files are the files read: the path given, and for a Tor geoip file
	// the other family's file beside it (geoip6 beside geoip).
	Files []string
	// Format is FormatMMDB or FormatTor.
	Format string
	// Type is an MMDB's database_type ("GeoLite2-Country", "country
	// ipvAll"...) or "tor geoip".
	Type string
	// Built is when the data was built: an MMDB's build_epoch, a Tor
	// file's "Generated:" header or else its modification time.
	Built time.Time
	// Attribution is the line that credits the data's source, as its
	// licence asks (see Attribution).
	Attribution string
}

// DB is a country database and an ASN database, either of which may be
// absent. It is safe for concurrent use; Lookup allocates nothing once
// the records it meets were decoded (see Lookup).
type DB struct {
	countryMMDB *mmdbDB
	countryTor  *torDB
	asn         *mmdbDB
	infos       []Info
}

// MaxFileSize bounds a database file: each is read into memory whole.
const MaxFileSize = 1 << 30

// Open reads the country database at countryPath (an MMDB with
// country.iso_code or country_code, or a Tor geoip file) and the ASN
// database at asnPath (an MMDB with autonomous_system_number); either
// path may be "", and the DB then knows nothing of that kind. The format
// is told by the content, not the name. A Tor geoip file's companion for
// the other address family, named as Tor names them (geoip and geoip6),
// is read too when it is beside it.
//
// Errors name the file and what is wrong (not found, not an MMDB nor a
// Tor geoip file, a corrupt record, no country field...).
func Open(countryPath, asnPath string) (*DB, error) {
	d := &DB{}
	if countryPath != "" {
		if err := d.openCountry(countryPath); err != nil {
			return nil, err
		}
	}
	if asnPath != "" {
		data, err := readFile(asnPath)
		if err != nil {
			return nil, fmt.Errorf("geo: ASN database %s: %w", asnPath, err)
		}
		if !isMMDB(data) {
			if _, terr := parseTor(data); terr == nil {
				return nil, fmt.Errorf("geo: ASN database %s: a Tor geoip file holds countries only: give it as the country database", asnPath)
			}
			return nil, fmt.Errorf("geo: ASN database %s: not an MMDB file (no MMDB metadata at its end: truncated?)", asnPath)
		}
		m, err := openMMDB(data, roleASN)
		if err != nil {
			return nil, fmt.Errorf("geo: ASN database %s: %w", asnPath, err)
		}
		d.asn = m
		d.infos = append(d.infos, Info{Role: roleASN, Files: []string{asnPath}, Format: FormatMMDB, Type: m.typ,
			Built: m.built, Attribution: mmdbAttribution(roleASN, asnPath, m.typ)})
	}
	return d, nil
}

// openCountry reads the country database.
func (d *DB) openCountry(path string) error {
	data, err := readFile(path)
	if err != nil {
		return fmt.Errorf("geo: country database %s: %w", path, err)
	}
	if isMMDB(data) {
		m, err := openMMDB(data, roleCountry)
		if err != nil {
			return fmt.Errorf("geo: country database %s: %w", path, err)
		}
		d.countryMMDB = m
		d.infos = append(d.infos, Info{Role: roleCountry, Files: []string{path}, Format: FormatMMDB, Type: m.typ,
			Built: m.built, Attribution: mmdbAttribution(roleCountry, path, m.typ)})
		return nil
	}
	t, err := parseTor(data)
	if errors.Is(err, errNotTor) {
		return fmt.Errorf("geo: country database %s: neither an MMDB file (no MMDB metadata at its end: truncated?) nor a Tor geoip file", path)
	}
	if err != nil {
		return fmt.Errorf("geo: country database %s: Tor geoip file: %w", path, err)
	}
	files := []string{path}
	built := t.generated
	if built.IsZero() {
		built = modTime(path)
	}
	// The other family's file, as Tor names them: geoip and geoip6.
	other := ""
	switch {
	case len(t.v6) == 0 && len(t.v4) > 0:
		other = path + "6"
	case len(t.v4) == 0 && len(t.v6) > 0 && strings.HasSuffix(path, "6"):
		other = strings.TrimSuffix(path, "6")
	}
	if other != "" {
		if st, err := os.Stat(other); err == nil && st.Mode().IsRegular() {
			data, err := readFile(other)
			if err != nil {
				return fmt.Errorf("geo: country database %s: %w", other, err)
			}
			o, err := parseTor(data)
			if err != nil {
				return fmt.Errorf("geo: country database %s (beside %s): Tor geoip file: %w", other, path, err)
			}
			t.v4 = append(t.v4, o.v4...)
			t.v6 = append(t.v6, o.v6...)
			files = append(files, other)
		}
	}
	d.countryTor = t
	d.infos = append(d.infos, Info{Role: roleCountry, Files: files, Format: FormatTor, Type: "tor geoip",
		Built: built, Attribution: torAttribution(t)})
	return nil
}

// readFile reads a regular file of at most MaxFileSize bytes. Its errors
// do not repeat the path.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, pathless(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, pathless(err)
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if st.Size() > MaxFileSize {
		return nil, fmt.Errorf("larger than %d MiB", MaxFileSize>>20)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, pathless(err)
	}
	if len(data) == 0 {
		return nil, errors.New("empty file")
	}
	return data, nil
}

// pathless returns the error of a *fs.PathError without its path (the
// caller names the file), "not found" for a missing file.
func pathless(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, fs.ErrNotExist) {
			return fmt.Errorf("not found: %w", pe.Err)
		}
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

// modTime returns the modification time of path, zero if unknown.
func modTime(path string) time.Time {
	st, err := os.Stat(path)
	if err != nil {
		return time.Time{}
	}
	return st.ModTime().UTC()
}

// Lookup returns the place of addr (an IPv4-mapped IPv6 address is looked
// up as the IPv4 address; a zone is ignored). An unknown country is "",
// an unknown network 0 and "". The strings returned are interned:
// countries from a fixed table, organisations held by the ASN database's
// bounded record cache. So Lookup allocates nothing once the records
// (the networks' data, shared by many networks) it meets were decoded
// once; an organisation's string is new only when its record was evicted
// from that cache. A nil DB knows nothing.
func (d *DB) Lookup(addr netip.Addr) Place {
	var p Place
	if d == nil || !addr.IsValid() {
		return p
	}
	a := addr.Unmap().WithZone("")
	switch {
	case d.countryTor != nil:
		p.Country = d.countryTor.country(a)
	case d.countryMMDB != nil:
		if r := d.countryMMDB.lookup(a); r != nil {
			p.Country = r.country
		}
	}
	if d.asn != nil {
		if r := d.asn.lookup(a); r != nil {
			p.ASN, p.Org = r.asn, r.org
		}
	}
	return p
}

// Databases describes the databases read, the country one first.
func (d *DB) Databases() []Info {
	if d == nil {
		return nil
	}
	return d.infos
}

// Built returns when the country and the ASN databases were built (zero
// for a database not read or a build time not known), for an age metric.
func (d *DB) Built() (country, asn time.Time) {
	for _, i := range d.Databases() {
		if i.Role == roleCountry {
			country = i.Built
		} else {
			asn = i.Built
		}
	}
	return country, asn
}

// Attribution returns the lines that credit the sources of the databases
// read, as their licences ask (one per database, each line once): the
// dashboard shows them.
func (d *DB) Attribution() []string {
	var out []string
	for _, i := range d.Databases() {
		if !slices.Contains(out, i.Attribution) {
			out = append(out, i.Attribution)
		}
	}
	return out
}

// Errors returns how many lookups failed on a record that did not decode
// or a search tree that is corrupt (counted as unknown places).
func (d *DB) Errors() uint64 {
	if d == nil {
		return 0
	}
	var n uint64
	for _, m := range []*mmdbDB{d.countryMMDB, d.asn} {
		if m != nil {
			n += m.errs.Load()
		}
	}
	return n
}
