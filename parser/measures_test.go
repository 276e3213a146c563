package parser

import (
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/logtally/logtally/uafamily"
	"github.com/logtally/logtally/visitor"
)

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in    string
		scale int
		want  int64
		ok    bool
	}{
		{"0.123", 6, 123000, true},
		{"0.000", 6, 0, true},
		{"0", 6, 0, true},
		{"12", 6, 12_000_000, true},
		{"1.5", 6, 1_500_000, true},
		{".5", 6, 500_000, true},
		{"5.", 6, 5_000_000, true},
		{"0.0123", 6, 12300, true},
		{"0.0000019", 6, 1, true}, // truncated toward zero
		{"0.0000009", 6, 0, true},
		{"00012.000", 6, 12_000_000, true},
		{"1.5e-3", 6, 1500, true},
		{"1.5E+2", 6, 150_000_000, true},
		{"2e3", 0, 2000, true},
		{"86400", 6, MaxRT, true},
		{"86400.000001", 6, MaxRT, true}, // capped
		{"99999999999999999999999999", 6, MaxRT, true},
		{"1e400", 6, MaxRT, true},
		{"1e-400", 6, 0, true},
		{"123.456", 3, 123456, true}, // ms
		{"2500", 0, 2500, true},      // us (%D)
		{"1234567", -3, 1234, true},  // ns (Traefik)
		{"999", -3, 0, true},         // under a microsecond
		{"0.30000000000000004", 6, 300000, true},
		{"1" + strings.Repeat("0", 30) + "e-30", 6, 1_000_000, true},
		{"0." + strings.Repeat("0", 30) + "1e31", 6, 1_000_000, true},
		{"", 6, 0, false},
		{"-", 6, 0, false},
		{"-0.5", 6, 0, false},
		{"+1", 6, 0, false},
		{".", 6, 0, false},
		{"1e", 6, 0, false},
		{"1e+", 6, 0, false},
		{"0.1s", 6, 0, false},
		{"0,1", 6, 0, false},
		{" 1", 6, 0, false},
		{"NaN", 6, 0, false},
		{"inf", 6, 0, false},
		{"1.2.3", 6, 0, false},
	} {
		got, ok := parseDuration([]byte(tc.in), tc.scale)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseDuration(%q, %d) = %d %v, want %d %v", tc.in, tc.scale, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzParseDuration compares parseDuration with exact rational arithmetic.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"0.123", "12", "1.5e-3", "86400.5", "0.0000019", "123456789012345678901234.5"} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, s string, u uint8) {
		scale := []int{6, 3, 0, -3}[u%4]
		got, ok := parseDuration([]byte(s), scale)
		valid := s != "" && strings.Trim(s, "0123456789.eE+-") == "" && s[0] != '-' && s[0] != '+' && len(s) < 200
		if !valid {
			if ok && s[0] == '-' {
				t.Fatalf("parseDuration(%q) = %d, true for a negative value", s, got)
			}
			return
		}
		r, rok := new(big.Rat).SetString(s)
		if !ok {
			return // big.Rat accepts more ("1/2", "0x1p3" are excluded above; "1e" is not a number for either)
		}
		if !rok && !strings.ContainsAny(s, "eE") { // big.Rat refuses huge exponents
			t.Fatalf("parseDuration(%q) = %d, true; big.Rat refuses it", s, got)
		} else if !rok {
			return
		}
		if scale >= 0 {
			r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
		} else {
			r.Quo(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-scale)), nil)))
		}
		want := new(big.Int).Quo(r.Num(), r.Denom())
		if want.Cmp(big.NewInt(MaxRT)) > 0 {
			want.SetInt64(MaxRT)
		}
		if got < 0 || got > MaxRT {
			t.Fatalf("parseDuration(%q) = %d out of range", s, got)
		}
		// Digits past the 18th significant one are dropped: below a
		// microsecond, or in a value past the cap.
		if want.Cmp(big.NewInt(got)) != 0 {
			t.Fatalf("parseDuration(%q, %d) = %d, want %v", s, scale, got, want)
		}
	})
}

func TestSumDurations(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"0.012", 12000},
		{"0.012, 0.030", 42000},
		{"0.012 : 0.030", 42000},
		{"0.012, 0.030 : 0.100", 142000},
		{"-, 0.030", 30000},
		{"-", NoRT},
		{"- : -", NoRT},
		{"", NoRT},
		{"0.012, abc", NoRT},
		{"0.012,, 0.030", NoRT},
		{"80000, 80000", MaxRT},
	} {
		if got := sumDurations([]byte(tc.in), 6); got != tc.want {
			t.Errorf("sumDurations(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true}, {"2326", 2326, true}, {"-", 0, false}, {"", 0, false}, {"12a", 0, false}, {"-5", 0, false},
		{"1125899906842624", MaxBytes, true}, {"1125899906842625", MaxBytes, true},
		{"99999999999999999999999999999", MaxBytes, true},
	} {
		if got, ok := parseSize([]byte(tc.in)); got != tc.want || ok != tc.ok {
			t.Errorf("parseSize(%q) = %d %v, want %d %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// The table of recent user agents gives every user agent its own class
// and digest, whatever shares its slot: user agents of every length from
// 0 (short ones hashed byte by byte), read from a buffer reused, many that differ only outside the
// bytes the slot is chosen by (same length, same first, middle and last
// words), bots and people, in an order that revisits them.
func TestRecentUAs(t *testing.T) {
	p, err := New(Config{Format: "combined", Site: "example.com"})
	if err != nil {
		t.Fatal(err)
	}
	rules, err := defaultRules()
	if err != nil {
		t.Fatal(err)
	}
	var uas []string
	for n := range 40 {
		uas = append(uas, strings.Repeat("b", n))
	}
	for i := range 300 {
		// Same length; the byte that differs is in none of the words
		// the slot reads (positions 8..15 of 64: first quarter 16..23,
		// middle 28..35, last 56..63).
		base := []byte("Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/b.h)")
		base[9+i%7] = "abcdefghij"[i/7%10]
		if i%3 == 0 {
			copy(base[25:], "xxxxxxx") // no longer bingbot
		}
		uas = append(uas, string(base))
	}
	uas = append(uas, strings.Repeat("Mozilla/5.0 Googlebot ", 100)) // longer than maxUALen
	rng := rand.New(rand.NewPCG(5, 6))
	line := make([]byte, 0, 64) // reused, as a reader's buffer is (never nil: no user agent)
	for k := range 20_000 {
		ua := uas[rng.IntN(len(uas))]
		if k < len(uas) {
			ua = uas[k]
		}
		line = append(line[:0], ua...)
		cl, d := p.classify(line)
		for i := range line {
			line[i] = 'x' // the next line's bytes
		}
		cut := []byte(ua)[:min(len(ua), maxUALen)]
		// Without Config.Dims the families are skipped (unknown).
		if want := rules.Agent(cut); cl.Class != want.Class || cl.Crawler != want.Crawler || cl.Families != (uafamily.Families{}) {
			t.Fatalf("user agent %q: class %v, want %v without families", ua, cl, want)
		}
		if want := visitor.UADigest(cut); d != want {
			t.Fatalf("user agent %q: digest %x, want %x", ua, d, want)
		}
	}
	if hits, _ := p.BotCacheStats(); p.recent.hits == 0 || hits < p.recent.hits {
		t.Errorf("recent table hits %d, cache stats hits %d", p.recent.hits, hits)
	}
}
