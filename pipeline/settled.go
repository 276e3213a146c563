package pipeline

// Settled reports whether s shows nothing left to do: no counts waiting
// for MongoDB (none pending, no batch in flight, none waiting for the
// daily and monthly buckets) and every file read and committed to its end
// (no lag; a file not found has none). Once it
// holds, whatever was read is in the buckets: a test that would see a
// double count waits for it instead of sleeping.
func (s Status) Settled() bool {
	if s.PendingHits != 0 || s.CoarseHits != 0 || s.InFlight != nil {
		return false
	}
	for _, src := range s.Sources {
		for _, f := range src.Files {
			if f.Lag > 0 {
				return false
			}
		}
	}
	return true
}
