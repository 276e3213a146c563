// Package compare compares implementations of uafamily's families on
// uap-core's test agents (accuracy) and on the distinct user agents of the
// repository's Apache log (cost of a cache miss). It is a module of its
// own so that the libraries compared are not dependencies of logtally:
//
//	cd uafamily/compare && go test -v -run Compare -bench . -benchtime 20x
package compare

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/uafamily"
	"github.com/logtally/logtally/uafamily/internal/uapcore"
	"github.com/medama-io/go-useragent"
	"github.com/medama-io/go-useragent/agents"
	"github.com/ua-parser/uap-go/uaparser"
)

// impl is one implementation: the families of an agent.
type impl struct {
	name  string
	parse func(ua string) uafamily.Families
}

func impls(tb testing.TB) []impl {
	med := useragent.NewParser()
	uap, err := uaparser.New(uaparser.WithCacheSize(1)) // every agent a miss
	if err != nil {
		tb.Fatal(err)
	}
	return []impl{
		{"uafamily (own table)", func(ua string) uafamily.Families { return uafamily.Parse(unsafe.Slice(unsafe.StringData(ua), len(ua))) }}, // the bytes without a copy: Parse only reads them
		{"medama-io/go-useragent v1.2.5", func(ua string) uafamily.Families { return medama(med.Parse(ua)) }},
		{"ua-parser/uap-go 17c35e68e58c", func(ua string) uafamily.Families { return uapGo(uap.Parse(ua)) }},
	}
}

// medama maps medama-io/go-useragent's answer to our families.
func medama(a useragent.UserAgent) uafamily.Families {
	var f uafamily.Families
	switch a.Browser() {
	case agents.BrowserChrome:
		f.Browser = uafamily.Chrome
	case agents.BrowserEdge:
		f.Browser = uafamily.Edge
	case agents.BrowserFirefox:
		f.Browser = uafamily.Firefox
	case agents.BrowserSafari:
		f.Browser = uafamily.Safari
	case agents.BrowserOpera, agents.BrowserOperaMini:
		f.Browser = uafamily.Opera
	case agents.BrowserSamsung:
		f.Browser = uafamily.SamsungInternet
	case agents.BrowserYandex:
		f.Browser = uafamily.Yandex
	case agents.BrowserIE:
		f.Browser = uafamily.IE
	}
	switch a.OS() {
	case agents.OSWindows:
		f.OS = uafamily.Windows
	case agents.OSMacOS:
		f.OS = uafamily.MacOS
	case agents.OSIOS:
		f.OS = uafamily.IOS
	case agents.OSAndroid:
		f.OS = uafamily.Android
	case agents.OSLinux:
		f.OS = uafamily.Linux
	case agents.OSChromeOS:
		f.OS = uafamily.ChromeOS
	}
	switch a.Device() {
	case agents.DeviceDesktop:
		f.Device = uafamily.Desktop
	case agents.DeviceMobile:
		f.Device = uafamily.Mobile
	case agents.DeviceTablet:
		f.Device = uafamily.Tablet
	}
	return f
}

// uapGo maps uap-go's answer with the mapping the labels use; a device
// family that does not tell the type is a phone or tablet model: mobile.
func uapGo(c *uaparser.Client) uafamily.Families {
	f := uafamily.Families{Browser: uapcore.Browser(c.UserAgent.Family), OS: uapcore.OS(c.Os.Family)}
	if d, ok := uapcore.Device(c.Device.Family, c.Device.Brand); ok && d != uafamily.DeviceBot {
		f.Device = d
	} else if c.Device.Family != "Other" {
		f.Device = uafamily.Mobile
	} else {
		switch f.OS {
		case uafamily.Windows, uafamily.MacOS, uafamily.Linux, uafamily.ChromeOS:
			f.Device = uafamily.Desktop
		}
	}
	return f
}

