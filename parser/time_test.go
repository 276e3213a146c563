package parser

import (
	"math/rand/v2"
	"testing"
	"time"
)

const layout = "02/Jan/2006:15:04:05 -0700"

// TestParseTimeEveryDay checks every day number 00..32 of every month of
// 1970..2400 against the time package: the same dates are accepted (leap
// years included) and give the same Unix seconds.
func TestParseTimeEveryDay(t *testing.T) {
	months := []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
	buf := []byte("00/Jan/2000:12:34:56 +0000")
	n := 0
	for year := 1970; year <= 2400; year++ {
		for _, mon := range months {
			for day := 0; day <= 32; day++ {
				buf[0], buf[1] = byte('0'+day/10), byte('0'+day%10)
				copy(buf[3:6], mon)
				buf[7], buf[8], buf[9], buf[10] = byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10)
				got, ok := parseTime(buf)
				want, err := time.Parse(layout, string(buf))
				if ok != (err == nil) || ok && got != want.Unix() {
					t.Fatalf("parseTime(%q) = %d, %v; time.Parse: %v, %v", buf, got, ok, want.Unix(), err)
				}
				if ok {
					n++
				}
			}
		}
	}
	// 431 years of which 105 are leap years (1972..2400 every 4, less 2100,
	// 2200, 2300).
	if wantDays := 431*365 + 105; n != wantDays {
		t.Errorf("accepted %d days, want %d", n, wantDays)
	}
}

// TestParseTimeRandom compares random instants in random zones, written
// as Apache and nginx write them, with the time package.
func TestParseTimeRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		u := rng.Int64N(253402300799 - 14*3600) // up to 9999-12-31 less the widest zone
		off := (rng.IntN(26*60+1) - 12*60) * 60 // -12:00 .. +14:00
		s := time.Unix(u, 0).In(time.FixedZone("", off)).Format(layout)
		got, ok := parseTime([]byte(s))
		if !ok || got != u {
			t.Fatalf("parseTime(%q) = %d, %v, want %d", s, got, ok, u)
		}
	}
}

func TestParseTimeBad(t *testing.T) {
	for _, s := range []string{
		"",
		"10/Oct/2000:13:55:36 -070",
		"10/Oct/2000:13:55:36 -07000",
		"10/Oct/2000 13:55:36 -0700",
		"10-Oct-2000:13:55:36 -0700",
		"10/Oct/2000:13:55:36+-0700",
		"10/Oct/2000:13:55:36 *0700",
		"10/OCT/2000:13:55:36 -0700",
		"-1/Oct/2000:13:55:36 -0700",
		"10/Oct/2000:-1:55:36 -0700",
		"10/Oct/2000:13:55:36 -07-1",
		"10/Oct/1969:13:55:36 -0700",
		"10/Oct/0000:13:55:36 -0700",
		"\xff\xff/Oct/2000:13:55:36 -0700",
	} {
		if got, ok := parseTime([]byte(s)); ok {
			t.Errorf("parseTime(%q) = %d, want failure", s, got)
		}
	}
	got, ok := parseTime([]byte("30/Jun/2015:23:59:60 +0000"))
	if want := time.Date(2015, 6, 30, 23, 59, 59, 0, time.UTC).Unix(); !ok || got != want {
		t.Errorf("leap second = %d, %v, want %d", got, ok, want)
	}
}
