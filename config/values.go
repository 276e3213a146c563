package config

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Duration is a time.Duration written as a string with a unit ("10s").
type Duration time.Duration

// UnmarshalText parses "10s"; a bare number is refused, but for "0",
// which needs no unit.
func (d *Duration) UnmarshalText(b []byte) error {
	s := string(b)
	if s == "0" {
		*d = 0
		return nil
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return fmt.Errorf("duration %s has no unit: write it as a string such as \"%ss\"", s, s)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("bad duration %q: want a string such as \"10s\" or \"1m30s\"", s)
	}
	*d = Duration(v)
	return nil
}

// MarshalText formats the duration as time.Duration does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// String formats the duration as time.Duration does.
func (d Duration) String() string { return time.Duration(d).String() }

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Size is a byte count written as "512MiB", "1GB" or a number of bytes.
type Size int64

var sizeUnits = map[string]int64{
	"": 1, "b": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}

var sizeRe = regexp.MustCompile(`^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*$`)

// maxSize is the largest Size, 8 EiB less one byte.
var maxSize = new(big.Rat).SetInt64(math.MaxInt64)

// UnmarshalText parses a size such as "1GiB" or "1.5KiB", exactly; a
// fraction of a byte is dropped. Negative sizes and sizes over 8 EiB are
// errors.
func (s *Size) UnmarshalText(b []byte) error {
	if t := strings.TrimSpace(string(b)); strings.HasPrefix(t, "-") && sizeRe.MatchString(t[1:]) {
		return fmt.Errorf("%q is negative", b)
	}
	m := sizeRe.FindStringSubmatch(string(b))
	if m == nil {
		return fmt.Errorf("bad size %q: want a string such as \"512MiB\" or \"1GiB\"", b)
	}
	unit, ok := sizeUnits[strings.ToLower(m[2])]
	if !ok {
		return fmt.Errorf("bad size %q: unknown unit %q (use B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)", b, m[2])
	}
	n, ok := new(big.Rat).SetString(m[1]) // digits with an optional fraction: exact
	if !ok {
		return fmt.Errorf("bad size %q: want a string such as \"512MiB\" or \"1GiB\"", b)
	}
	n.Mul(n, new(big.Rat).SetInt64(unit))
	if n.Cmp(maxSize) > 0 {
		return fmt.Errorf("%q is too large (max 8 EiB)", b)
	}
	*s = Size(new(big.Int).Quo(n.Num(), n.Denom()).Int64())
	return nil
}

// MarshalText formats the size in bytes.
func (s Size) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// String formats the size with a binary unit where it divides evenly.
func (s Size) String() string {
	for _, u := range []struct {
		n    int64
		name string
	}{{1 << 40, "TiB"}, {1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if int64(s) >= u.n && int64(s)%u.n == 0 {
			return strconv.FormatInt(int64(s)/u.n, 10) + u.name
		}
	}
	return strconv.FormatInt(int64(s), 10) + "B"
}

// WriteConcern is "majority" or a number of nodes, written as a string or
// a TOML integer.
type WriteConcern string

// UnmarshalText accepts any text; Validate checks it.
func (w *WriteConcern) UnmarshalText(b []byte) error {
	*w = WriteConcern(b)
	return nil
}

// Nodes returns the number of nodes, or -1 for "majority".
func (w WriteConcern) Nodes() int {
	n, err := strconv.Atoi(string(w))
	if err != nil {
		return -1
	}
	return n
}
