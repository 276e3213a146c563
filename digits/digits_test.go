package digits

import (
	"math"
	"testing"
)

func TestGroup(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Group(0), "0"},
		{Group(7), "7"},
		{Group(999), "999"},
		{Group(1000), "1,000"},
		{Group(-1), "-1"},
		{Group(-999), "-999"},
		{Group(-1000), "-1,000"},
		{Group(-1234), "-1,234"},
		{Group(-123456), "-123,456"},
		{Group(12345678), "12,345,678"},
		{Group(int64(math.MinInt64)), "-9,223,372,036,854,775,808"},
		{Group(int64(math.MaxInt64)), "9,223,372,036,854,775,807"},
		{Group(uint64(math.MaxUint64)), "18,446,744,073,709,551,615"},
		{Group(uint32(4294967295)), "4,294,967,295"},
		{Group(int8(-128)), "-128"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
