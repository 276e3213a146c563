package loggen

import (
	"bytes"
	"net/netip"
	"regexp"
	"strings"
	"testing"

	"github.com/logtally/logtally/botclass"
)

var combined = regexp.MustCompile(`^[0-9a-f:.]+ - - \[\d\d/May/2024:\d\d:\d\d:\d\d \+0200\] "(GET|POST|HEAD) /[^ ]+ HTTP/1\.1" (\d{3}) \d+ "([^"]*)" "([^"]+)"$`)

func TestLinesAreCombinedAndRepeatable(t *testing.T) {
	a, b := New(7), New(7)
	var total int
	statuses := map[string]int{}
	classes := map[botclass.Class]int{}
	for i := 0; i < 1000; i++ {
		la, lb := a.Append(nil, false), b.Append(nil, false)
		if !bytes.Equal(la, lb) {
			t.Fatalf("line %d differs for the same seed:\n%s\n%s", i, la, lb)
		}
		m := combined.FindSubmatch(la)
		if m == nil {
			t.Fatalf("line %d is not combined format: %s", i, la)
		}
		statuses[string(m[2][:1])]++
		c, ok := Class(string(m[4]))
		if !ok {
			t.Fatalf("line %d: user agent %q not in Agents", i, m[4])
		}
		classes[c]++
		total += len(la)
	}
	if avg := total / 1000; avg < 150 || avg > 250 {
		t.Fatalf("average line %d bytes, want about 200", avg)
	}
	if statuses["2"] < 500 || statuses["1"] == 0 || statuses["3"] == 0 || statuses["4"] == 0 || statuses["5"] == 0 {
		t.Errorf("status mix by class %v: want mostly 2xx and some of every other", statuses)
	}
	if classes[botclass.Person] < 500 {
		t.Errorf("%d of 1000 lines from people, want most", classes[botclass.Person])
	}
	for c := range botclass.NumClasses {
		if classes[c] == 0 {
			t.Errorf("no line of class %v", c)
		}
	}
	if c := New(7).Append(nil, true); bytes.Contains(c, []byte(`"-"`)) || bytes.Count(c, []byte(`"`)) != 2 {
		t.Fatalf("common line has more than the request quoted: %s", c)
	}
}

var measured = regexp.MustCompile(`^[0-9a-f:.]+ - - \[[^\]]+\] "[A-Z]+ /[^ ]+ HTTP/1\.1" (\d{3}) (\d+|-) "[^"]*" "[^"]+" rt=(\d+\.\d{3}|-) urt="(-|\d+\.\d{3}(?:(?:, | : )\d+\.\d{3})*)"$`)

// TestMeasuresLines checks the lines of Gen.Measures: sizes "-" for
// responses without a body only, and every form of the timing fields.
func TestMeasuresLines(t *testing.T) {
	g := New(3)
	g.Measures = true
	seen := map[string]bool{}
	for i := 0; i < 2000; i++ {
		l := g.Append(nil, false)
		m := measured.FindSubmatch(l)
		if m == nil {
			t.Fatalf("line %d: %s", i, l)
		}
		status, size, rt, urt := string(m[1]), string(m[2]), string(m[3]), string(m[4])
		if size == "-" {
			if status[0] != '1' && status != "204" && status != "304" {
				t.Errorf("line %d: size - with status %s", i, status)
			}
			seen["size -"] = true
		}
		if rt == "-" {
			seen["rt -"] = true
		}
		switch {
		case urt == "-":
			seen["urt -"] = true
		case bytes.Contains(m[4], []byte(",")):
			seen["urt list"] = true
		default:
			seen["urt one"] = true
		}
	}
	for _, k := range []string{"size -", "rt -", "urt -", "urt list", "urt one"} {
		if !seen[k] {
			t.Errorf("no line with %s", k)
		}
	}
	if b := New(3).AppendRest(nil); !regexp.MustCompile(`^ \d{3} \d+ "[^"]*" "[^"]+"$`).Match(b) {
		t.Errorf("AppendRest: %q", b)
	}
}

