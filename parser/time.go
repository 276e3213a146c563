package parser

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"strings"
	"time"
)

// timeLen is the length of "10/Oct/2000:13:55:36 -0700", the Apache %t and
// nginx $time_local layout without its brackets.
const timeLen = 26

// parseTime converts "dd/Mon/yyyy:hh:mm:ss ±hhmm" (exactly timeLen bytes)
// to Unix seconds. It validates every field: English month abbreviations in
// their usual case, the day against the month's length (leap years
// included), hour < 24, minute < 60, second <= 60, zone hours < 24 and
// minutes < 60. A leap second (60) is counted as 59 so the hit stays in its
// minute. Times before 1970-01-01T00:00:00Z are rejected.
func parseTime(b []byte) (int64, bool) {
	if len(b) != timeLen || b[2] != '/' || b[6] != '/' || b[11] != ':' ||
		b[14] != ':' || b[17] != ':' || b[20] != ' ' {
		return 0, false
	}
	day := num2(b[0], b[1])
	month := monthNumber(b[3], b[4], b[5])
	year := num2(b[7], b[8])*100 + num2(b[9], b[10])
	hour := num2(b[12], b[13])
	minute := num2(b[15], b[16])
	sec := num2(b[18], b[19])
	zh := num2(b[22], b[23])
	zm := num2(b[24], b[25])
	if zh < 0 || zh > 23 || zm < 0 || zm > 59 {
		return 0, false
	}
	zone := zh*3600 + zm*60
	switch b[21] {
	case '+':
	case '-':
		zone = -zone
	default:
		return 0, false
	}
	return civil(year, month, day, hour, minute, sec, zone)
}

// timeCache remembers the minute of the last timestamp parseTime
// accepted: the lines of a log come in time order, so most share their
// date, hour, minute and zone with the line before and need only their
// seconds read. Its zero value holds nothing.
type timeCache struct {
	// key is the last timestamp accepted but its seconds (bytes 18 and
	// 19): bytes 0..7, 8..15, and 16, 17 and 20..25 (seconds zeroed).
	key [3]uint64
	// base is that timestamp's Unix seconds less its seconds: its
	// minute's start.
	base int64
	set  bool
}

// parse is parseTime(b), read from the cache when b is in the minute
// (and zone) of the last timestamp accepted, and remembered for the next
// when accepted.
func (c *timeCache) parse(b []byte) (int64, bool) {
	if len(b) != timeLen {
		return 0, false
	}
	k := [3]uint64{binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:]),
		binary.LittleEndian.Uint64(b[18:])&^0xffff | uint64(b[16]) | uint64(b[17])<<8}
	sec := num2(b[18], b[19])
	if c.set && k == c.key && sec >= 0 && sec <= 60 {
		// Every byte but the seconds is the one accepted before: the
		// seconds are all that is left to check. The minute's start
		// and its last second are both in range (the zone is whole
		// minutes and maxTime ends a minute), so every second of it is.
		return c.base + int64(min(sec, 59)), true
	}
	t, ok := parseTime(b)
	if ok {
		c.key, c.base, c.set = k, t-int64(min(sec, 59)), true
	}
	return t, ok
}

// civil converts a date, time of day and zone offset (seconds east of UTC)
// to Unix seconds, checking every field's range (num2 gives a negative
// number for non-digits). A leap second (:60) counts as :59, so the hit
// stays in its minute. Times before 1970 or after maxTime are refused.
func civil(year, month, day, hour, minute, sec, zone int) (int64, bool) {
	if year < 1970 || month < 1 || month > 12 || day < 1 || day > daysIn(month, year) ||
		hour < 0 || hour > 23 || minute < 0 || minute > 59 || sec < 0 || sec > 60 {
		return 0, false
	}
	if sec == 60 {
		sec = 59
	}
	t := daysFromCivil(year, month, day)*86400 + int64(hour*3600+minute*60+sec) - int64(zone)
	if t < 0 || t > maxTime {
		return 0, false
	}
	return t, true
}

// num2 returns the value of two ASCII digits, or a negative number if
// either is not a digit.
func num2(a, b byte) int {
	x, y := a-'0', b-'0'
	if x > 9 || y > 9 {
		return -10000
	}
	return int(x)*10 + int(y)
}

// monthNumber returns 1..12 for "Jan".."Dec", 0 otherwise.
func monthNumber(a, b, c byte) int {
	switch uint32(a)<<16 | uint32(b)<<8 | uint32(c) {
	case 'J'<<16 | 'a'<<8 | 'n':
		return 1
	case 'F'<<16 | 'e'<<8 | 'b':
		return 2
	case 'M'<<16 | 'a'<<8 | 'r':
		return 3
	case 'A'<<16 | 'p'<<8 | 'r':
		return 4
	case 'M'<<16 | 'a'<<8 | 'y':
		return 5
	case 'J'<<16 | 'u'<<8 | 'n':
		return 6
	case 'J'<<16 | 'u'<<8 | 'l':
		return 7
	case 'A'<<16 | 'u'<<8 | 'g':
		return 8
	case 'S'<<16 | 'e'<<8 | 'p':
		return 9
	case 'O'<<16 | 'c'<<8 | 't':
		return 10
	case 'N'<<16 | 'o'<<8 | 'v':
		return 11
	case 'D'<<16 | 'e'<<8 | 'c':
		return 12
	}
	return 0
}

