package config

import (
	"math"
	"strings"
	"testing"
)

func TestSize(t *testing.T) {
	for in, want := range map[string]Size{
		"1GiB": 1 << 30, "512MiB": 512 << 20, "2GB": 2e9, "1048576": 1 << 20, "1.5KiB": 1536, "0": 0,
		"4.35KB": 4350, "1.9B": 1, " 3 kib ": 3 << 10, "0.0000001GiB": 107,
		"9223372036854775807": math.MaxInt64, "8388607TiB": 8388607 << 40, "8388607.999999TiB": 9223372036853676296,
	} {
		var s Size
		if err := s.UnmarshalText([]byte(in)); err != nil || s != want {
			t.Errorf("%q -> %d, %v; want %d", in, s, err, want)
		}
	}
	for in, want := range map[string]string{
		"9999999999TiB":           `"9999999999TiB" is too large (max 8 EiB)`,
		"8388608TiB":              `"8388608TiB" is too large (max 8 EiB)`,
		"9223372036854775808":     `"9223372036854775808" is too large (max 8 EiB)`,
		"99999999999999999999999": `"99999999999999999999999" is too large (max 8 EiB)`,
		"9223372036.854775808GB":  `"9223372036.854775808GB" is too large (max 8 EiB)`,
		"-1":                      `"-1" is negative`,
		"-5GiB":                   `"-5GiB" is negative`,
		"-":                       `bad size "-"`,
		"1 furlong":               `bad size "1 furlong": unknown unit "furlong"`,
	} {
		s := Size(42)
		if err := s.UnmarshalText([]byte(in)); err == nil || !strings.HasPrefix(err.Error(), want) || s != 42 {
			t.Errorf("%q -> %d, %v; want error %q and no change", in, s, err, want)
		}
	}
	if Size(1<<30).String() != "1GiB" {
		t.Errorf("String() = %s", Size(1<<30))
	}
}

// TestSizeErrorsNameKeyAndLine checks that a size that overflows, or is
// negative, is reported with its key and line, whatever its TOML type.
func TestSizeErrorsNameKeyAndLine(t *testing.T) {
	for value, want := range map[string]string{
		`"9999999999TiB"`: `t.toml:3: buffer.max_size: "9999999999TiB" is too large (max 8 EiB)`,
		`1e30`:            `t.toml:3: buffer.max_size: "1000000000000000019884624838656.000000" is too large (max 8 EiB)`,
		`-5`:              `t.toml:3: buffer.max_size: "-5" is negative`,
		`"-1GiB"`:         `t.toml:3: buffer.max_size: "-1GiB" is negative`,
	} {
		src := "[[source]]\nsite = \"s\"\npaths = [\"/x\"]\nformat = \"common\"\n"
		src = "[buffer]\n# the limit\nmax_size = " + value + "\n" + src
		_, err := Parse("t.toml", []byte(src))
		if err == nil || err.Error() != want {
			t.Errorf("max_size = %s: %v\nwant %s", value, err, want)
		}
	}
}

func TestMongoUser(t *testing.T) {
	for uri, want := range map[string]string{
		"mongodb://alice:s3cret@db.example:27017/": "alice",
		"mongodb://db.example/":                    "",
		"mongodb+srv://bob@cluster.example/":       "bob",
	} {
		if got := (Mongo{URI: uri}).User(); got != want {
			t.Errorf("User of %s = %q, want %q", redactURI(uri), got, want)
		}
	}
}
