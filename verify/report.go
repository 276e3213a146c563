package verify

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/digits"
	"github.com/logtally/logtally/query"
)

// DefaultMaxDiffs is how many differences, and how many counters holding
// more in MongoDB, a Report lists by default.
const DefaultMaxDiffs = 20

// Report is what a verification found.
type Report struct {
	// AllHosts is Options.AllHosts: the files are every host's logs.
	AllHosts bool
	// Files, Lines, Malformed, Filtered and TooLong are the dry run's:
	// the files read, their lines, and the lines that are not hits.
	Files                               int
	Lines, Malformed, Filtered, TooLong uint64
	// Hits are the files' hits in the range, Outside those outside it
	// (-from, -to): not judged.
	Hits, Outside uint64
	// From and To bound the range judged [From, To).
	From, To time.Time
	// Passes is how many times the files were read (one unless their sums
	// passed Options.MaxSums: see Verify).
	Passes int
	// Buckets are the documents compared, by kind; Counters the counters
	// compared, Edge those of them whose period reaches outside the range
	// (judged for lost hits only).
	Buckets        [kinds]uint64
	Counters, Edge uint64
	// Tails are the tail documents read, by level: their entries are
	// judged with their pages' buckets (Diff.Tail). Finer are the
	// counters of cold pages finer than a tail holds (a cold page's
	// seconds of a minute, minutes of a day), not judged: the counters
	// of the tail's slot holding them are.
	Tails [bucket.Levels]uint64
	Finer uint64
	// Expired are the buckets past their level's retention, by Kind, and
	// the site days past theirs (the daily one), not judged.
	Expired [kinds]uint64
	// Unknown are counters no document of their kind has (a newer
	// version's?), not judged.
	Unknown uint64
	// Diffs are the first differences (MongoDB below the files, or with
	// AllHosts above them), NDiffs how many there are: Lost below, More
	// above.
	Diffs              []Diff
	NDiffs, Lost, More uint64
	// Others are the first counters holding more in MongoDB than in the
	// files without AllHosts (other hosts' hits?), NOthers how many.
	Others  []Diff
	NOthers uint64
	// Dims is what the counts by dimension of the site days gave, with
	// [dimensions] on (dims.go).
	Dims DimsReport
}

// Exact reports whether no difference was found.
func (r *Report) Exact() bool { return r.NDiffs == 0 }