// TestCompare prints each implementation's accuracy per family on
// uap-core's agents, and its cost per agent on a miss.
func TestCompare(t *testing.T) {
	s, err := uapcore.Load("../testdata/uap-core")
	if err != nil {
		t.Fatal(err)
	}
	log := distinctAgents(t)
	var sum strings.Builder
	fmt.Fprintf(&sum, "%-30s %8s %8s %8s %10s %12s\n", "implementation", "browser", "OS", "device", "ns/agent", "allocs/agent")
	for _, im := range impls(t) {
		b := uapcore.ScoreBrowser(s.Browser, func(ua string) uafamily.Browser { return im.parse(ua).Browser })
		o := uapcore.ScoreOS(s.OS, func(ua string) uafamily.OS { return im.parse(ua).OS })
		d := uapcore.ScoreDevice(s.Device, func(ua string) uafamily.Device { return im.parse(ua).Device })
		t.Logf("%s, browser:\n%s", im.name, b)
		t.Logf("%s, OS:\n%s", im.name, o)
		t.Logf("%s, device:\n%s", im.name, d)
		allocs := testing.AllocsPerRun(3, func() {
			for _, ua := range log {
				sink = im.parse(ua)
			}
		}) / float64(len(log))
		start := time.Now()
		const rounds = 5
		for range rounds {
			for _, ua := range log {
				sink = im.parse(ua)
			}
		}
		ns := float64(time.Since(start).Nanoseconds()) / float64(rounds*len(log))
		fmt.Fprintf(&sum, "%-30s %7.1f%% %7.1f%% %7.1f%% %10.0f %12.1f\n", im.name, 100*b.Accuracy(), 100*o.Accuracy(), 100*d.Accuracy(), ns, allocs)
	}
	t.Logf("uap-core agents: %d browser, %d OS, %d device; cost on the Apache log's %d distinct agents (a rough time: see BenchmarkMiss)\n%s",
		len(s.Browser), len(s.OS), len(s.Device), len(log), sum.String())
}

var sink uafamily.Families
var classSink botclass.Class

// BenchmarkMiss is the cost of each implementation on a cache miss, over
// the Apache log's distinct agents, as a ratio to botclass's Classify (the
// miss of today's cache) measured in the same loop.
func BenchmarkMiss(b *testing.B) {
	log := distinctAgents(b)
	raw := make([][]byte, len(log))
	for i, ua := range log {
		raw[i] = []byte(ua)
	}
	r := botclass.Default()
	for _, im := range impls(b) {
		b.Run(strings.Fields(im.name)[0], func(b *testing.B) {
			b.ReportAllocs()
			var base, cost time.Duration
			for b.Loop() {
				t0 := time.Now()
				for _, ua := range raw {
					classSink = r.Classify(ua)
				}
				t1 := time.Now()
				for _, ua := range log {
					sink = im.parse(ua)
				}
				base += t1.Sub(t0)
				cost += time.Since(t1)
			}
			b.ReportMetric(float64(cost.Nanoseconds())/float64(b.N*len(log)), "ns/agent")
			b.ReportMetric(float64(cost)/float64(base), "x_classify")
		})
	}
}

// distinctAgents returns the distinct user agents of the repository's
// Apache log.
func distinctAgents(tb testing.TB) []string {
	data, err := os.ReadFile("../../testdata/apache_combined_real.log")
	if err != nil {
		tb.Fatal(err)
	}
	seen := map[string]bool{}
	var uas []string
	for _, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimRight(line, " \r")
		if len(line) < 2 || line[len(line)-1] != '"' {
			continue
		}
		i := bytes.LastIndexByte(line[:len(line)-1], '"')
		if i < 0 || seen[string(line[i+1:len(line)-1])] {
			continue
		}
		seen[string(line[i+1:len(line)-1])] = true
		uas = append(uas, string(line[i+1:len(line)-1]))
	}
	if len(uas) < 300 {
		tb.Fatalf("only %d distinct agents in the Apache log", len(uas))
	}
	return uas
}
