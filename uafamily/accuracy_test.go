package uafamily_test

import (
	"testing"

	"github.com/logtally/logtally/uafamily"
	"github.com/logtally/logtally/uafamily/internal/uapcore"
)

func TestUAPCoreAccuracy(t *testing.T) {
	s, err := uapcore.Load("testdata/uap-core")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("uap-core: %d browser, %d OS, %d device agents scored (%d bots, %d devices of untold type left out)", len(s.Browser), len(s.OS), len(s.Device), s.Bots, s.Unmapped)
	b := uapcore.ScoreBrowser(s.Browser, func(ua string) uafamily.Browser { return uafamily.Parse([]byte(ua)).Browser })
	o := uapcore.ScoreOS(s.OS, func(ua string) uafamily.OS { return uafamily.Parse([]byte(ua)).OS })
	d := uapcore.ScoreDevice(s.Device, func(ua string) uafamily.Device { return uafamily.Parse([]byte(ua)).Device })
	t.Logf("browser:\n%s", b)
	t.Logf("OS:\n%s", o)
	t.Logf("device:\n%s", d)
	// The floors: uap-core's families, mapped to ours, for all the
	// agents of a file, and for each family it has 10 agents of or more.
	// (Its browser tests are mostly the long tail: 1,203 of 1,324 are
	// "other".)
	for _, c := range []struct {
		dim                  string
		s                    *uapcore.Score
		all, recall, precise float64
	}{
		{"browser", b, 0.93, 0.40, 0.40}, // Safari: uap-core counts apps' WebKit views as Safari, we count those naming themselves as other
		{"OS", o, 0.90, 0.80, 0.70},
		{"device", d, 0.90, 0.75, 0.90},
	} {
		if a := c.s.Accuracy(); a < c.all {
			t.Errorf("%s: %.1f%% of uap-core's agents right, want %.0f%% or more", c.dim, 100*a, 100*c.all)
		}
		for i, f := range c.s.T {
			if f.Want < 10 {
				continue
			}
			if r := f.Recall(); r < c.recall {
				t.Errorf("%s %s: recall %.1f%%, want %.0f%% or more", c.dim, c.s.Names[i], 100*r, 100*c.recall)
			}
			if p := f.Precision(); p < c.precise {
				t.Errorf("%s %s: precision %.1f%%, want %.0f%% or more", c.dim, c.s.Names[i], 100*p, 100*c.precise)
			}
		}
	}
}
