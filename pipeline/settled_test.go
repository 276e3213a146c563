package pipeline

import "testing"

func TestSettled(t *testing.T) {
	files := func(lags ...int64) []SourceStatus {
		s := SourceStatus{Name: "web"}
		for _, l := range lags {
			s.Files = append(s.Files, FileStatus{Lag: l})
		}
		return []SourceStatus{s, {Name: "api"}}
	}
	for _, tc := range []struct {
		what string
		st   Status
		want bool
	}{
		{"nothing to do", Status{Sources: files(0, 0)}, true},
		{"a file gone", Status{Sources: files(0, -1)}, true},
		{"no source", Status{}, true},
		{"a file not read to its end", Status{Sources: files(0, 12)}, false},
		{"hits pending", Status{PendingHits: 3, Sources: files(0)}, false},
		{"a batch in flight", Status{InFlight: &BatchStatus{ID: "1:2"}, Sources: files(0)}, false},
		{"hits waiting for the daily and monthly buckets", Status{CoarseHits: 5, Sources: files(0)}, false},
	} {
		if got := tc.st.Settled(); got != tc.want {
			t.Errorf("%s: Settled = %v, want %v", tc.what, got, tc.want)
		}
	}
}
