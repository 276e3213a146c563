package referrer

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/logtally/logtally/internal/pinned"
)

// TestEmbeddedData: the embedded lists parse, VERSIONS pins a commit,
// date and licence for each upstream list, and the licences are there.
func TestEmbeddedData(t *testing.T) {
	tb, err := embedded()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(spamHosts, "\n"); tb.nSpam != n || n < 2000 {
		t.Errorf("spammers.txt: %d hosts of %d lines", tb.nSpam, n)
	}
	if n := strings.Count(upstreamHosts, "\n"); tb.nUp[Search]+tb.nUp[Social]+tb.nUp[AI] != n || tb.nUp[Search] < 500 || tb.nUp[Social] < 150 || tb.nUp[AI] < 15 {
		t.Errorf("hosts.txt: %d lines, read %v", n, tb.nUp)
	}
	if tb.nOwn[AI] < 15 || tb.nOwn[Email] < 20 || tb.nOwn[Search] < 4 || tb.nOwn[Social] < 15 {
		t.Errorf("own lists: %v", tb.nOwn)
	}
	// The upstream lines skipped (a path, or {} inside): few, and known.
	if len(tb.skipped) > 20 {
		t.Errorf("%d upstream lines skipped: %v", len(tb.skipped), tb.skipped)
	}
	t.Logf("spam %d; upstream search %d, social %d, ai %d (%d name.{} entries, %d skipped); own ai %d, email %d, search %d, social %d; %d hosts in the table",
		tb.nSpam, tb.nUp[Search], tb.nUp[Social], tb.nUp[AI], len(tb.anyTLD), len(tb.skipped), tb.nOwn[AI], tb.nOwn[Email], tb.nOwn[Search], tb.nOwn[Social], len(tb.exact))
	for _, s := range tb.skipped {
		t.Logf("skipped %s", s)
	}
	for _, s := range tb.shadowed {
		t.Logf("shadowed %s", s)
	}

	line := regexp.MustCompile(`^([^\t]+)\thttps://github\.com/([^\t]+)\t([0-9a-f]{40})\t(\d{4}-\d\d-\d\d)\tCC0-1\.0\t[^\t]+$`)
	want := map[string]string{
		"searchengine-and-social-list": "matomo-org/searchengine-and-social-list",
		"referrer-spam-list":           "matomo-org/referrer-spam-list",
	}
	licence := map[string]string{
		"searchengine-and-social-list": "CC0 1.0 Universal",
		"referrer-spam-list":           "Public Domain",
	}
	for _, s := range strings.Split(strings.TrimSpace(versions), "\n") {
		if strings.HasPrefix(s, "#") {
			continue
		}
		m := line.FindStringSubmatch(s)
		if m == nil {
			t.Errorf("VERSIONS: %q: want name, repository, commit, date, CC0-1.0, files", s)
			continue
		}
		if want[m[1]] != m[2] {
			t.Errorf("VERSIONS: %s from %s, want %q", m[1], m[2], want[m[1]])
		}
		delete(want, m[1])
		lic, err := os.ReadFile("data/" + m[1] + "/LICENSE")
		if err != nil || !strings.Contains(string(lic), licence[m[1]]) {
			t.Errorf("data/%s/LICENSE: not %s (%v)", m[1], licence[m[1]], err)
		}
	}
	for name := range want {
		t.Errorf("VERSIONS names no commit for %s", name)
	}
	if v := Version(); !strings.Contains(v, "searchengine-and-social-list@") || !strings.Contains(v, "referrer-spam-list@") {
		t.Errorf("Version() = %q", v)
	}
}

