package doccheck

import (
	"bufio"
	"errors"
	"go/build"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// root is the module's root: two levels above this package.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("module root not found: %v", err)
	}
	return dir
}

// modulePath reads the module line of go.mod.
func modulePath(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if m, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.TrimSpace(m)
		}
	}
	t.Fatal("go.mod has no module line")
	return ""
}

// packageImports returns every package of the module under dir (its path
// relative to the module) with the module's packages its non-test files
// import, relative too.
func packageImports(t *testing.T, dir, module string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != dir && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if path != dir {
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
		}
		pkg, err := build.Default.ImportDir(path, 0)
		var noGo *build.NoGoError
		if errors.As(err, &noGo) {
			return nil
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		var ours []string
		for _, imp := range pkg.Imports {
			if r, ok := strings.CutPrefix(imp, module+"/"); ok {
				ours = append(ours, r)
			}
		}
		slices.Sort(ours)
		out[filepath.ToSlash(rel)] = ours
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// packageTable parses the table under "## Packages" in architecture.md:
// package → the imports its last column lists ("nothing": none).
func packageTable(t *testing.T, path string) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	in := false
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "## ") {
			in = line == "## Packages"
			continue
		}
		if !in || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cells) < 3 {
			t.Errorf("architecture.md: package row with %d cells: %s", len(cells), line)
			continue
		}
		name := strings.Trim(strings.TrimSpace(cells[0]), "`")
		last := strings.TrimSpace(cells[len(cells)-1])
		imports := []string{}
		if last != "nothing" {
			for _, m := range codeSpan.FindAllStringSubmatch(last, -1) {
				imports = append(imports, m[1])
			}
			if len(imports) == 0 {
				t.Errorf("architecture.md: package %s: imports column %q is neither \"nothing\" nor a list of `packages`", name, last)
			}
		}
		if _, dup := rows[name]; dup {
			t.Errorf("architecture.md: package %s has two rows", name)
		}
		slices.Sort(imports)
		rows[name] = imports
	}
	if len(rows) == 0 {
		t.Fatal("architecture.md: no package table under \"## Packages\"")
	}
	return rows
}

// TestPackageTable fails naming each package missing from the table, each
// row without a package, and each row whose imports differ from the code.
func TestPackageTable(t *testing.T) {
	dir := root(t)
	code := packageImports(t, dir, modulePath(t, dir))
	table := packageTable(t, filepath.Join(dir, "docs", "architecture.md"))
	for _, pkg := range slices.Sorted(maps.Keys(code)) {
		listed, ok := table[pkg]
		if !ok {
			t.Errorf("docs/architecture.md: package %s has no row (it imports %s)", pkg, orNothing(code[pkg]))
			continue
		}
		if missing, extra := diff(code[pkg], listed); len(missing)+len(extra) > 0 {
			t.Errorf("docs/architecture.md: package %s: row lacks %s, row has %s not imported (code imports %s)",
				pkg, orNothing(missing), orNothing(extra), orNothing(code[pkg]))
		}
	}
	for _, pkg := range slices.Sorted(maps.Keys(table)) {
		if _, ok := code[pkg]; !ok {
			t.Errorf("docs/architecture.md: row for %s, which is not a package of the module", pkg)
		}
	}
}

// diff returns what want has that got lacks, and what got has that want
// lacks; both sorted.
func diff(want, got []string) (missing, extra []string) {
	for _, w := range want {
		if !slices.Contains(got, w) {
			missing = append(missing, w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			extra = append(extra, g)
		}
	}
	return missing, extra
}

func orNothing(s []string) string {
	if len(s) == 0 {
		return "nothing"
	}
	return strings.Join(s, ", ")
}

// link is a markdown link's target, [text](target) or [text](target "title").
var link = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// scan returns a markdown file's headings' anchors and its link targets
// (with their line numbers), outside fenced code blocks.
func scan(t *testing.T, path string) (anchors map[string]bool, links map[int][]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	anchors, links = map[string]bool{}, map[int][]string{}
	seen := map[string]int{}
	fence := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		if h, ok := heading(line); ok {
			a := slug(h)
			if k := seen[a]; k > 0 {
				anchors[a+"-"+strconv.Itoa(k)] = true
			} else {
				anchors[a] = true
			}
			seen[a]++
		}
		for _, m := range link.FindAllStringSubmatch(stripCode(line), -1) {
			links[n] = append(links[n], m[1])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return anchors, links
}

// heading returns an ATX heading's text.
func heading(line string) (string, bool) {
	if !strings.HasPrefix(line, "#") {
		return "", false
	}
	text := strings.TrimLeft(line, "#")
	if len(line)-len(text) > 6 || (text != "" && text[0] != ' ') {
		return "", false
	}
	return strings.TrimSpace(strings.TrimRight(strings.TrimSpace(text), "#")), true
}

// slug is GitHub's anchor of a heading: lower case, markup and
// punctuation dropped (letters, digits, spaces, '-' and '_' kept),
// spaces to '-'.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// stripCode removes code spans, whose brackets are not links.
func stripCode(line string) string { return codeSpan.ReplaceAllString(line, "") }

// TestLinks fails naming each relative link of docs/*.md and README.md
// whose file is missing or whose #fragment is no heading of its file.
func TestLinks(t *testing.T) {
	dir := root(t)
	files, err := filepath.Glob(filepath.Join(dir, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(dir, "README.md"))
	anchorsOf := map[string]map[string]bool{}
	anchors := func(path string) map[string]bool {
		if a, ok := anchorsOf[path]; ok {
			return a
		}
		a, _ := scan(t, path)
		anchorsOf[path] = a
		return a
	}
	checked := 0
	for _, file := range files {
		rel, _ := filepath.Rel(dir, file)
		_, links := scan(t, file)
		for _, n := range slices.Sorted(maps.Keys(links)) {
			for _, target := range links[n] {
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				path, frag, _ := strings.Cut(target, "#")
				dest := file
				if path != "" {
					dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s:%d: link %q: no such file", rel, n, target)
						continue
					}
				}
				if frag == "" {
					continue
				}
				if !strings.HasSuffix(dest, ".md") {
					t.Errorf("%s:%d: link %q: a #fragment of a file that is not markdown", rel, n, target)
					continue
				}
				if !anchors(dest)[frag] {
					t.Errorf("%s:%d: link %q: no heading with anchor #%s", rel, n, target, frag)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link found: the scan is broken")
	}
}

func TestSlug(t *testing.T) {
	for h, want := range map[string]string{
		"The guard's two forms":          "the-guards-two-forms",
		"Buffer → MongoDB":               "buffer--mongodb",
		"Log file → buffer":              "log-file--buffer",
		"Keys (`[buckets]`)":             "keys-buckets",
		"One host's costs":               "one-hosts-costs",
		"State-dir loss and the rebuild": "state-dir-loss-and-the-rebuild",
		"Why not nxadm/tail":             "why-not-nxadmtail",
		"Are my numbers right?":          "are-my-numbers-right",
	} {
		if got := slug(h); got != want {
			t.Errorf("slug(%q) = %q, want %q", h, got, want)
		}
	}
}