func TestAgentsTable(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range Agents {
		if seen[a.UA] || a.Weight <= 0 || a.Class >= botclass.NumClasses {
			t.Errorf("agent %q: duplicate, or weight %d, or class %v", a.UA, a.Weight, a.Class)
		}
		seen[a.UA] = true
		if person := a.Class == botclass.Person; a.Browser == "" || a.OS == "" || a.Device == "" || a.Crawler == "" ||
			person != (a.Crawler == people) || person == (a.Browser == bot) || person == (a.OS == bot) || person == (a.Device == bot) {
			t.Errorf("agent %q (%v): families %q %q %q, crawler %q: want a person's families and (people), or a bot's (bot) and its name",
				a.UA, a.Class, a.Browser, a.OS, a.Device, a.Crawler)
		}
	}
	if c, ok := Class("GPTBot/1.0"); ok || c != botclass.Person {
		t.Errorf("Class of an agent not in the table: %v, %v", c, ok)
	}
}

// TestReferrersAndClients: every referer and client of the lines is one
// of the tables' (ReferrerOf with Gen.Site, NetworkOf, or a random
// address in no network), every row is drawn, in about its share, and
// the tables are well formed.
func TestReferrersAndClients(t *testing.T) {
	refs, hosts := map[string]bool{}, map[string]bool{}
	for _, r := range Referrers {
		if refs[r.Ref] || r.Host == "" || r.Channel == "" || r.Weight <= 0 || r.Self != strings.HasPrefix(r.Ref, "/") {
			t.Errorf("referrer %q: duplicate, no values, weight %d, or a Self row not a path", r.Ref, r.Weight)
		}
		refs[r.Ref] = true
		hosts[r.Host] = true
	}
	if len(hosts) < 10 || !hosts["(direct)"] || !hosts["(self)"] || !hosts["(spam)"] || !hosts["(invalid)"] {
		t.Errorf("referrer hosts %v: want direct, self, spam, invalid and more", hosts)
	}
	sum := NoNetworkWeight
	for i, n := range Networks {
		sum += n.Weight
		if !n.Prefix.IsValid() || n.Prefix != n.Prefix.Masked() || n.Weight <= 0 || n.Country == "" && n.ASN == 0 || (n.ASN == 0) != (n.Org == "") {
			t.Errorf("network %v: not a masked prefix, weight %d, or no country and no AS, or an AS without organisation", n.Prefix, n.Weight)
		}
		for _, o := range Networks[:i] {
			if o.Prefix.Overlaps(n.Prefix) || o.ASN == n.ASN && o.ASN != 0 && o.Org != n.Org {
				t.Errorf("networks %v and %v overlap, or one AS with two names", o.Prefix, n.Prefix)
			}
		}
		if n.Prefix.Overlaps(netip.MustParsePrefix("2001:db8::/32")) {
			t.Errorf("network %v holds random addresses", n.Prefix)
		}
	}

	g := New(11)
	g.Site = "s.test"
	const lines = 20000
	byRef, byNet := map[string]int{}, map[netip.Prefix]int{}
	none, v6 := 0, 0
	for i := range lines {
		l := g.Append(nil, false)
		m := combined.FindSubmatch(l)
		if m == nil {
			t.Fatalf("line %d is not combined format: %s", i, l)
		}
		ref := string(m[3])
		r, ok := ReferrerOf(ref, "s.test")
		if !ok {
			t.Fatalf("line %d: referer %q in no row", i, ref)
		}
		if _, other := ReferrerOf(ref, "t.test"); other == r.Self {
			t.Fatalf("line %d: referer %q found for another site's host", i, ref)
		}
		byRef[r.Ref]++
		addr, err := netip.ParseAddr(string(l[:bytes.IndexByte(l, ' ')]))
		if err != nil {
			t.Fatalf("line %d: client: %v", i, err)
		}
		if n, ok := NetworkOf(addr); ok {
			byNet[n.Prefix]++
		} else {
			none++
			if addr.Is6() {
				v6++
			}
		}
	}
	share := func(what string, got, weight, sum int) {
		if want := lines * weight / sum; got < want*8/10 || got > want*12/10 {
			t.Errorf("%s: %d lines, want about %d", what, got, want)
		}
	}
	rsum := 0
	for _, r := range Referrers {
		rsum += r.Weight
	}
	for _, r := range Referrers {
		share("referrer "+r.Ref, byRef[r.Ref], r.Weight, rsum)
	}
	for _, n := range Networks {
		share("network "+n.Prefix.String(), byNet[n.Prefix], n.Weight, sum)
	}
	share("no network", none, NoNetworkWeight, sum)
	if v6 < none/4 || v6 > none/2 {
		t.Errorf("%d of %d clients in no network are IPv6, want about a third", v6, none)
	}
}
