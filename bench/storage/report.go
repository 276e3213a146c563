package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/logtally/logtally/digits"
)

// The figures as the bench prints them.

// printRow prints a table row: the documents, their BSON bytes, and both
// per hit.
func printRow(name string, s size, hits int64, bold bool) {
	b := func(v string) string { return v }
	if bold {
		b = func(v string) string { return "**" + v + "**" }
	}
	fmt.Printf("| %s | %s | %s | %s | %s |\n", b(name), digits.Group(s.docs), b(mb(s.bson)), b(perHit(s.bson, hits)), b(perHit(s.zstd, hits)))
}

// check is one figure against its target.
type check struct {
	line string
	met  bool
}

// ratio formats v against an upper bound.
func ratio(name string, v, target float64, format string) check {
	verdict := "met"
	if v > target {
		verdict = "NOT met"
	}
	return check{line: fmt.Sprintf("  %-48s %10s  (target <= %g: %s)", name, fmt.Sprintf(format, v), target, verdict), met: v <= target}
}

// perHit formats n bytes over hits: one decimal under 10 bytes, three
// under 0.1.
func perHit(n, hits int64) string { return decimal(float64(n)/float64(hits)) + " B" }

// decimal formats a ratio: grouped digits from 10, one decimal under 10,
// three under 0.1.
func decimal(v float64) string {
	switch {
	case v < 0.1:
		return fmt.Sprintf("%.3f", v)
	case v < 10:
		return fmt.Sprintf("%.1f", v)
	}
	return digits.Group(int64(v + 0.5))
}

// mb formats a size in decimal units, as the issue does.
func mb(n int64) string {
	switch {
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

func secs(d time.Duration) string { return d.Round(100 * time.Millisecond).String() }

// tail is s's last n lines.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n") + "\n"
}
