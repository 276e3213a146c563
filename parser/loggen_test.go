package parser

import (
	"net/netip"
	"strconv"
	"testing"

	"github.com/logtally/logtally/dims"
	"github.com/logtally/logtally/geo"
	"github.com/logtally/logtally/internal/loggen"
	"github.com/logtally/logtally/internal/loggeo"
)

// TestLoggenLists: the values loggen's lists write by hand for each
// agent, referrer and network (which internal/bucketcheck counts the
// end-to-end tests' files with) are the parser's, with loggeo's
// databases: each row of each list, on lines from every client kind.
func TestLoggenLists(t *testing.T) {
	cc, asn := loggeo.Write(t, t.TempDir())
	h, err := geo.OpenHolder(cc, asn)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Config{Format: "combined", Site: "s.test", Dims: &DimsConfig{Geo: h}})
	if err != nil {
		t.Fatal(err)
	}
	g := loggen.New(1)
	g.Site = "s.test"
	var hit Hit
	for i := range 2000 {
		a, r := loggen.Agents[i%len(loggen.Agents)], loggen.Referrers[i%len(loggen.Referrers)]
		ref := r.Ref
		if r.Self {
			ref = "https://s.test" + r.Ref
		}
		client := string(g.AppendClient(nil))
		if o := p.Parse([]byte(dimsLine(client, ref, a.UA)), &hit); o != OK {
			t.Fatalf("%s: %v", client, o)
		}
		want := dims.Values{dims.Referrer: r.Host, dims.Channel: r.Channel, dims.Country: dims.Unknown, dims.ASN: dims.Unknown,
			dims.Browser: a.Browser, dims.OS: a.OS, dims.Device: a.Device, dims.Crawler: a.Crawler}
		n, in := loggen.NetworkOf(netip.MustParseAddr(client))
		if in && n.Country != "" {
			want[dims.Country] = n.Country
		}
		if in && n.ASN != 0 {
			want[dims.ASN] = "AS" + strconv.FormatUint(uint64(n.ASN), 10) + " " + n.Org
		}
		if hit.Dims != want || hit.Bot != a.Class {
			t.Errorf("client %s, referer %q, agent %q:\n got %q %v\nwant %q %v", client, ref, a.UA, hit.Dims, hit.Bot, want, a.Class)
		}
	}
}
