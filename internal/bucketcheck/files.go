// Counting the files: what a line says, read with this package's own
// regular expressions.

package bucketcheck

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/internal/loggen"
)

// Options change how CountFilesWith reads lines.
type Options struct {
	// Page, if set, maps the path (without its query string) to the page,
	// as the source's page rules do.
	Page func(path string) string
}

// CountFiles counts the hits of site in every file glob matches.
func CountFiles(t testing.TB, glob, site string) Counts {
	t.Helper()
	return CountFilesWith(t, glob, site, Options{})
}

// CountFilesWith is CountFiles with options.
func CountFilesWith(t testing.TB, glob, site string, o Options) Counts {
	t.Helper()
	c := newCounts()
	files, err := filepath.Glob(glob)
	if err != nil {
		t.Fatal(err)
	}
	c.Files = len(files)
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<20)
		n := 0
		for sc.Scan() {
			n++
			ts, page, h, df, ok, err := parseLine(sc.Bytes())
			if err != nil {
				t.Fatalf("%s:%d: %v", f, n, err)
			}
			if !ok {
				continue
			}
			if o.Page != nil {
				page = o.Page(page)
			}
			c.AddHit(ts, site, page, h)
			v := dimValues(site, df)
			c.Dims.add(bucket.SiteID(ts.Unix(), site), &v)
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	return c
}

var (
	lineRe = regexp.MustCompile(`\[([^\]]+)\] "[A-Z]+ ([^ ?"]+)[^"]*" (\d{3}) (\d+|-)`)
	// restRe reads what follows the size: the referer and user agent
	// (whose closing quote may be missing: real logs cut it), then the
	// timing fields.
	restRe = regexp.MustCompile(`^(?: "((?:[^"\\]|\\.)*)" "((?:[^"\\]|\\.)*)"?)?(?: rt=(\S+))?(?: urt="([^"]*)")?`)
)

// parseLine reads one line; ok is false for a line that is no hit. An
// error is a timing field this package cannot read (a test's bug). df
// is what it says of its dimensions: its client (the third field before
// "[time]"), referer and agent (none on a common line).
func parseLine(line []byte) (ts time.Time, page string, h Hit, df fieldsOfDims, ok bool, err error) {
	m := lineRe.FindSubmatchIndex(line)
	if m == nil {
		return ts, "", h, df, false, nil
	}
	ts, err = time.Parse("02/Jan/2006:15:04:05 -0700", string(line[m[2]:m[3]]))
	if err != nil {
		return ts, "", h, df, false, err
	}
	if f := strings.Fields(string(line[:m[0]])); len(f) >= 3 {
		df.client = &f[len(f)-3]
	}
	page = string(line[m[4]:m[5]])
	h.Status, _ = strconv.Atoi(string(line[m[6]:m[7]]))
	if size := string(line[m[8]:m[9]]); size != "-" {
		if h.Bytes, err = strconv.ParseInt(size, 10, 64); err != nil {
			return ts, "", h, df, false, err
		}
	}
	r := restRe.FindSubmatch(line[m[1]:])
	if r[2] != nil { // nil: no user agent (common)
		ref, ua := string(r[1]), string(r[2])
		df.ref, df.ua = &ref, &ua
		h.Bot = Class(ua)
	}
	h.RT = -1
	if r[3] != nil {
		if h.RT, err = micros(string(r[3])); err != nil {
			return ts, "", h, df, false, fmt.Errorf("rt=%s: %w", r[3], err)
		}
	}
	if h.RT < 0 && r[4] != nil {
		for _, v := range strings.FieldsFunc(string(r[4]), func(r rune) bool { return r == ',' || r == ':' }) {
			us, err := micros(strings.TrimSpace(v))
			if err != nil {
				return ts, "", h, df, false, fmt.Errorf("urt=%q: %w", r[4], err)
			}
			if us >= 0 {
				h.RT = max(h.RT, 0) + us
			}
		}
	}
	return ts, page, h, df, true, nil
}

// micros reads seconds with up to 6 decimals ("0.123") as microseconds;
// "-" is -1 (none).
func micros(s string) (int64, error) {
	if s == "-" {
		return -1, nil
	}
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || len(frac) > 6 || strings.Trim(whole+frac, "0123456789") != "" {
		return 0, errors.New("not seconds with up to 6 decimals")
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, err
	}
	f := int64(0)
	if frac != "" {
		if f, err = strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64); err != nil {
			return 0, err
		}
	}
	return w*1e6 + f, nil
}

var (
	rulesOnce sync.Once
	rules     *botclass.Rules
)

// Class returns the class of user agent ua (as logged, without quotes):
// loggen.Agents' class if the table has ua, else the daemon's classifier's
// (botclass.New(nil)).
func Class(ua string) botclass.Class {
	if c, ok := loggen.Class(ua); ok {
		return c
	}
	rulesOnce.Do(func() {
		var err error
		if rules, err = botclass.New(nil); err != nil {
			panic(err)
		}
	})
	return rules.Classify([]byte(ua))
}
