package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// `logtally check` reads logrotate's configuration for olddir, to suggest
// a source's `rotated` globs: rotation into another directory is missed
// without them.

// logrotateRoot is where logrotate.conf and logrotate.d are (tests change
// it).
var logrotateRoot = "/etc"

// Bounds on what is read of logrotate's configuration.
const (
	maxLogrotateFiles = 256
	maxLogrotateBytes = 1 << 20
)

// rotateRule is one logrotate stanza: the paths (globs) it rotates and the
// directory its rotated files go to ("" without olddir).
type rotateRule struct {
	file     string
	patterns []string
	olddir   string
}

// logrotateRules reads logrotate.conf and the files of logrotate.d under
// logrotateRoot (at most maxLogrotateFiles, each up to maxLogrotateBytes);
// files that cannot be read are skipped.
func logrotateRules() []rotateRule {
	files := []string{filepath.Join(logrotateRoot, "logrotate.conf")}
	d, _ := filepath.Glob(filepath.Join(logrotateRoot, "logrotate.d", "*"))
	slices.Sort(d)
	files = append(files, d...)
	if len(files) > maxLogrotateFiles {
		files = files[:maxLogrotateFiles]
	}
	var rules []rotateRule
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(io.LimitReader(fh, maxLogrotateBytes))
		fh.Close()
		rules = append(rules, parseLogrotate(f, b)...)
	}
	return rules
}

// parseLogrotate returns the stanzas of one logrotate file: each one's
// paths and its olddir, its own or the one set before it outside any
// stanza. Only what olddir needs is understood.
func parseLogrotate(file string, data []byte) []rotateRule {
	var rules []rotateRule
	global := ""
	var cur *rotateRule
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
			r := rotateRule{file: file, olddir: global}
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

// olddirHints returns, for each of the files whose logrotate stanza sets
// olddir, the `rotated` setting that finds its rotated files.
func olddirHints(rules []rotateRule, files []string) []string {
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
