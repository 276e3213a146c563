package main

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/geo"
)

// serve shows the attribution lines of the [geo] databases it can open
// (the licences ask for them), and none, with a warning, where the files
// are not on its host; none without [geo].
func TestServeGeoAttribution(t *testing.T) {
	tor := filepath.Join("..", "..", "geo", "testdata", "tor", "geoip")
	db, err := geo.Open(tor, "")
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	if got := geoAttribution(config.Geo{CountryDB: tor}, log); len(got) == 0 || !slices.Equal(got, db.Attribution()) {
		t.Errorf("attribution %q, want %q", got, db.Attribution())
	}
	if got := geoAttribution(config.Geo{}, log); got != nil || logs.Len() != 0 {
		t.Errorf("without [geo]: %q, logged %q", got, logs.String())
	}
	if got := geoAttribution(config.Geo{ASNDB: filepath.Join(t.TempDir(), "missing.mmdb")}, log); got != nil ||
		!strings.Contains(logs.String(), "no attribution") {
		t.Errorf("a missing file: %q, logged %q", got, logs.String())
	}
}
