package parser

import "strconv"

// Outcome is the result of parsing one line: OK, or the reason the line
// gives no hit. Malformed reasons come first; filter reasons (issue 3) will
// follow them. Values are not stable across versions: do not persist them.
type Outcome uint8

// The outcomes of Parse.
const (
	// OK means the line is a hit.
	OK Outcome = iota
	// MalformedEmpty is an empty or blank line.
	MalformedEmpty
	// MalformedFields is a line whose field structure is wrong: missing
	// fields (a line cut short), a request without its closing quote, a
	// size that is neither digits nor "-".
	MalformedFields
	// MalformedTime is a timestamp that is not "[dd/Mon/yyyy:hh:mm:ss ±hhmm]"
	// with a possible date and time, or one before 1970.
	MalformedTime
	// MalformedRequest is a request line that has no usable page: "-",
	// empty, binary garbage (TLS to a plain port), a method that is not an
	// HTTP token, or a target that is not a path ("*", "host:443").
	MalformedRequest
	// MalformedStatus is a status that is not three digits in 100..599.
	MalformedStatus

	// NumOutcomes is the number of outcomes, for arrays of per-outcome
	// counters indexed by Outcome.
	NumOutcomes

	firstMalformed = MalformedEmpty
	lastMalformed  = MalformedStatus
)

var outcomeNames = [NumOutcomes]string{
	OK:               "ok",
	MalformedEmpty:   "malformed: empty line",
	MalformedFields:  "malformed: bad fields",
	MalformedTime:    "malformed: bad time",
	MalformedRequest: "malformed: bad request",
	MalformedStatus:  "malformed: bad status",
}

// String returns a short lowercase description, e.g. "ok" or
// "malformed: bad time".
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
