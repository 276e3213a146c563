package notify

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/config"
)

// The unit files live in systemd/, which holds no Go package; their checks
// live here, beside the notifications the daemon's relies on.
const unitPath = "../systemd/logtally.service"

// units are every unit shipped: the daemon's and the dashboard's.
var units = []string{unitPath, "../systemd/logtally-dashboard.service"}

// maxExposure is the bound on `systemd-analyze security` for the unit.
const maxExposure = 2.0

func systemdAnalyze(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not installed (Debian package systemd): the unit file is not checked")
	}
	return p
}

var exposureRE = regexp.MustCompile(`Overall exposure level for \S+: ([0-9]+(?:\.[0-9]+)?)`)

func TestUnitSecurityExposure(t *testing.T) {
	sa := systemdAnalyze(t)
	for _, unit := range units {
		out, err := exec.Command(sa, "security", "--no-pager", "--offline=yes", unit).CombinedOutput()
		if strings.Contains(string(out), "--offline") && !exposureRE.Match(out) {
			t.Skipf("this systemd-analyze has no --offline (systemd 250 or later needed):\n%s", out)
		}
		m := exposureRE.FindSubmatch(out)
		if m == nil {
			t.Fatalf("systemd-analyze security %s: %v, no overall exposure level in:\n%s", unit, err, out)
		}
		score, _ := strconv.ParseFloat(string(m[1]), 64)
		t.Logf("%s: overall exposure level %.1f (bound %.1f)", filepath.Base(unit), score, maxExposure)
		if score > maxExposure {
			t.Errorf("%s: exposure %.1f > %.1f:\n%s", unit, score, maxExposure, out)
		}
	}
}

// verify runs `systemd-analyze verify` on a copy of the unit at path,
// with ExecStart's binary replaced by bin when bin is set, and returns its
// output lines.
func verify(t *testing.T, path, bin string) []string {
	t.Helper()
	sa := systemdAnalyze(t)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	unit := string(b)
	if bin != "" {
		const line = "ExecStart=/usr/bin/logtally "
		if !strings.Contains(unit, line) {
			t.Fatalf("the unit has no %q line", line)
		}
		unit = strings.Replace(unit, line, "ExecStart="+bin+" ", 1)
	}
	// The file name is the unit name.
	copyPath := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(copyPath, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	// The exit status is not checked: the lines say what is wrong.
	out, _ := exec.Command(sa, "verify", "--no-pager", copyPath).CombinedOutput()
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// With ExecStart pointing at a binary that exists, verify has nothing to
// say about the unit. Lines about other units (the host's own, in a
// container) are logged, not failures.
func TestUnitVerify(t *testing.T) {
	bin := "/bin/true"
	if _, err := os.Stat(bin); err != nil {
		bin = "/usr/bin/true"
	}
	for _, unit := range units {
		for _, l := range verify(t, unit, bin) {
			if strings.Contains(l, "logtally") {
				t.Errorf("systemd-analyze verify %s: %s", filepath.Base(unit), l)
			} else {
				t.Logf("systemd-analyze verify (not about the unit): %s", l)
			}
		}
	}
}

// The unit as shipped: its only complaint, where logtally is not installed,
// is the missing /usr/bin/logtally.
func TestUnitVerifyAsShipped(t *testing.T) {
	_, err := os.Stat("/usr/bin/logtally")
	missing := err != nil
	for _, unit := range units {
		for _, l := range verify(t, unit, "") {
			switch {
			case !strings.Contains(l, "logtally"):
				t.Logf("systemd-analyze verify (not about the unit): %s", l)
			case missing && strings.Contains(l, "/usr/bin/logtally is not executable"):
			default:
				t.Errorf("systemd-analyze verify %s: %s", filepath.Base(unit), l)
			}
		}
	}
}

// unitSetting returns the value of key in the unit's [Service] section
// (the last assignment wins, as in systemd).
func unitSetting(t *testing.T, key string) string {
	t.Helper()
	b, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	val, found := "", false
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), "="); ok && k == key {
			val, found = strings.TrimSpace(v), true
		}
	}
	if !found {
		t.Fatalf("%s: no %s=", unitPath, key)
	}
	return val
}

// timespan parses the systemd time spans the unit uses: "45s", "3min",
// "1min 30s".
func timespan(t *testing.T, s string) time.Duration {
	t.Helper()
	var total time.Duration
	for _, f := range strings.Fields(s) {
		f = strings.Replace(f, "min", "m", 1)
		d, err := time.ParseDuration(f)
		if err != nil {
			t.Fatalf("time span %q: %v", s, err)
		}
		total += d
	}
	return total
}

// The unit's timeouts are tied to the config's: TimeoutStopSec must cover
// shutdown_timeout plus the disconnect and a margin, and WatchdogSec must
// exceed pipeline.Alive's own limit for the flusher.
func TestUnitTimeoutsMatchConfig(t *testing.T) {
	stop := timespan(t, unitSetting(t, "TimeoutStopSec"))
	wd := timespan(t, unitSetting(t, "WatchdogSec"))
	example, err := config.Load("../systemd/logtally.toml")
	if err != nil {
		t.Fatalf("the example config: %v", err)
	}
	for name, cfg := range map[string]config.Config{"defaults": config.Default(), "systemd/logtally.toml": example} {
		const margin = 15 * time.Second // disconnect (5 s) and the final commit
		if st := cfg.ShutdownTimeout.D(); stop < st+margin {
			t.Errorf("%s: TimeoutStopSec=%v does not exceed shutdown_timeout %v + %v", name, stop, st, margin)
		}
		// As pipeline.Alive computes it.
		alive := 2*(cfg.Flush.Interval.D()+cfg.Flush.MaxBackoff.D()+cfg.Mongo.Timeout.D()) + time.Second
		if wd <= alive {
			t.Errorf("%s: WatchdogSec=%v does not exceed pipeline.Alive's limit %v", name, wd, alive)
		}
	}
}
