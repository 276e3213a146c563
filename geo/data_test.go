package geo

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestEmbeddedHosting: the embedded list parses, VERSIONS pins a commit,
// date and licence, the licence is there, and known networks are in it
// (clouds) or not (access networks).
func TestEmbeddedHosting(t *testing.T) {
	l, err := parseASNs(hostingList)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(hostingList, "\n"); len(l) != n || n < 500 {
		t.Errorf("%d AS numbers of %d lines", len(l), n)
	}
	var db *DB
	for asn, want := range map[uint32]bool{
		16509: true, 14061: true, 24940: true, 396982: true, 8075: true, // Amazon, DigitalOcean, Hetzner, Google Cloud, Microsoft
		7922: false, 3320: false, 3215: false, 0: false, // Comcast, Deutsche Telekom, Orange
	} {
		if got := db.Hosting(asn); got != want {
			t.Errorf("Hosting(%d) = %v, want %v", asn, got, want)
		}
	}
	line := regexp.MustCompile(`^lists_vpn\thttps://github\.com/X4BNet/lists_vpn\t([0-9a-f]{40})\t(\d{4}-\d\d-\d\d)\tMIT\t[^\t]+$`)
	var commit, date string
	for _, s := range strings.Split(strings.TrimSpace(versions), "\n") {
		if strings.HasPrefix(s, "#") {
			continue
		}
		m := line.FindStringSubmatch(s)
		if m == nil {
			t.Errorf("VERSIONS: %q: want name, repository, commit, date, MIT, files", s)
			continue
		}
		commit, date = m[1], m[2]
	}
	if commit == "" || HostingVersion() != "lists_vpn@"+commit[:12]+" ("+date+")" {
		t.Errorf("HostingVersion() = %q, VERSIONS pins %q of %s", HostingVersion(), commit, date)
	}
	lic, err := os.ReadFile("data/lists_vpn/LICENSE")
	if err != nil || !bytes.Contains(lic, []byte("MIT License")) || !bytes.Contains(lic, []byte("Permission is hereby granted")) {
		t.Errorf("data/lists_vpn/LICENSE: not the MIT licence (%v)", err)
	}
	for _, bad := range []string{"12\nx\n", "12\n12\n", "0\n", "5\n4\n"} {
		if _, err := parseASNs(bad); err == nil {
			t.Errorf("parseASNs(%q) accepted", bad)
		}
	}
}

// run runs name in dir, with a fixed git identity and date, and returns
// its output, failing the test on an error.
func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	for _, tool := range []string{"bash", "git", "awk", "sort"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t",
		"GIT_COMMITTER_DATE=2026-08-22T09:44:53+00:00", "GIT_AUTHOR_DATE=2026-08-22T09:44:53+00:00")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// refresh.sh, run on a local clone, writes the list (sorted, once each),
// the README's licence and VERSIONS from the commit given.
func TestRefresh(t *testing.T) {
	up := t.TempDir()
	os.MkdirAll(filepath.Join(up, "input/datacenter"), 0o755)
	os.WriteFile(filepath.Join(up, "input/datacenter/ASN.txt"), []byte("AS24940 # HETZNER-AS, DE\nAS16509\t# AMAZON\nAS14061\nAS24940 # again\n"), 0o644)
	os.WriteFile(filepath.Join(up, "README.md"), []byte("# Lists\n\n# License\n\n```\nMIT License\n\nCopyright (c) X\n\nPermission is hereby granted, free of charge\n```\n\n# After\n"), 0o644)
	run(t, up, "git", "init", "-q")
	run(t, up, "git", "add", ".")
	run(t, up, "git", "commit", "-qm", "list")
	sha := run(t, up, "git", "rev-parse", "HEAD")

	out := t.TempDir()
	here, _ := os.Getwd()
	run(t, here, "bash", "refresh.sh", "--git", up, "--commit", "HEAD", "--data", out)
	for name, want := range map[string]string{
		"lists_vpn/datacenter-asn.txt": "14061\n16509\n24940\n",
		"lists_vpn/LICENSE":            "MIT License\n\nCopyright (c) X\n\nPermission is hereby granted, free of charge\n",
	} {
		if got, _ := os.ReadFile(filepath.Join(out, name)); string(got) != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	v, _ := os.ReadFile(filepath.Join(out, "VERSIONS"))
	if !strings.Contains(string(v), "lists_vpn\thttps://github.com/X4BNet/lists_vpn\t"+sha+"\t2026-08-22\tMIT\t") {
		t.Errorf("VERSIONS = %q", v)
	}

}

// refresh.sh from the pinned commit reproduces geo/data byte for byte,
// with LOGTALLY_LISTS_VPN_GIT naming a clone of github.com/X4BNet/lists_vpn
// (skipped without it: the tests do not download).
func TestRefreshReproduces(t *testing.T) {
	clone := os.Getenv("LOGTALLY_LISTS_VPN_GIT")
	if clone == "" {
		t.Skip("LOGTALLY_LISTS_VPN_GIT unset: not checking that the pinned commit reproduces geo/data")
	}
	here, _ := os.Getwd()
	out := t.TempDir()
	run(t, here, "bash", "refresh.sh", "--git", clone, "--data", out)
	for _, name := range []string{"VERSIONS", "lists_vpn/datacenter-asn.txt", "lists_vpn/LICENSE"} {
		got, _ := os.ReadFile(filepath.Join(out, name))
		want, _ := os.ReadFile(filepath.Join("data", name))
		if !bytes.Equal(got, want) {
			t.Errorf("refresh.sh from the pinned commit: %s differs from geo/data", name)
		}
	}
}

// Debian's tor-geoipdb files, where installed, load whole.
func TestDebianTorGeoIP(t *testing.T) {
	const path = "/usr/share/tor/geoip"
	if _, err := os.Stat(path); err != nil {
		t.Skip("tor-geoipdb is not installed")
	}
	start := time.Now()
	db, err := Open(path, "")
	if err != nil {
		t.Fatal(err)
	}
	tdb := db.countryTor
	t.Logf("%d IPv4 and %d IPv6 ranges in %v; %q", len(tdb.v4), len(tdb.v6), time.Since(start), db.Attribution())
	if len(tdb.v4) < 100000 || len(tdb.v6) < 50000 {
		t.Errorf("%d IPv4 and %d IPv6 ranges", len(tdb.v4), len(tdb.v6))
	}
	if db.Lookup(addr("8.8.8.8")).Country == "" || db.Lookup(addr("2001:4860::8888")).Country == "" {
		t.Error("8.8.8.8 or 2001:4860::8888 has no country")
	}
}
