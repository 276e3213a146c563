package termview

import "testing"

// The replay summary's comparison with one upsert per hit says fewer or
// more truthfully (it said "0x more" for 2,892 operations against 2,400).
func TestOpsRatio(t *testing.T) {
	for _, tc := range []struct {
		naive, issued uint64
		want          string
	}{
		{2400, 2892, "logtally issued 2892, 1.2× more"},
		{2400, 120, "logtally issued 120, 20× fewer"},
		{2000000, 1234, "logtally issued 1234, 1621× fewer"},
		{2400, 2300, "logtally issued 2300, about as many"},
		{2400, 1000, "logtally issued 1000, 2.4× fewer"},
		{10, 0, "logtally issued none"},
	} {
		if got := opsRatio(tc.naive, tc.issued); got != tc.want {
			t.Errorf("opsRatio(%d, %d) = %q, want %q", tc.naive, tc.issued, got, tc.want)
		}
	}
}
