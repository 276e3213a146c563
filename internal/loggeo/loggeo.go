// Package loggeo is a test helper: it writes MMDB databases
// (WriteMMDB), and the country and ASN databases of loggen.Networks, MMDB files built with mmdbwriter (a
// GeoLite2-Country and a GeoLite2-ASN database), so that a test can name
// them in [geo] country_db and asn_db and logtally gives each of loggen's
// clients its network's country and AS.
//
// A network without a country (loggen.Network.Country "") is in the ASN
// database only, one without an AS number in the country database only;
// addresses in no network are in neither.
//
// Caveat: the networks are in reserved (documentation) space, which the
// databases hold only because they are written with
// IncludeReservedNetworks; real databases hold none of it.
package loggeo

import (
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"

	"github.com/logtally/logtally/internal/loggen"
)

// buildEpoch is the build time written in the databases.
const buildEpoch = 1780000000

// Write writes dir/loggen-country.mmdb and dir/loggen-asn.mmdb and returns
// their paths.
func Write(t testing.TB, dir string) (country, asn string) {
	t.Helper()
	country = write(t, filepath.Join(dir, "loggen-country.mmdb"), "GeoLite2-Country", func(n loggen.Network) mmdbtype.Map {
		if n.Country == "" {
			return nil
		}
		return mmdbtype.Map{"country": mmdbtype.Map{"iso_code": mmdbtype.String(n.Country)}}
	})
	asn = write(t, filepath.Join(dir, "loggen-asn.mmdb"), "GeoLite2-ASN", func(n loggen.Network) mmdbtype.Map {
		if n.ASN == 0 {
			return nil
		}
		return mmdbtype.Map{
			"autonomous_system_number":       mmdbtype.Uint32(n.ASN),
			"autonomous_system_organization": mmdbtype.String(n.Org),
		}
	})
	return country, asn
}

// write writes an MMDB of type typ at path holding each network's record
// (none: the network is left out).
func write(t testing.TB, path, typ string, record func(loggen.Network) mmdbtype.Map) string {
	t.Helper()
	var recs []Record
	for _, n := range loggen.Networks {
		if rec := record(n); rec != nil {
			recs = append(recs, Record{n.Prefix, rec})
		}
	}
	return WriteMMDB(t, path, MMDB{Type: typ}, recs)
}

// Record is a network of an MMDB database and its data.
type Record struct {
	Prefix netip.Prefix
	Data   mmdbtype.Map
}

// MMDB says what WriteMMDB writes.
type MMDB struct {
	Type  string    // the database type: "GeoLite2-Country", "GeoLite2-ASN", "DBIP-Country-Lite"...
	Built time.Time // the build time; zero: 2026-05-28 (Unix 1780000000)
	IPv4  bool      // an IPv4-only database
	Alias bool      // keep mmdbwriter's IPv4 aliases (::ffff:0:0/96...), which some files leave out
}

// WriteMMDB writes an MMDB database of o holding recs at path (written
// beside and renamed, as updaters do) and returns path. Reserved networks
// (the documentation prefixes tests use) are kept.
func WriteMMDB(t testing.TB, path string, o MMDB, recs []Record) string {
	t.Helper()
	built := int64(buildEpoch)
	if !o.Built.IsZero() {
		built = o.Built.Unix()
	}
	opts := mmdbwriter.Options{DatabaseType: o.Type, RecordSize: 24, IncludeReservedNetworks: true,
		DisableIPv4Aliasing: !o.Alias, BuildEpoch: built}
	if o.IPv4 {
		opts.IPVersion = 4
	}
	tree, err := mmdbwriter.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		ipn := &net.IPNet{IP: r.Prefix.Addr().AsSlice(), Mask: net.CIDRMask(r.Prefix.Bits(), r.Prefix.Addr().BitLen())}
		if err := tree.Insert(ipn, r.Data); err != nil {
			t.Fatalf("%s: %v: %v", o.Type, r.Prefix, err)
		}
	}
	tmp := path + ".new"
	f, err := os.Create(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tree.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	return path
}
