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

// The time cache gives parseTime's answer on every timestamp of
// sequences that change one field at a time from the line before (second,
// minute, hour, day, month, year, zone sign, hours or minutes), go back,
// carry a leap second or a bad second, break a separator, or cross the
// ends of the range; and on random one-byte changes of the line before.
func TestTimeCacheAsParseTime(t *testing.T) {
	var c timeCache
	check := func(s string) {
		t.Helper()
		got, gotOK := c.parse([]byte(s))
		want, wantOK := parseTime([]byte(s))
		if got != want || gotOK != wantOK {
			t.Fatalf("cached parse of %q = %d, %v; parseTime: %d, %v", s, got, gotOK, want, wantOK)
		}
	}
	for _, s := range []string{
		"17/May/2024:00:00:00 +0200",
		"17/May/2024:00:00:01 +0200", // second
		"17/May/2024:00:00:59 +0200",
		"17/May/2024:00:00:60 +0200", // leap second: :59
		"17/May/2024:00:00:61 +0200", // bad second after a good one
		"17/May/2024:00:00:6x +0200",
		"17/May/2024:00:00:x0 +0200",
		"17/May/2024:00:00:-1 +0200",
		"17/May/2024:00:00:30 +0200",
		"17/May/2024:00:01:00 +0200", // minute
		"17/May/2024:00:00:59 +0200", // backwards
		"17/May/2024:01:00:59 +0200", // hour
		"18/May/2024:01:00:59 +0200", // day
		"18/Jun/2024:01:00:59 +0200", // month
		"18/Jun/2025:01:00:59 +0200", // year
		"18/Jun/2025:01:00:59 -0200", // zone sign
		"18/Jun/2025:01:00:58 -0300", // zone hours
		"18/Jun/2025:01:00:57 -0330", // zone minutes
		"18/Jun/2025:01:00:57 -0360", // bad zone minutes
		"18/Jun/2025:01:00:56 -0330",
		"18/Jun/2025:01:00:56 *0330", // bad zone sign
		"18/Jun/2025:01:00:56_-0330", // bad separators
		"18/Jun/2025:01:00;56 -0330",
		"18/Jun/2025:01:00:56 -0330",
		"31/Jun/2025:01:00:56 -0330", // no such day
		"29/Feb/2024:23:59:59 +0000", // leap day
		"29/Feb/2024:23:59:30 +0000",
		"29/Feb/2023:23:59:30 +0000",
		"01/Jan/1970:00:00:00 +0000", // the first second
		"01/Jan/1970:00:00:05 +0000",
		"01/Jan/1970:00:00:05 +0001", // before 1970
		"01/Jan/1970:00:00:05 -0001",
		"01/Jan/1970:00:00:04 -0001",
		"31/Dec/9999:23:59:00 +0000", // the last minute
		"31/Dec/9999:23:59:59 +0000",
		"31/Dec/9999:23:59:60 +0000",
		"31/Dec/9999:23:59:59 -0001", // past maxTime
		"31/Dec/9999:23:59:00 -0001",
		"31/Dec/9999:23:59:00 +0000",
	} {
		check(s)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	cur := []byte("17/May/2024:10:20:30 +0200")
	const alphabet = "0123456789/: +-JanFebMayx"
	for range 200_000 {
		next := []byte(string(cur))
		switch rng.IntN(4) {
		case 0: // a good timestamp near the last
			tm := time.Unix(1_700_000_000+rng.Int64N(200), 0).In(time.FixedZone("", 60*(rng.IntN(3)-1)*90))
			next = []byte(tm.Format(layout))
		default: // one byte changed
			next[rng.IntN(timeLen)] = alphabet[rng.IntN(len(alphabet))]
		}
		check(string(next))
		if _, ok := parseTime(next); ok || rng.IntN(8) == 0 {
			cur = next
		}
	}
}
