// Package loggeo is a test helper: it writes the country and ASN
// databases of loggen.Networks, MMDB files built with mmdbwriter (a
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
	"os"
	"path/filepath"
	"testing"

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
	tree, err := mmdbwriter.New(mmdbwriter.Options{DatabaseType: typ, RecordSize: 24, IncludeReservedNetworks: true,
		DisableIPv4Aliasing: true, BuildEpoch: buildEpoch})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range loggen.Networks {
		rec := record(n)
		if rec == nil {
			continue
		}
		ipn := &net.IPNet{IP: n.Prefix.Addr().AsSlice(), Mask: net.CIDRMask(n.Prefix.Bits(), n.Prefix.Addr().BitLen())}
		if err := tree.Insert(ipn, rec); err != nil {
			t.Fatalf("%s: %v: %v", typ, n.Prefix, err)
		}
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tree.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}
