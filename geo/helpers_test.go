package geo

import (
	"net/netip"
	"path/filepath"
	"testing"
	"time"
	"unsafe"

	"github.com/logtally/logtally/internal/loggeo"
	"github.com/maxmind/mmdbwriter/mmdbtype"
)

// network is one network of a test database and its record.
type network struct {
	cidr string
	rec  mmdbtype.Map
}

// testBuildEpoch is the build time written in the test databases.
const testBuildEpoch = 1780000000

// writeMMDB writes an MMDB of type typ holding nets in dir/name and
// returns its path. ipv4 makes an IPv4-only database; alias keeps
// mmdbwriter's IPv4 aliases (::ffff:0:0/96 and the like) that the
// @ip-location-db files leave out.
func writeMMDB(t testing.TB, dir, name, typ string, ipv4, alias bool, nets []network) string {
	t.Helper()
	recs := make([]loggeo.Record, len(nets))
	for i, n := range nets {
		recs[i] = loggeo.Record{Prefix: netip.MustParsePrefix(n.cidr), Data: n.rec}
	}
	return loggeo.WriteMMDB(t, filepath.Join(dir, name), loggeo.MMDB{Type: typ, Built: time.Unix(testBuildEpoch, 0), IPv4: ipv4, Alias: alias}, recs)
}

// geolite2Country is a GeoLite2-Country record.
func geolite2Country(cc string) mmdbtype.Map {
	return mmdbtype.Map{
		"continent": mmdbtype.Map{"code": mmdbtype.String("EU")},
		"country":   mmdbtype.Map{"iso_code": mmdbtype.String(cc), "names": mmdbtype.Map{"en": mmdbtype.String("x")}},
	}
}

// asnRecord is a GeoLite2-ASN (and @ip-location-db asn) record.
func asnRecord(asn uint32, org string) mmdbtype.Map {
	return mmdbtype.Map{
		"autonomous_system_number":       mmdbtype.Uint32(asn),
		"autonomous_system_organization": mmdbtype.String(org),
	}
}

// ipLocationCountry is an @ip-location-db country record.
func ipLocationCountry(cc string) mmdbtype.Map {
	return mmdbtype.Map{"country_code": mmdbtype.String(cc)}
}

func addr(s string) netip.Addr { return netip.MustParseAddr(s) }

var netipZero netip.Addr

// unsafeData returns the address of s's bytes, to tell interned strings.
func unsafeData(s string) *byte { return unsafe.StringData(s) }