// TestEveryListLine: every line of every list classifies as its list
// says, through Classify, unless the test's own reading of the lists
// (spam wins at any level; an earlier list wins for the same host) says
// another list shadows it.
func TestEveryListLine(t *testing.T) {
	spam := map[string]bool{}
	for _, h := range strings.Split(strings.TrimSuffix(spamHosts, "\n"), "\n") {
		spam[strings.ToLower(h)] = true
	}
	// spamAt reports whether host or a parent domain is a spam host.
	spamAt := func(host string) bool {
		for h := host; ; {
			if spam[h] {
				return true
			}
			_, rest, ok := strings.Cut(h, ".")
			if !ok {
				return false
			}
			h = rest
		}
	}
	type line struct {
		where, host string
		ch          Channel
	}
	var lines []line
	for _, o := range ownLists {
		hosts, err := pinned.OwnList(o.file, o.text)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hosts {
			lines = append(lines, line{o.file, h, o.ch})
		}
	}
	for _, ch := range upstreamOrder {
		for _, l := range strings.Split(strings.TrimSuffix(upstreamHosts, "\n"), "\n") {
			h, c, _ := strings.Cut(l, "\t")
			if c == ch.String() {
				lines = append(lines, line{"hosts.txt", h, ch})
			}
		}
	}
	first := map[string]Channel{} // the channel the first list to name a host gives it
	c := New(nil)
	checked, shadowed := 0, 0
	for _, l := range lines {
		h := l.host
		if strings.Contains(h, "/") && !strings.HasPrefix(h, appPrefix) || strings.Contains(strings.TrimPrefix(strings.TrimSuffix(h, ".{}"), "{}."), "{}") {
			continue // skipped (TestEmbeddedData)
		}
		h = strings.TrimPrefix(h, "{}.")
		h = strings.Replace(h, ".{}", ".de", 1)
		ref := h
		if !strings.HasPrefix(h, appPrefix) {
			ref = "https://" + h + "/path?q=1"
		}
		key := strings.TrimPrefix(strings.ToLower(h), "www.")
		want := l.ch
		if f, ok := first[key]; ok {
			want = f
		} else {
			first[key] = l.ch
		}
		if !strings.HasPrefix(h, appPrefix) && spamAt(strings.ToLower(h)) {
			want = Spam
		}
		if want != l.ch {
			shadowed++
			t.Logf("%s: %s is %v", l.where, h, want)
		}
		got := c.Classify([]byte(ref))
		checked++
		if got.Channel != want {
			t.Errorf("%s: %q is %v %q, want %v", l.where, ref, got.Channel, got.Host, want)
		}
		if want != Spam && strings.HasSuffix(l.host, ".{}") && got.Host != key {
			t.Errorf("%s: %q: host %q, want %q", l.where, ref, got.Host, key)
		}
	}
	for _, h := range strings.Split(strings.TrimSuffix(spamHosts, "\n"), "\n") {
		checked++
		for _, ref := range []string{"http://" + h + "/", "https://sub." + h + ":8080/x"} {
			if got := c.Classify([]byte(ref)); got != (Result{HostSpam, Spam}) {
				t.Errorf("spammers.txt: %q is %v", ref, got)
			}
		}
	}
	t.Logf("%d list lines checked, %d shadowed by an earlier list or the spam list", checked, shadowed)
	if shadowed > 30 {
		t.Errorf("%d list lines shadowed", shadowed)
	}
}

// TestRefreshReproduces runs refresh.sh on local clones of the two
// upstream repositories (REFERRER_SE_GIT and REFERRER_SPAM_GIT, bare or
// not) into a copy of data/, and wants every file byte for byte. Skipped
// without the clones (there is no network in CI), or without jq and yq.
func TestRefreshReproduces(t *testing.T) {
	se, spamGit := os.Getenv("REFERRER_SE_GIT"), os.Getenv("REFERRER_SPAM_GIT")
	if se == "" || spamGit == "" {
		t.Skip("set REFERRER_SE_GIT and REFERRER_SPAM_GIT to local clones of matomo-org/searchengine-and-social-list and matomo-org/referrer-spam-list")
	}
	for _, tool := range []string{"bash", "git", "jq", "yq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	// The script, the library it sources and VERSIONS, laid out as in the
	// module.
	root := t.TempDir()
	dir := filepath.Join(root, "referrer")
	for from, to := range map[string]string{
		"refresh.sh":                   "referrer/refresh.sh",
		"../internal/pinned/pinned.sh": "internal/pinned/pinned.sh",
		"data/VERSIONS":                "referrer/data/VERSIONS",
	} {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, to)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, to), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("bash", filepath.Join(dir, "refresh.sh"), "--se-git", se, "--spam-git", spamGit)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("refresh.sh: %v\n%s", err, out)
	}
	for _, f := range []string{
		"VERSIONS",
		"searchengine-and-social-list/hosts.txt",
		"searchengine-and-social-list/LICENSE",
		"referrer-spam-list/spammers.txt",
		"referrer-spam-list/LICENSE",
	} {
		want, err := os.ReadFile(filepath.Join("data", f))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, "data", f))
		if err != nil {
			t.Errorf("refresh.sh wrote no %s: %v", f, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("refresh.sh's %s differs from the committed one (%d bytes, committed %d)", f, len(got), len(want))
		}
	}
}
