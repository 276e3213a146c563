// Package digits formats integers for people to read. It is the one
// place digit grouping is written: the dry run's summary (replay), the
// replay progress line (cmd/logtally) and the bench tools use it. It
// imports nothing of logtally's, so every package may import it.
package digits

import "strconv"

// Integer is any integer type.
type Integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 |
		~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr
}

// Group formats n in decimal with a comma every three digits:
// 12345678 is "12,345,678", -1234 is "-1,234".
func Group[T Integer](n T) string {
	var s string
	if n < 0 {
		s = strconv.FormatInt(int64(n), 10)
	} else {
		s = strconv.FormatUint(uint64(n), 10)
	}
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	b := make([]byte, 0, len(sign)+len(s)+(len(s)-1)/3)
	b = append(b, sign...)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	return string(b)
}
