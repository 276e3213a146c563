package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/BurntSushi/toml"
	"github.com/logtally/logtally/parser"
)

// Geo is the [geo] table: the databases that tell the country and the
// network of a client address (package geo). Both are optional.
type Geo struct {
	// CountryDB is a country database: an MMDB file (GeoLite2-Country,
	// DB-IP Lite, @ip-location-db) or a Tor geoip file
	// (/usr/share/tor/geoip from Debian's tor-geoipdb, geoip6 beside it
	// read too). Empty: no countries.
	CountryDB string `toml:"country_db"`
	// ASNDB is an ASN database: an MMDB file (GeoLite2-ASN, DB-IP ASN
	// Lite, @ip-location-db asn). Empty: no networks.
	ASNDB string `toml:"asn_db"`
}

// Dimensions is the [dimensions] table: whether each hit is counted by
// where it came from (package dims: referrer, channel, country, network,
// browser, OS, device, crawler), per site and day in the site totals.
type Dimensions struct {
	// Enabled turns the counts on (default false).
	Enabled bool `toml:"enabled"`
	// Values are the values of the open dimensions (referrer, network,
	// crawler) each host counts by name per site and day: the rest count
	// as "(other)" (dims.LimitsFor). Default dims.DefaultValues.
	Values int `toml:"values"`
}

// maxDimValues bounds [dimensions] values: 1000 values of eight
// dimensions from each host keep a busy site day's document within its
// 2 MiB (bucket.SiteSourcesLimit) for a few hosts; past it, values fold.
const maxDimValues = 1000

// checkGeo checks that the [geo] files named exist and are regular
// files, so that `logtally check` and a start name a missing file at its
// key's line; their content is read, and judged, by geo.Open when the
// daemon starts. A reader's file without [[source]] (LoadReader: serve
// or query on a dashboard host, where the files need not be) is not
// checked.
func (cfg *Config) checkGeo(name string, data []byte) error {
	if cfg.readsOnly && len(cfg.Sources) == 0 {
		return nil
	}
	var errs []error
	for _, f := range []struct{ key, path string }{{"country_db", cfg.Geo.CountryDB}, {"asn_db", cfg.Geo.ASNDB}} {
		if f.path == "" {
			continue
		}
		fe := &FieldError{Field: "geo." + f.key}
		st, err := os.Stat(f.path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			fe.Problem, fe.Err = fmt.Sprintf("%q: not found", f.path), err
		case err != nil:
			fe.Problem, fe.Err = fmt.Sprintf("%q: %v", f.path, err), err
		case !st.Mode().IsRegular():
			fe.Problem = fmt.Sprintf("%q: must be a regular file (an MMDB or a Tor geoip file)", f.path)
		default:
			continue
		}
		errs = append(errs, problem(name, data, toml.Key{"geo", f.key}, fe))
	}
	return errors.Join(errs...)
}

// DimsConfig returns the parser's counts by dimension as [dimensions]
// sets them, without the [geo] databases (whoever reads the logs opens
// them), or nil when [dimensions] is off.
func (c Config) DimsConfig() *parser.DimsConfig {
	if !c.Dimensions.Enabled {
		return nil
	}
	return &parser.DimsConfig{Values: c.Dimensions.Values}
}