// Write prints the report: what was read and judged, the differences and
// the counters holding more in MongoDB (the first ones), and the verdict,
// "exact: N hits in M buckets" or "not exact: …". Ids are printed with
// query.Shown, as query and the dashboard show names: their sites and
// pages come from the logs.
func (r *Report) Write(w io.Writer) {
	g := func(n uint64) string { return digits.Group(n) }
	passes := ""
	if r.Passes > 1 {
		passes = fmt.Sprintf(" (read %d times: a range at a time)", r.Passes)
	}
	files := "files"
	if r.Files == 1 {
		files = "file"
	}
	fmt.Fprintf(w, "read: %d %s, %s lines, %s hits from %s to %s%s\n", r.Files, files, g(r.Lines), g(r.Hits),
		r.From.UTC().Format(time.RFC3339), r.To.UTC().Format(time.RFC3339), passes)
	if n := r.Malformed + r.Filtered + r.TooLong; n > 0 {
		fmt.Fprintf(w, "not hits: %s lines (%s malformed, %s filtered, %s too long), as the daemon counts them\n",
			g(n), g(r.Malformed), g(r.Filtered), g(r.TooLong))
	}
	if r.Outside > 0 {
		fmt.Fprintf(w, "not judged: %s hits outside -from/-to\n", g(r.Outside))
	}
	var total uint64
	for _, n := range r.Buckets {
		total += n
	}
	fmt.Fprintf(w, "compared: %s buckets (%s minute, %s daily, %s monthly, %s site days), %s counters",
		g(total), g(r.Buckets[Minute]), g(r.Buckets[Daily]), g(r.Buckets[Monthly]), g(r.Buckets[Sites]), g(r.Counters))
	if r.Edge > 0 {
		fmt.Fprintf(w, "; %s of them at the range's edges (periods reaching outside it, which MongoDB holds other lines of): judged for lost hits only", g(r.Edge))
	}
	if n := r.Tails[Minute] + r.Tails[Daily] + r.Tails[Monthly]; n > 0 {
		fmt.Fprintf(w, "; the cold pages' entries of %s tails (%s minute, %s daily, %s monthly) judged with their pages' buckets",
			g(n), g(r.Tails[Minute]), g(r.Tails[Daily]), g(r.Tails[Monthly]))
	}
	fmt.Fprintln(w)
	r.writeDims(w)
	var skipped []string
	for k, n := range r.Expired {
		if n > 0 {
			k := Kind(k)
			skipped = append(skipped, fmt.Sprintf("%s %ss past %s", g(n), k, bucket.Retention{}.Key(k.level())))
		}
	}
	if r.Unknown > 0 {
		skipped = append(skipped, g(r.Unknown)+" counters of unknown fields")
	}
	if r.Finer > 0 {
		skipped = append(skipped, g(r.Finer)+" counters of cold pages finer than their tails hold (seconds, minutes of a day; their minute or hour is judged)")
	}
	skipped = append(skipped, "visitors (their registers are not compared)")
	fmt.Fprintf(w, "not judged: %s\n", strings.Join(skipped, "; "))

	list := func(title, note string, ds []Diff, n uint64, what func(d Diff) string) {
		if n == 0 {
			return
		}
		if uint64(len(ds)) < n {
			note = fmt.Sprintf(", the first %d", len(ds)) + note
		}
		fmt.Fprintf(w, "%s (%s%s):\n", title, g(n), note)
		for _, d := range ds {
			tail := ""
			if d.Tail {
				tail = " with its entries in the tails"
			}
			path := d.Path
			if d.Value != "" {
				path += " " + query.Shown(d.Value)
			}
			fmt.Fprintf(w, "  %s %s%s: %s: MongoDB %d, files %d (%s)\n", d.Kind, query.Shown(d.ID), tail, path, d.MongoDB, d.Files, what(d))
		}
	}
	list("differences", "", r.Diffs, r.NDiffs, func(d Diff) string {
		if d.MongoDB < d.Files {
			return fmt.Sprintf("%d lost", d.Files-d.MongoDB)
		}
		return fmt.Sprintf("%d more in MongoDB", d.MongoDB-d.Files)
	})
	list("more in MongoDB: other hosts?", "; -all-hosts says the files are every host's logs", r.Others, r.NOthers, func(d Diff) string {
		return fmt.Sprintf("+%d", d.MongoDB-d.Files)
	})
	if r.Exact() {
		more := ""
		if r.NOthers > 0 {
			more = fmt.Sprintf("; %s in MongoDB: other hosts?", counters(r.NOthers, "holds more", "hold more"))
		}
		fmt.Fprintf(w, "exact: %s hits in %s buckets (visitors not compared%s)\n", g(r.Hits), g(total), more)
		return
	}
	fmt.Fprintf(w, "not exact: %s (%s below the files: hits lost; %s above)\n", counters(r.NDiffs, "differs", "differ"), g(r.Lost), g(r.More))
}

// writeDims prints the line of the counts by dimension: what was
// compared and what was not.
func (r *Report) writeDims(w io.Writer) {
	d := &r.Dims
	g := func(n uint64) string { return digits.Group(n) }
	var parts []string
	if d.On {
		parts = append(parts, fmt.Sprintf("%s site days, %s values compared", g(d.Days), g(d.Values)))
	}
	if d.NotCounted > 0 {
		parts = append(parts, fmt.Sprintf("%s site days not counted by dimension in MongoDB (before [dimensions] was enabled?): not judged", g(d.NotCounted)))
	}
	if d.Cut > 0 {
		parts = append(parts, fmt.Sprintf("%s site days cut by -from/-to with hits outside them: not judged by dimension", g(d.Cut)))
	}
	if d.Off > 0 {
		parts = append(parts, fmt.Sprintf("%s site days' counts not judged: [dimensions] is off in the config", g(d.Off)))
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "by dimension: %s\n", strings.Join(parts, "; "))
	}
}

// counters says "1 counter <one>" or "n counters <many>".
func counters(n uint64, one, many string) string {
	if n == 1 {
		return "1 counter " + one
	}
	return digits.Group(n) + " counters " + many
}
