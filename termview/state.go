package termview

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/logtally/logtally/observe"
	"github.com/logtally/logtally/pipeline"
)

// State prints st, the state dir's status (`logtally state`) at now:
// the configured sources (their names) without a checkpoint are listed,
// those in the buffer but not configured are marked.
func State(w io.Writer, st pipeline.Status, configured []string, now time.Time) {
	at := func(t time.Time) string {
		if t.IsZero() {
			return "never"
		}
		return fmt.Sprintf("%s (%s ago)", t.UTC().Format(time.RFC3339), now.Sub(t).Round(time.Second))
	}
	fmt.Fprintf(w, "instance     %s\n", st.Instance)
	fmt.Fprintf(w, "buffer id    %s\n", st.BufferID)
	if st.Writer != 0 {
		fmt.Fprintf(w, "writer       %d (applied.%d in the buckets)\n", st.Writer, st.Writer)
	} else {
		fmt.Fprintf(w, "writer       not numbered yet (claimed before the first batch)\n")
	}
	if fi, err := os.Stat(st.BufferPath); err == nil {
		fmt.Fprintf(w, "buffer       %s, file size %d bytes\n", st.BufferPath, fi.Size())
	} else {
		fmt.Fprintf(w, "buffer       %s\n", st.BufferPath)
	}
	fmt.Fprintf(w, "last commit  %s\n", at(st.LastCommit))
	fmt.Fprintf(w, "pending      %d keys, %d hits not yet acknowledged by MongoDB (the batch in flight included)\n", st.PendingKeys, st.PendingHits)
	if st.CoarseHits > 0 {
		fmt.Fprintf(w, "coarse       %d hits in the minute buckets, waiting for the next full batch to reach the daily and monthly ones\n", st.CoarseHits)
	}
	if b := st.InFlight; b != nil {
		fmt.Fprintf(w, "in flight    batch %s: %d keys, %d hits, sealed %s, resume: %s\n", b.ID, b.Keys, b.Hits, at(b.SealedAt), b.Resume)
	} else {
		fmt.Fprintf(w, "in flight    none\n")
	}
	if a := st.LastAcked; a != nil {
		fmt.Fprintf(w, "last acked   batch %s, sealed %s\n", a.ID, at(a.SealedAt))
	} else {
		fmt.Fprintf(w, "last acked   none\n")
	}
	sources := slices.Clone(st.Sources)
	for _, name := range configured {
		if !slices.ContainsFunc(sources, func(ss pipeline.SourceStatus) bool { return ss.Name == name }) {
			sources = append(sources, pipeline.SourceStatus{Name: name})
		}
	}
	for _, s := range sources {
		note := ""
		if !slices.Contains(configured, s.Name) {
			note = " (not in the config: its checkpoints are kept, and resume if it is added back)"
		}
		fmt.Fprintf(w, "source %q: lag %d bytes%s\n", s.Name, s.LagBytes, note)
		if len(s.Files) == 0 {
			fmt.Fprintf(w, "  no checkpoint yet\n")
			continue
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, f := range s.Files {
			size := fmt.Sprintf("size %d\tlag %d", f.Size, f.Lag)
			if f.Size < 0 {
				size = "not found\t(deleted, or rotated away out of reach)"
			}
			var flags []string
			if !f.Checkpoint {
				flags = append(flags, "no checkpoint yet")
			}
			if f.Followed {
				flags = append(flags, "followed")
			}
			extra := ""
			if len(flags) > 0 {
				extra = fmt.Sprintf("\t(%s)", strings.Join(flags, ", "))
			}
			fmt.Fprintf(tw, "  %s\tdev:ino %s\toffset %d\t%s%s\n", f.Path, f.File, f.Offset, size, extra)
		}
		tw.Flush()
	}
}

// Running prints the running daemon's /status, as read from url: its
// version, health, MongoDB (database, the config's), the state (State)
// and each component's last problem.
func Running(w io.Writer, rep observe.StatusReport, url, database string, configured []string) {
	fmt.Fprintf(w, "logtally %s is running: state read from %s at %s\n", rep.Version, url, rep.Time.Format(time.RFC3339))
	fmt.Fprintf(w, "health       %s\n", rep.Health)
	fmt.Fprintf(w, "mongo        %s, database %q\n", rep.Mongo, database)
	State(w, rep.Status, configured, rep.Time)
	if len(rep.Problems) > 0 {
		fmt.Fprintln(w, "recent problems (last per component):")
		for _, p := range rep.Problems {
			fmt.Fprintf(w, "  %s %-5s %s: %s", p.Time.Format(time.RFC3339), p.Level, p.Component, p.Message)
			for _, k := range slices.Sorted(maps.Keys(p.Attrs)) {
				fmt.Fprintf(w, " %s=%q", k, p.Attrs[k])
			}
			fmt.Fprintln(w)
		}
	}
}
