package logrotate

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Bounds on what Rules reads of logrotate's configuration.
const (
	maxFiles = 256
	maxBytes = 1 << 20
)

// Rule is one logrotate stanza: the file it is in, the paths (globs) it
// rotates and the directory its rotated files go to ("" without olddir).
type Rule struct {
	file     string
	patterns []string
	olddir   string
}

// Rules reads logrotate.conf and the files of logrotate.d under root
// (/etc; at most 256 files, each up to 1 MiB); files that cannot be read
// are skipped.
func Rules(root string) []Rule {
	files := []string{filepath.Join(root, "logrotate.conf")}
	d, _ := filepath.Glob(filepath.Join(root, "logrotate.d", "*"))
	slices.Sort(d)
	files = append(files, d...)
	if len(files) > maxFiles {
		files = files[:maxFiles]
	}
	var rules []Rule
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(io.LimitReader(fh, maxBytes))
		fh.Close()
		rules = append(rules, Parse(f, b)...)
	}
	return rules
}

// Parse returns the stanzas of one logrotate file: each one's paths and
// its olddir, its own or the one set before it outside any stanza. Only
// what olddir needs is understood.
func Parse(file string, data []byte) []Rule {
	var rules []Rule
	global := ""
	var cur *Rule
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		switch {
		case cur == nil && strings.HasSuffix(line, "{"):
			r := Rule{file: file, olddir: global}
			for _, p := range strings.Fields(strings.TrimSuffix(line, "{")) {
				r.patterns = append(r.patterns, strings.Trim(p, `"'`))
			}
			cur = &r
		case cur != nil && line == "}":
			rules = append(rules, *cur)
			cur = nil
		case fields[0] == "olddir" && len(fields) > 1:
			if cur != nil {
				cur.olddir = strings.Trim(fields[1], `"'`)
			} else {
				global = strings.Trim(fields[1], `"'`)
			}
		case fields[0] == "noolddir":
			if cur != nil {
				cur.olddir = ""
			} else {
				global = ""
			}
		}
	}
	return rules
}

// OlddirHints returns, for each of the files whose stanza in rules sets
// olddir, the `rotated` setting of a logtally source that finds its
// rotated files.
func OlddirHints(rules []Rule, files []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range files {
		for _, r := range rules {
			if r.olddir == "" || !slices.ContainsFunc(r.patterns, func(p string) bool { ok, _ := filepath.Match(p, f); return ok }) {
				continue
			}
			dir := r.olddir
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(filepath.Dir(f), dir)
			}
			h := f + ": " + r.file + " rotates it into " + dir + " (olddir): set rotated = [\"" + filepath.Join(dir, filepath.Base(f)) + "*\"] in its source, or rotations while logtally is down or copytruncates there lose lines"
			if !seen[h] {
				seen[h] = true
				out = append(out, h)
			}
			break
		}
	}
	return out
}
