package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/logtally/logtally/aggregate"
	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/digits"
	"github.com/logtally/logtally/dims"
	"github.com/logtally/logtally/geo"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/query"
)

// dimsConfig returns the counts by dimension as the daemon's pipeline
// makes them from cfg, with its [geo] databases read once: for the
// commands that read logs without the daemon (replay -dry-run, verify).
// Nil when [dimensions] is off.
func dimsConfig(cfg config.Config) (*parser.DimsConfig, error) {
	d := cfg.DimsConfig()
	if d == nil || cfg.Geo.CountryDB == "" && cfg.Geo.ASNDB == "" {
		return d, nil
	}
	h, err := geo.OpenHolder(cfg.Geo.CountryDB, cfg.Geo.ASNDB)
	if err != nil {
		return nil, err
	}
	d.Geo = h
	return d, nil
}

// dimsShown is how many values of each dimension a dry run's summary
// names.
const dimsShown = 3

// writeDimsSummary writes the hits of a dry run by dimension: for each,
// the values counted by name, its dimsShown values with the most hits
// (ties by value; names as query shows them) and the hits of the rest.
func writeDimsSummary(w io.Writer, by *aggregate.DimHits) error {
	type value struct {
		name string
		n    uint64
	}
	for d := range dims.N {
		vs := make([]value, 0, len(by[d]))
		for v, n := range by[d] {
			vs = append(vs, value{v, n})
		}
		slices.SortFunc(vs, func(x, y value) int { return cmp.Or(cmp.Compare(y.n, x.n), cmp.Compare(x.name, y.name)) })
		unit := " values"
		if len(vs) == 1 {
			unit = " value"
		}
		if _, err := fmt.Fprintf(w, "%-26s %12s%s\n", "by "+d.String(), digits.Group(uint64(len(vs))), unit); err != nil {
			return err
		}
		var rest uint64
		for i, v := range vs {
			if i >= dimsShown {
				rest += v.n
				continue
			}
			fmt.Fprintf(w, "  %-24s %12s\n", query.Shown(v.name), digits.Group(v.n))
		}
		if len(vs) > dimsShown {
			fmt.Fprintf(w, "  %-24s %12s\n", digits.Group(uint64(len(vs)-dimsShown))+" more", digits.Group(rest))
		}
	}
	return nil
}
