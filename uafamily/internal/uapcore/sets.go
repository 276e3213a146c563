package uapcore

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/uafamily"
)

// Labelled is a user agent and the value uap-core's family maps to.
type Labelled struct {
	UA   string
	Want uint8
}

// Sets are the labelled agents of the three uap-core files, without the
// declared bots (agents botclass classifies as search, ai, tool or bot, or
// uap-core's "Spider" device): a bot gets (bot) from the caller, not from
// a parser. Suspect agents are kept: most are old browsers (uap-core's
// tests hold many), still a browser family for a parser.
type Sets struct {
	Browser, OS, Device []Labelled
	// Bots and Unmapped count the cases left out: bots, and devices
	// whose uap-core family does not tell the type.
	Bots, Unmapped int
}

// Load reads dir's three files (testdata/uap-core).
func Load(dir string) (*Sets, error) {
	r := botclass.Default()
	s := &Sets{}
	for _, f := range []struct {
		name string
		dst  *[]Labelled
		m    func(Case) (uint8, bool)
	}{
		{"test_ua.yaml", &s.Browser, func(c Case) (uint8, bool) { return uint8(Browser(c.Family)), true }},
		{"test_os.yaml", &s.OS, func(c Case) (uint8, bool) { return uint8(OS(c.Family)), true }},
		{"test_device.yaml.gz", &s.Device, func(c Case) (uint8, bool) {
			d, ok := Device(c.Family, c.Brand)
			return uint8(d), ok
		}},
	} {
		cases, err := Read(filepath.Join(dir, f.name))
		if err != nil {
			return nil, err
		}
		if len(cases) < 400 {
			return nil, fmt.Errorf("%s: only %d cases", f.name, len(cases))
		}
		seen := map[string]bool{}
		for _, c := range cases {
			if seen[c.UA] {
				continue // the device file repeats agents
			}
			seen[c.UA] = true
			if cl := r.Classify([]byte(c.UA)); cl != botclass.Person && cl != botclass.Suspect || c.Family == "Spider" {
				s.Bots++
				continue
			}
			want, ok := f.m(c)
			if !ok {
				s.Unmapped++
				continue
			}
			*f.dst = append(*f.dst, Labelled{c.UA, want})
		}
	}
	return s, nil
}

// Tally is one family's score: the cases uap-core puts in it (Want), those
// of them also given it (Right), and the cases given it (Said).
type Tally struct{ Want, Right, Said int }

// Recall is Right/Want (1 if none).
func (t Tally) Recall() float64 { return ratio(t.Right, t.Want) }

// Precision is Right/Said (1 if none).
func (t Tally) Precision() float64 { return ratio(t.Right, t.Said) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

// Score is a tally per family of one dimension.
type Score struct {
	Names        []string
	T            []Tally
	Cases, Right int
}

// NewScore returns an empty score of n families named by name.
func NewScore(n int, name func(i int) string) *Score {
	s := &Score{T: make([]Tally, n)}
	for i := range n {
		s.Names = append(s.Names, name(i))
	}
	return s
}

// Add counts a case uap-core puts in want and the parser in got.
func (s *Score) Add(want, got uint8) {
	s.Cases++
	s.T[want].Want++
	s.T[got].Said++
	if want == got {
		s.Right++
		s.T[want].Right++
	}
}

// Accuracy is the share of cases given uap-core's family.
func (s *Score) Accuracy() float64 { return ratio(s.Right, s.Cases) }

// String is the score as a table: per family, cases, recall, precision.
func (s *Score) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-17s %6s %7s %9s\n", "family", "cases", "recall", "precision")
	for i, t := range s.T {
		if t.Want == 0 && t.Said == 0 {
			continue
		}
		fmt.Fprintf(&b, "%-17s %6d %6.1f%% %8.1f%%\n", s.Names[i], t.Want, 100*t.Recall(), 100*t.Precision())
	}
	fmt.Fprintf(&b, "%-17s %6d %6.1f%%\n", "all", s.Cases, 100*s.Accuracy())
	return b.String()
}

// ScoreBrowser scores parse's browser families on set.
func ScoreBrowser(set []Labelled, parse func(string) uafamily.Browser) *Score {
	s := NewScore(int(uafamily.NumBrowsers), func(i int) string { return uafamily.Browser(i).String() })
	for _, c := range set {
		s.Add(c.Want, uint8(parse(c.UA)))
	}
	return s
}

// ScoreOS scores parse's OS families on set. uap-core says iOS for iPads:
// IPadOS is right for them (and counted as iOS).
func ScoreOS(set []Labelled, parse func(string) uafamily.OS) *Score {
	s := NewScore(int(uafamily.NumOSes), func(i int) string { return uafamily.OS(i).String() })
	for _, c := range set {
		got := parse(c.UA)
		if got == uafamily.IPadOS {
			got = uafamily.IOS
		}
		s.Add(c.Want, uint8(got))
	}
	return s
}

// ScoreDevice scores parse's device types on set.
func ScoreDevice(set []Labelled, parse func(string) uafamily.Device) *Score {
	s := NewScore(int(uafamily.NumDevices), func(i int) string { return uafamily.Device(i).String() })
	for _, c := range set {
		s.Add(c.Want, uint8(parse(c.UA)))
	}
	return s
}