// daysIn returns the number of days of month (1..12) in year.
func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil returns the number of days from 1970-01-01 to the given
// proleptic Gregorian date, for years >= 1. Howard Hinnant's algorithm.
func daysFromCivil(year, month, day int) int64 {
	if month <= 2 {
		year--
	}
	era := year / 400
	yoe := year - era*400
	mp := (month + 9) % 12 // March is 0
	doy := (153*mp+2)/5 + day - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// maxTime is 9999-12-31T23:59:59Z: later times are malformed.
const maxTime = 253402300799

// parseISO converts an RFC 3339 / ISO 8601 time, "2006-01-02T15:04:05"
// with an optional fraction (dropped) and a zone "Z" or "±hh:mm" (or
// "±hhmm"), to Unix seconds. A space may stand for the 'T'.
func parseISO(b []byte) (int64, bool) {
	if len(b) < 20 || b[4] != '-' || b[7] != '-' || (b[10] != 'T' && b[10] != 't' && b[10] != ' ') ||
		b[13] != ':' || b[16] != ':' {
		return 0, false
	}
	year := num2(b[0], b[1])*100 + num2(b[2], b[3])
	month := num2(b[5], b[6])
	day := num2(b[8], b[9])
	hour := num2(b[11], b[12])
	minute := num2(b[14], b[15])
	sec := num2(b[17], b[18])
	z := b[19:]
	if z[0] == '.' || z[0] == ',' {
		i := 1
		for i < len(z) && z[i] >= '0' && z[i] <= '9' {
			i++
		}
		if i == 1 {
			return 0, false
		}
		z = z[i:]
	}
	zone := 0
	switch {
	case len(z) == 1 && (z[0] == 'Z' || z[0] == 'z'):
	case (len(z) == 6 && z[3] == ':' || len(z) == 5) && (z[0] == '+' || z[0] == '-'):
		zh := num2(z[1], z[2])
		zm := num2(z[len(z)-2], z[len(z)-1])
		if zh < 0 || zh > 23 || zm < 0 || zm > 59 {
			return 0, false
		}
		zone = zh*3600 + zm*60
		if z[0] == '-' {
			zone = -zone
		}
	default:
		return 0, false
	}
	return civil(year, month, day, hour, minute, sec, zone)
}

// parseEpoch converts decimal Unix seconds (or milliseconds if ms), with
// an optional fraction that is dropped, to Unix seconds.
func parseEpoch(b []byte, ms bool) (int64, bool) {
	if i := bytes.IndexByte(b, '.'); i >= 0 {
		for _, c := range b[i+1:] {
			if c < '0' || c > '9' {
				return 0, false
			}
		}
		b = b[:i]
	}
	if len(b) == 0 || len(b) > 16 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if ms {
		n /= 1000
	}
	if n > maxTime {
		return 0, false
	}
	return n, true
}

// timeLayout is a compiled time_layout.
type timeLayout struct {
	kind   uint8
	layout string // Go layout, for layoutGo
}

const (
	layoutCLF uint8 = iota
	layoutISO
	layoutUnix
	layoutUnixMs
	layoutGo
)

// parseTimeLayout compiles a time_layout setting; def is used when name is
// empty.
func parseTimeLayout(name, def string) (timeLayout, error) {
	name = cmp.Or(name, def)
	switch strings.ToLower(name) {
	case "clf", "02/jan/2006:15:04:05 -0700":
		return timeLayout{kind: layoutCLF}, nil
	case "rfc3339", "iso8601", strings.ToLower(time.RFC3339), strings.ToLower(time.RFC3339Nano):
		return timeLayout{kind: layoutISO}, nil
	case "unix", "epoch":
		return timeLayout{kind: layoutUnix}, nil
	case "unix_ms", "epoch_ms":
		return timeLayout{kind: layoutUnixMs}, nil
	}
	if !strings.Contains(name, "2006") || !strings.Contains(name, "04") {
		return timeLayout{}, fmt.Errorf("%q: want rfc3339, clf, unix, unix_ms or a Go time layout with a year (2006) and minutes (04)", name)
	}
	return timeLayout{kind: layoutGo, layout: name}, nil
}

// parse converts b to Unix seconds.
func (l timeLayout) parse(b []byte) (int64, bool) {
	switch l.kind {
	case layoutCLF:
		if len(b) == timeLen+2 && b[0] == '[' && b[timeLen+1] == ']' {
			b = b[1 : timeLen+1]
		}
		return parseTime(b)
	case layoutISO:
		return parseISO(b)
	case layoutUnix:
		return parseEpoch(b, false)
	case layoutUnixMs:
		return parseEpoch(b, true)
	}
	t, err := time.Parse(l.layout, string(b))
	if err != nil {
		return 0, false
	}
	u := t.Unix()
	if u < 0 || u > maxTime {
		return 0, false
	}
	return u, true
}
