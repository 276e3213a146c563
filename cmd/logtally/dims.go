package main

import (
	"fmt"
	"io"

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
// the values counted by name, and its dimsShown values with the most hits
// and dims.Other with the rest, as query -by -top shows them
// (query.BreakdownOf; names as query shows them).
func writeDimsSummary(w io.Writer, by *aggregate.DimHits) error {
	for d := range dims.N {
		vals := make(map[string]int64, len(by[d]))
		var views int64
		for v, n := range by[d] {
			vals[v] = int64(n)
			views += int64(n)
		}
		named := len(vals)
		if _, ok := vals[dims.Other]; ok {
			named--
		}
		unit := " values"
		if named == 1 {
			unit = " value"
		}
		if _, err := fmt.Fprintf(w, "%-26s %12s%s\n", "by "+d.String(), digits.Group(uint64(named)), unit); err != nil {
			return err
		}
		for _, v := range query.BreakdownOf(query.Request{Top: dimsShown}, d, views, vals).Values {
			fmt.Fprintf(w, "  %-24s %12s\n", query.Shown(v.Value), digits.Group(uint64(v.Views)))
		}
	}
	return nil
}
