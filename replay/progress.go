package replay

import "time"

// Progress is a snapshot of a replay: what is read of the files given, and
// what of it is counted and acknowledged. It is what `logtally replay`
// shows while it runs, whether the replay runs in-process or inside a
// running daemon (then it travels over the control socket as JSON).
type Progress struct {
	// Started is when the replay began reading.
	Started time.Time `json:"started"`
	// TotalBytes is the sum of the files' sizes on disk (compressed bytes
	// for compressed files): the bar's 100 %.
	TotalBytes int64 `json:"total_bytes"`
	// ReadBytes is how many of TotalBytes are read (compressed bytes for
	// compressed files). Files skipped whole count as read.
	ReadBytes int64 `json:"read_bytes"`
	// Lines is the number of lines read so far (all files).
	Lines int64 `json:"lines"`
	// Current is the path of a file being read now, empty when none is.
	Current string `json:"current,omitempty"`
	// FilesDone and FilesTotal count the files finished (read, or skipped
	// as already counted) and given.
	FilesDone  int `json:"files_done"`
	FilesTotal int `json:"files_total"`
	// Waiting, when not empty, says which file waits for another
	// logtally (another host or state dir) replaying the same stream, and
	// who that is: it starts where the other leaves it.
	Waiting string `json:"waiting,omitempty"`
	// Phase is "reading", then "flushing" while the last counts wait for
	// MongoDB's acknowledgement, then "done".
	Phase string `json:"phase"`
}

// Phases of a Progress.
const (
	PhaseReading  = "reading"
	PhaseFlushing = "flushing"
	PhaseDone     = "done"
)
