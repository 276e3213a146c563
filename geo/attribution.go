package geo

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// The attribution lines of the sources logtally recognises, as their
// licences ask (see doc.go).
const (
	attrMaxMind  = "This product includes GeoLite2 data created by MaxMind, available from https://www.maxmind.com."
	attrDBIP     = "IP Geolocation by DB-IP (https://db-ip.com), licensed under CC BY 4.0."
	attrNRO      = "Country data from the Regional Internet Registries' statistics published by the NRO (https://www.nro.net), licensed under CC BY 4.0, compiled by ip-location-db."
	attrASN      = "ASN data from RouteViews (https://www.routeviews.org), the NRO (https://www.nro.net) and DB-IP (https://db-ip.com), licensed under CC BY 4.0, compiled by ip-location-db."
	attrIPtoASN  = "Country data from iptoasn.com (https://iptoasn.com), PDDL 1.0, compiled by ip-location-db."
	attrIPFire   = "Country data: IPFire Location database (https://location.ipfire.org), licensed under CC BY-SA 4.0, as converted by Tor."
	attrGeoIP2   = "%s data: MaxMind %s."
	attrGeneric  = "%s data: MMDB database %q."
	attrTorOther = "Country data: Tor geoip file"
)

// ipLocationDBType is the database_type of the @ip-location-db files
// (written by sapics/ip-location-to-mmdb): "country ipv4", "asn ipvAll"...
// It names no source: the file's name (the package's) tells it.
var ipLocationDBType = regexp.MustCompile(`^(country|asn|city) ipv(4|6|All)$`)

// roleTitle names a role in an attribution line.
func roleTitle(role string) string {
	if role == roleASN {
		return "ASN"
	}
	return "Country"
}

// mmdbAttribution returns the attribution line of an MMDB database of
// type typ read from path for role: a known source by its database_type,
// an @ip-location-db file by its name, else a line naming the type.
func mmdbAttribution(role, path, typ string) string {
	switch {
	case strings.HasPrefix(typ, "GeoLite2-"):
		return attrMaxMind
	case strings.HasPrefix(typ, "GeoIP2-"), strings.HasPrefix(typ, "GeoIP-"):
		return fmt.Sprintf(attrGeoIP2, roleTitle(role), typ)
	case strings.HasPrefix(strings.ToUpper(typ), "DBIP-"):
		return attrDBIP
	case ipLocationDBType.MatchString(typ):
		base := strings.ToLower(filepath.Base(path))
		switch {
		case strings.HasPrefix(base, "geolite2-"):
			return attrMaxMind
		case strings.HasPrefix(base, "dbip-"):
			return attrDBIP
		case strings.HasPrefix(base, "iptoasn-"):
			return attrIPtoASN
		case strings.HasPrefix(base, "geo-whois-asn-country"), strings.HasPrefix(base, "asn-country"),
			strings.HasPrefix(base, "geo-asn-country"):
			return attrNRO
		case strings.HasPrefix(base, "asn.") || strings.HasPrefix(base, "asn-ipv"):
			return attrASN
		}
	}
	return fmt.Sprintf(attrGeneric, roleTitle(role), typ)
}

// torAttribution returns the attribution line of a Tor geoip file, from
// its header: the IPFire export's (what Debian's tor-geoipdb holds today),
// else a line with the vendor and licence the header names.
func torAttribution(t *torDB) string {
	if strings.Contains(t.vendor, "IPFire") {
		return attrIPFire
	}
	s := attrTorOther
	if t.vendor != "" {
		s += ", " + t.vendor
	}
	if t.licence != "" {
		s += ", licensed under " + t.licence
	}
	return s + "."
}
