package pipeline

import "testing"

// Beside a small buffer the tailers read less at a time: reading pauses
// at max_size past it by one chunk's counts at most.
func TestReadSizeFor(t *testing.T) {
	for _, tc := range []struct {
		maxSize int64
		want    int
	}{
		{0, readSize}, {-1, readSize}, {1 << 30, readSize}, {16 << 20, readSize},
		{8 << 20, 512 << 10}, {1 << 20, 64 << 10}, {1, 64 << 10},
	} {
		if got := readSizeFor(tc.maxSize); got != tc.want {
			t.Errorf("readSizeFor(%d) = %d, want %d", tc.maxSize, got, tc.want)
		}
	}
}
