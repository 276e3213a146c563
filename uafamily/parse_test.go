package uafamily_test

import (
	"bytes"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/logtally/logtally/botclass"
	. "github.com/logtally/logtally/uafamily"
)

// TestParse: current browsers' user agents as they send them, and the
// traps of the order (a Chromium browser sends Chrome/ and Safari/ after
// its own token; iPhones say "like Mac OS X"; Android says Linux).
func TestParse(t *testing.T) {
	for _, c := range []struct {
		ua   string
		want Families
	}{
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36", Families{Chrome, Windows, Desktop}},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36 Edg/142.0.0.0", Families{Edge, Windows, Desktop}},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/141.0.0.0 Safari/537.36 OPR/125.0.0.0", Families{Opera, Windows, Desktop}},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:145.0) Gecko/20100101 Firefox/145.0", Families{Firefox, Windows, Desktop}},
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.1 Safari/605.1.15", Families{Safari, MacOS, Desktop}},
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36", Families{Chrome, MacOS, Desktop}},
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36", Families{Chrome, Linux, Desktop}},
		{"Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:145.0) Gecko/20100101 Firefox/145.0", Families{Firefox, Linux, Desktop}},
		{"Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36", Families{Chrome, ChromeOS, Desktop}},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 18_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.6 Mobile/15E148 Safari/604.1", Families{Safari, IOS, Mobile}},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 18_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/142.0.7444.77 Mobile/15E148 Safari/604.1", Families{Chrome, IOS, Mobile}},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 18_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/145.0 Mobile/15E148 Safari/605.1.15", Families{Firefox, IOS, Mobile}},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 18_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) EdgiOS/142.0.3595.65 Version/18.0 Mobile/15E148 Safari/604.1", Families{Edge, IOS, Mobile}},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 18_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148", Families{Safari, IOS, Mobile}}, // an app's WebKit view
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 18_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/530.0.0.37.107]", Families{BrowserOther, IOS, Mobile}},
		{"Mozilla/5.0 (iPad; CPU OS 12_5_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/12.1.2 Mobile/15E148 Safari/604.1", Families{Safari, IPadOS, Tablet}},
		{"Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Mobile Safari/537.36", Families{Chrome, Android, Mobile}},
		{"Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36", Families{Chrome, Android, Tablet}},
		{"Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/29.0 Chrome/136.0.0.0 Mobile Safari/537.36", Families{SamsungInternet, Android, Mobile}},
		{"Mozilla/5.0 (Linux; Android 10; K; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/142.0.0.0 Mobile Safari/537.36", Families{Chrome, Android, Mobile}}, // WebView
		{"Mozilla/5.0 (Android 15; Mobile; rv:145.0) Gecko/145.0 Firefox/145.0", Families{Firefox, Android, Mobile}},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 YaBrowser/25.10.0.0 Safari/537.36", Families{Yandex, Windows, Desktop}},
		{"Mozilla/5.0 (Linux; U; Android 13; en-US; SM-A045F Build/TP1A.220624.014) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/123.0.6312.80 UCBrowser/13.8.2.1324 Mobile Safari/537.36", Families{UCBrowser, Android, Mobile}},
		{"Mozilla/5.0 (Windows NT 10.0; WOW64; Trident/7.0; rv:11.0) like Gecko", Families{IE, Windows, Desktop}},
		{"Mozilla/5.0 (compatible; MSIE 9.0; Windows NT 6.1; Trident/5.0)", Families{IE, Windows, Desktop}},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/138.0.0.0 Safari/537.36 Vivaldi/7.5.3735.56", Families{BrowserOther, Windows, Desktop}},
		{"Mozilla/5.0 (SMART-TV; Linux; Tizen 7.0) AppleWebKit/537.36 (KHTML, like Gecko) 85.0.4183.93/7.0 TV Safari/537.36", Families{BrowserOther, OSOther, DeviceOther}},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64; Xbox; Xbox One) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edge/44.18363.8131", Families{Edge, Windows, DeviceOther}},
		{"Mozilla/5.0 (Linux; Android 11; KFTRWI) AppleWebKit/537.36 (KHTML, like Gecko) Silk/138.2.10 like Chrome/138.0.7204.179 Safari/537.36", Families{BrowserOther, Android, Tablet}},
		{"Opera/9.80 (J2ME/MIDP; Opera Mini/9.80 (S60; SymbOS; Opera Mobi/23.348; U; en) Presto/2.5.25 Version/10.54", Families{Opera, OSOther, Mobile}},
		{"App/0 CFNetwork/1399 Darwin/22.1.0", Families{BrowserOther, IOS, DeviceOther}},
		{"", Families{}},
		{"-", Families{}},
	} {
		if got := Parse([]byte(c.ua)); got != c.want {
			t.Errorf("%s\n\tgot %s/%s/%s, want %s/%s/%s", c.ua, got.Browser, got.OS, got.Device, c.want.Browser, c.want.OS, c.want.Device)
		}
	}
}

