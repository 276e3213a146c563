package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/internal/bucketcheck"
	"github.com/logtally/logtally/internal/mongotest"
)

// site = "{host}" with max_sites = 5: a log of 300 random hosts makes 5
// sites and "(other)" in MongoDB, every bucket equal to the files' counts
// with the same folding (the first 5 hosts in the file are sites), and the
// folded hits in /metrics' counter (via the stats line).
func TestMaxSitesInMongo(t *testing.T) {
	const maxSites, hosts = 5, 300
	srv := mongotest.Start(t)
	db := srv.Database(t)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "access.log")
	conf := fastConfig(t, dir, srv.URI(), db.Name(), "{host}", logPath, func(c *config.Config) {
		c.Sources[0].Format, c.Sources[0].MaxSites = "vhost_combined", new(maxSites)
	})

	want := bucketcheck.Counts{Minute: bucketcheck.Buckets{}, Daily: bucketcheck.Buckets{}, Monthly: bucketcheck.Buckets{}, Sites: bucketcheck.Buckets{}}
	t0 := time.Date(2026, 2, 1, 10, 0, 0, 0, time.UTC)
	var lines []byte
	for i := range hosts {
		host := fmt.Sprintf("x%08x.example", uint32(i)*2654435761) // "random", distinct
		ts := t0.Add(time.Duration(i) * time.Second)
		lines = fmt.Appendf(lines, "%s:443 10.0.0.1 - - [%s] \"GET /a HTTP/1.1\" 200 10 \"-\" \"t\"\n", strings.ToUpper(host), ts.Format("02/Jan/2006:15:04:05 -0700"))
		site := host
		if i >= maxSites {
			site = "(other)"
		}
		// "t": under 10 bytes, a suspect user agent (botclass's short rule).
		want.AddHit(ts, site, "/a", bucketcheck.Hit{Status: 200, Bytes: 10, Bot: botclass.Suspect, RT: -1})
	}
	os.WriteFile(logPath, lines, 0o644)

	d, out := daemon(t, conf)
	waitHits(t, db, hosts, out)
	d.Process.Signal(syscall.SIGTERM)
	d.Wait()
	got := bucketcheck.Read(t, db)
	if r := bucketcheck.CompareAll(t, want, got); !r.Exact() || got.MonthTotal != hosts {
		t.Errorf("buckets differ from the files with max_sites folding: %s (month total %d)", r, got.MonthTotal)
	}
	sites := map[string]bool{}
	for id := range got.Monthly {
		_, key, _ := strings.Cut(id, "/")
		site, _, _ := strings.Cut(key, "/")
		sites[site] = true
	}
	if len(sites) != maxSites+1 || !sites["(other)"] {
		t.Errorf("sites in MongoDB: %v, want %d and (other)", sites, maxSites)
	}
	if !strings.Contains(out.String(), "max_sites reached") {
		t.Errorf("no warning that max_sites was reached:\n%s", out)
	}
}
