package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGeoKeys(t *testing.T) {
	c, err := Parse("t.toml", []byte(opsSource))
	if err != nil {
		t.Fatal(err)
	}
	if c.Geo != (Geo{}) {
		t.Errorf("defaults: %+v, want no databases", c.Geo)
	}
	dir := t.TempDir()
	country, asn := filepath.Join(dir, "geoip"), filepath.Join(dir, "asn.mmdb")
	os.WriteFile(country, []byte("1,2,US\n"), 0o644)
	os.WriteFile(asn, []byte("x"), 0o644) // its content is geo.Open's to judge
	c, err = Parse("t.toml", []byte("[geo]\ncountry_db = \""+country+"\"\nasn_db = \""+asn+"\"\n"+opsSource))
	if err != nil {
		t.Fatal(err)
	}
	if c.Geo.CountryDB != country || c.Geo.ASNDB != asn {
		t.Errorf("decoded: %+v", c.Geo)
	}
}

// A [geo] file that is missing or not a regular file exits 2 naming the
// file, the line and the key (both when both are bad), through LoadReader
// too (logtally check) when the file has sources; a reader's file without
// [[source]] (serve on a dashboard host) is not checked; unknown keys are
// errors.
func TestGeoErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "none.mmdb")
	src := "[geo]\ncountry_db = \"" + missing + "\"\nasn_db = \"" + dir + "\"\n" + opsSource
	_, err := Parse("t.toml", []byte(src))
	for _, want := range []string{
		`t.toml:2: geo.country_db: "` + missing + `": not found`,
		`t.toml:3: geo.asn_db: "` + dir + `": must be a regular file (an MMDB or a Tor geoip file)`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v, want %q", err, want)
		}
	}
	var fe *FieldError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &fe) || fe.Field != "geo.country_db" {
		t.Errorf("%v does not wrap fs.ErrNotExist and its *FieldError", err)
	}
	if _, err := Parse("t.toml", []byte("[geo]\ncity_db = \"/x\"\n"+opsSource)); err == nil || !strings.Contains(err.Error(), "t.toml:2: geo.city_db: unknown key") {
		t.Errorf("unknown key: %v", err)
	}
	path := filepath.Join(dir, "dash.toml")
	os.WriteFile(path, []byte("[geo]\ncountry_db = \""+missing+"\"\n"), 0o600)
	if _, err := LoadReader(path); err != nil {
		t.Errorf("LoadReader of a file without sources checks [geo]: %v", err)
	}
	os.WriteFile(path, []byte("[geo]\ncountry_db = \""+missing+"\"\n"+opsSource), 0o600)
	if _, err := LoadReader(path); err == nil || !strings.Contains(err.Error(), "dash.toml:2: geo.country_db:") {
		t.Errorf("LoadReader of a file with sources (logtally check): %v", err)
	}
}

// TestDimensionsKeys: [dimensions] values is carried to every source's
// parser, and a value out of its range is an error naming the file, the
// line and the key.
func TestDimensionsKeys(t *testing.T) {
	c, err := Parse("t.toml", []byte("[dimensions]\nenabled = true\nvalues = 250\n"+opsSource))
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Pipeline(nil, nil, nil).Dims; d == nil || d.Values != 250 {
		t.Errorf("pipeline's dims: %+v, want values 250", d)
	}
	if c, err = Parse("t.toml", []byte(opsSource)); err != nil || c.Dimensions.Values != 100 || c.Dimensions.Enabled {
		t.Errorf("defaults: %+v, %v; want off, 100 values", c.Dimensions, err)
	}
	for _, v := range []string{"0", "1001", "-5"} {
		_, err := Parse("t.toml", []byte("[dimensions]\nenabled = true\nvalues = "+v+"\n"+opsSource))
		if want := "t.toml:3: dimensions.values: " + v + ": must be 1 to 1000"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("values = %s: error %v, want %q", v, err, want)
		}
	}
}