// TestNames: every value has its name, and out-of-range values are
// "other".
func TestNames(t *testing.T) {
	seen := map[string]bool{}
	for b := range NumBrowsers {
		seen[b.String()] = true
	}
	if len(seen) != int(NumBrowsers) || Browser(200).String() != "other" || BrowserBot.String() != "(bot)" {
		t.Errorf("browser names: %v", seen)
	}
	clear(seen)
	for o := range NumOSes {
		seen[o.String()] = true
	}
	if len(seen) != int(NumOSes) || OS(200).String() != "other" || OSBot.String() != "(bot)" {
		t.Errorf("OS names: %v", seen)
	}
	clear(seen)
	for d := range NumDevices {
		seen[d.String()] = true
	}
	if len(seen) != int(NumDevices) || Device(200).String() != "other" || DeviceBot.String() != "(bot)" {
		t.Errorf("device names: %v", seen)
	}
}

// TestParseAllocs: Parse allocates nothing, on any of the Apache log's
// agents.
func TestParseAllocs(t *testing.T) {
	uas := apacheDistinct(t)
	if n := testing.AllocsPerRun(5, func() {
		for _, ua := range uas {
			sink = Parse(ua)
		}
	}); n != 0 {
		t.Errorf("Parse: %v allocations per pass over %d agents, want 0", n, len(uas))
	}
}

// TestApacheLog: the families of the people of the Apache test log (a
// 2015 log: Chrome, Firefox, Safari and IE on Windows, macOS, Linux, iOS
// and Android): most agents get an OS and a device type, and most a
// browser family (Android's old stock browser, common in 2015, Iceweasel
// and other rebuilds are "other").
func TestApacheLog(t *testing.T) {
	r := botclass.Default()
	var people, browser, os, dev int
	for _, ua := range apacheDistinct(t) {
		if cl := r.Classify(ua); cl != botclass.Person && cl != botclass.Suspect {
			continue
		}
		people++
		f := Parse(ua)
		if f.Browser != BrowserOther {
			browser++
		}
		if f.OS != OSOther {
			os++
		}
		if f.Device != DeviceOther {
			dev++
		}
	}
	t.Logf("%d distinct agents of people or suspects: %d with a browser family, %d an OS, %d a device type", people, browser, os, dev)
	if browser < people*65/100 || os < people*90/100 || dev < people*90/100 {
		t.Errorf("of %d agents, %d have a browser family, %d an OS, %d a device type: want 65%%, 90%%, 90%%", people, browser, os, dev)
	}
}

var sink Families

// BenchmarkParse is the cost of Parse on the Apache log's distinct
// agents, as a ratio to botclass's Classify on the same agents in the same
// loop (today's cost of a cache miss).
func BenchmarkParse(b *testing.B) {
	uas := apacheDistinct(b)
	r := botclass.Default()
	var cs botclass.Class
	b.ReportAllocs()
	var base, cost time.Duration
	for b.Loop() {
		t0 := time.Now()
		for _, ua := range uas {
			cs = r.Classify(ua)
		}
		t1 := time.Now()
		for _, ua := range uas {
			sink = Parse(ua)
		}
		base += t1.Sub(t0)
		cost += time.Since(t1)
	}
	_ = cs
	b.ReportMetric(float64(cost.Nanoseconds())/float64(b.N*len(uas)), "ns/agent")
	b.ReportMetric(float64(cost)/float64(base), "x_classify")
}

func apacheDistinct(tb testing.TB) [][]byte {
	data, err := os.ReadFile("../testdata/apache_combined_real.log")
	if err != nil {
		tb.Fatal(err)
	}
	seen := map[string]bool{}
	var uas [][]byte
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
		uas = append(uas, line[i+1:len(line)-1])
	}
	if len(uas) < 300 {
		tb.Fatalf("only %d distinct agents in the Apache log", len(uas))
	}
	return uas
}

// FuzzParse: Parse never panics, leaves its input alone, gives values in
// range and never (bot).
func FuzzParse(f *testing.F) {
	f.Add([]byte("Mozilla/5.0 (iPhone; CPU iPhone OS 18_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.6 Mobile/15E148 Safari/604.1"))
	f.Add([]byte("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36 Edg/142.0.0.0"))
	f.Add([]byte("((([[[ )))]]] Safari/ Version/ iPad"))
	f.Add([]byte("\xff\xfe\x00M"))
	f.Fuzz(func(t *testing.T, ua []byte) {
		orig := bytes.Clone(ua)
		got := Parse(ua)
		if got.Browser >= BrowserBot || got.OS >= OSBot || got.Device >= DeviceBot {
			t.Fatalf("Parse(%q) = %+v", ua, got)
		}
		if !bytes.Equal(ua, orig) {
			t.Fatal("Parse changed its input")
		}
	})
}

// TestTestdataPinned: testdata/uap-core's VERSIONS pins a commit, date and
// licence, and the licence is there.
func TestTestdataPinned(t *testing.T) {
	v, err := os.ReadFile("testdata/uap-core/VERSIONS")
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`(?m)^uap-core\thttps://github\.com/ua-parser/uap-core\t[0-9a-f]{40}\t\d{4}-\d\d-\d\d\tApache-2\.0\t[^\t]+$`)
	if !line.Match(v) {
		t.Errorf("testdata/uap-core/VERSIONS: no uap-core line with commit, date and licence:\n%s", v)
	}
	lic, err := os.ReadFile("testdata/uap-core/LICENSE")
	if err != nil || !bytes.Contains(lic, []byte("Apache License, Version 2.0")) {
		t.Errorf("testdata/uap-core/LICENSE: not the Apache licence (%v)", err)
	}
}
