package parser

import "strconv"

// Outcome is the result of parsing one line: OK, a malformed reason (the
// line gives no hit because it cannot be read) or a filter reason (the
// line was read but a filter excludes it). Values are not stable across
// versions: do not persist them.
type Outcome uint8

// The outcomes of Parse.
const (
	// OK means the line is a hit.
	OK Outcome = iota
	// MalformedEmpty is an empty or blank line.
	MalformedEmpty
	// MalformedFields is a line whose field structure is wrong: missing
	// fields (a line cut short), a request without its closing quote, a
	// size that is neither digits nor "-", a line that does not match the
	// nginx log_format or the regex, JSON that is not an object.
	MalformedFields
	// MalformedTime is a timestamp that does not match the format's time
	// layout, is an impossible date or time, or is before 1970.
	MalformedTime
	// MalformedRequest is a request line that has no usable page: "-",
	// empty, binary garbage (TLS to a plain port), a method that is not an
	// HTTP token, or a target that is not a path ("*", "host:443").
	MalformedRequest
	// MalformedStatus is a status that is not three digits in 100..599.
	MalformedStatus
	// MalformedHost is a missing or unusable host ("-", empty, bytes that
	// are not a host name) when the site comes from the line.
	MalformedHost

	// FilteredMethod is a hit whose method is not in filter.methods.
	FilteredMethod
	// FilteredStatus is a hit whose status is not in filter.status.
	FilteredStatus
	// FilteredUserAgent is a hit whose user agent matches
	// filter.exclude_user_agents.
	FilteredUserAgent
	// FilteredExtension is a hit whose path ends in one of
	// filter.exclude_extensions.
	FilteredExtension
	// FilteredPath is a hit whose page matches filter.exclude_paths.
	FilteredPath
	// FilteredWindow is a hit outside Config.Since/Until (a replay's
	// -since and -until).
	FilteredWindow

	// NumOutcomes is the number of outcomes, for arrays of per-outcome
	// counters indexed by Outcome.
	NumOutcomes

	firstMalformed = MalformedEmpty
	lastMalformed  = MalformedHost
	firstFiltered  = FilteredMethod
	lastFiltered   = FilteredWindow
)

var outcomeNames = [NumOutcomes]string{
	OK:                "ok",
	MalformedEmpty:    "malformed: empty line",
	MalformedFields:   "malformed: bad fields",
	MalformedTime:     "malformed: bad time",
	MalformedRequest:  "malformed: bad request",
	MalformedStatus:   "malformed: bad status",
	MalformedHost:     "malformed: bad host",
	FilteredMethod:    "filtered: method",
	FilteredStatus:    "filtered: status",
	FilteredUserAgent: "filtered: user agent",
	FilteredExtension: "filtered: extension",
	FilteredPath:      "filtered: path",
	FilteredWindow:    "filtered: window",
}

// String returns a short lowercase description, e.g. "ok",
// "malformed: bad time" or "filtered: status".
func (o Outcome) String() string {
	if o < NumOutcomes {
		return outcomeNames[o]
	}
	return "outcome(" + strconv.Itoa(int(o)) + ")"
}

// Malformed reports whether o is one of the malformed reasons.
func (o Outcome) Malformed() bool {
	return o >= firstMalformed && o <= lastMalformed
}

// Filtered reports whether o is one of the filter reasons.
func (o Outcome) Filtered() bool {
	return o >= firstFiltered && o <= lastFiltered
}

// Counts holds one counter per Outcome: how many lines had each.
type Counts [NumOutcomes]uint64

// Lines returns the number of lines counted, whatever their outcome.
func (c *Counts) Lines() uint64 {
	var n uint64
	for _, v := range c {
		n += v
	}
	return n
}

// Malformed returns the number of malformed lines, all reasons together.
func (c *Counts) Malformed() uint64 {
	var n uint64
	for o := firstMalformed; o <= lastMalformed; o++ {
		n += c[o]
	}
	return n
}

// Filtered returns the number of filtered lines, all reasons together.
func (c *Counts) Filtered() uint64 {
	var n uint64
	for o := firstFiltered; o <= lastFiltered; o++ {
		n += c[o]
	}
	return n
}

// Add adds the counters of d to c.
func (c *Counts) Add(d *Counts) {
	for i := range c {
		c[i] += d[i]
	}
}
