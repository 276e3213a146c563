package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/logtally/logtally/parser"
)

// writeFiles writes name -> content under dir, making directories.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const mainWithSource = `state_dir = "/tmp/lt"

[[source]]
site = "main.example.com"
paths = ["/var/log/nginx/main.log"]
format = "combined"
`

const siteA = `# site a
[[source]]
site = "a.example.com"
paths = ["/var/log/nginx/a.log"]
format = "nginx"
log_format = '$remote_addr [$time_local] "$request" $status'

[source.page]
keep_query = ["page"]

[source.filter]
methods = ["GET"]
`

const siteB = `[[source]]
name = "b"
site = "b.example.com"
paths = ["/var/log/nginx/b.log"]
format = "json"
[source.json]
uri = "request.uri"
`

// Relative globs are resolved against the main file's directory, not the
// working directory; the included files are read in sorted order and their
// sources appended after the main file's.
func TestIncludeRelativeToMainFile(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"etc/logtally.toml":     mainWithSource,
		"etc/sites.d/b.toml":    siteB,
		"etc/sites.d/a.toml":    siteA,
		"etc/sites.d/notes.txt": "not toml",
	})
	c, err := Load(filepath.Join(dir, "etc", "logtally.toml"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range c.Sources {
		names = append(names, s.Name)
	}
	if want := []string{"main.example.com", "a.example.com", "b"}; !slices.Equal(names, want) {
		t.Fatalf("sources %q, want %q", names, want)
	}
	a := c.Sources[1]
	if a.Format != "nginx" || !slices.Equal(a.Page.KeepQuery, []string{"page"}) || !slices.Equal(a.Filter.Methods, []string{"GET"}) {
		t.Errorf("included source: %+v", a)
	}
	if c.Sources[2].JSON.URI != "request.uri" {
		t.Errorf("included [source.json]: %+v", c.Sources[2].JSON)
	}
	wantFiles := []string{
		filepath.Join(dir, "etc", "logtally.toml"),
		filepath.Join(dir, "etc", "sites.d", "a.toml"),
		filepath.Join(dir, "etc", "sites.d", "b.toml"),
	}
	if !slices.Equal(c.Files, wantFiles) {
		t.Errorf("Files %q, want %q", c.Files, wantFiles)
	}
	if _, err := parser.New(a.Parser()); err != nil {
		t.Errorf("included source's parser: %v", err)
	}
}

// Only included sources: the main file needs none. Globs are listed, each
// may be absolute; a file matched by two globs is read once.
func TestIncludeGlobs(t *testing.T) {
	dir := t.TempDir()
	other := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"logtally.toml": `include = ["conf/*.toml", "conf/a.toml", "` + filepath.ToSlash(filepath.Join(other, "*.toml")) + `", "none/*.toml"]` + "\n",
		"conf/a.toml":   siteA,
	})
	writeFiles(t, other, map[string]string{"b.toml": siteB})
	c, err := Load(filepath.Join(dir, "logtally.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Sources) != 2 || c.Sources[0].Site != "a.example.com" || c.Sources[1].Name != "b" {
		t.Fatalf("sources %+v", c.Sources)
	}
	if len(c.Files) != 3 {
		t.Errorf("Files %q", c.Files)
	}
	// include = [] reads no other file.
	writeFiles(t, dir, map[string]string{"logtally.toml": "include = []\n" + mainWithSource})
	if c, err = Load(filepath.Join(dir, "logtally.toml")); err != nil || len(c.Sources) != 1 || len(c.Files) != 1 {
		t.Errorf("include = []: %v, %d sources, files %q", err, len(c.Sources), c.Files)
	}
}

// No sites.d directory, or an empty one, is no included file.
func TestIncludeNoSitesDir(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"logtally.toml": mainWithSource})
	main := filepath.Join(dir, "logtally.toml")
	for _, step := range []string{"missing", "empty"} {
		c, err := Load(main)
		if err != nil {
			t.Fatalf("%s sites.d: %v", step, err)
		}
		if len(c.Sources) != 1 || !slices.Equal(c.Files, []string{main}) {
			t.Errorf("%s sites.d: sources %+v, files %q", step, c.Sources, c.Files)
		}
		if err := os.MkdirAll(filepath.Join(dir, "sites.d"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Parse reads no included file.
	c, err := Parse("t.toml", []byte(mainWithSource))
	if err != nil || !slices.Equal(c.Files, []string{"t.toml"}) || !slices.Equal(c.Include, DefaultInclude) {
		t.Errorf("Parse: %v, files %q, include %q", err, c.Files, c.Include)
	}
}

// loadErr loads dir/logtally.toml after writing files, and returns the
// error with dir cut from the names.
func loadErr(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, files)
	_, err := Load(filepath.Join(dir, "logtally.toml"))
	if err == nil {
		t.Fatal("no error")
	}
	return strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
}

func TestIncludeErrorsNameFileAndLine(t *testing.T) {
	sd := func(name string) string { return filepath.Join("sites.d", name) }
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"same source name in two files", map[string]string{
			"logtally.toml":  mainWithSource,
			"sites.d/a.toml": siteA,
			"sites.d/c.toml": "\n" + strings.Replace(siteB, `name = "b"`, `name = "a.example.com"`, 1),
		}, []string{sd("c.toml") + `:3: source[0].name: "a.example.com": same name as source[0] in ` + sd("a.toml") + `:3; set a distinct name`}},
		{"same site in main and included file", map[string]string{
			"logtally.toml":  mainWithSource,
			"sites.d/m.toml": strings.Replace(siteA, "a.example.com", "main.example.com", 1),
		}, []string{sd("m.toml") + `:3: source[0].name: "main.example.com": same name as source[0] in logtally.toml:4; set a distinct name`}},
		{"same site, distinct names, two files", map[string]string{
			"logtally.toml":  mainWithSource,
			"sites.d/a.toml": siteA,
			"sites.d/b.toml": strings.Replace(siteB, "b.example.com", "a.example.com", 1),
		}, []string{sd("b.toml") + `:3: source[0].site: "a.example.com": also the site of source[0] in ` + sd("a.toml") + `:3; keep a site's sources in one file`}},
		{"top-level keys in an included file", map[string]string{
			"logtally.toml":  mainWithSource,
			"sites.d/a.toml": "state_dir = \"/x\"\n" + siteA + "\n[mongo]\nuri = \"mongodb://x\"\n",
		}, []string{
			sd("a.toml") + `:1: state_dir: not allowed in an included file, which holds only [[source]] tables (set it in the main file)`,
			sd("a.toml") + `:15: mongo: not allowed in an included file`,
		}},
		{"include in an included file", map[string]string{
			"logtally.toml":  mainWithSource,
			"sites.d/a.toml": siteA + "\n[site_aliases]\n\"www.a\" = \"a\"\n",
			"sites.d/b.toml": "include = [\"*.toml\"]\n" + siteB,
		}, []string{
			sd("a.toml") + `:14: site_aliases: not allowed in an included file`,
			sd("b.toml") + `:1: include: not allowed in an included file`,
		}},
		{"unknown source key in an included file", map[string]string{
			"logtally.toml":  mainWithSource,
			"sites.d/a.toml": strings.Replace(siteA, "[source.filter]\n", "[source.filter]\ncolour = 1\n", 1),
		}, []string{sd("a.toml") + `:12: source.filter.colour: unknown key`}},
		{"bad values in an included file", map[string]string{
			"logtally.toml":  mainWithSource + "[flush]\nmax_ops = 0\n",
			"sites.d/a.toml": siteA,
			"sites.d/b.toml": strings.NewReplacer(`"json"`, `"apache"`, `"/var/log/nginx/b.log"`, `"/b["`).Replace(siteB),
		}, []string{
			`logtally.toml:8: flush.max_ops: 0: must be from 1 to 100000`,
			sd("b.toml") + `:4: source[0].paths: "/b[": not a valid glob`,
			sd("b.toml") + `:5: source[0].format: "apache": unknown log format`,
		}},
		{"bad page rule in an included file", map[string]string{
			"logtally.toml":  mainWithSource,
			"sites.d/a.toml": strings.Replace(siteA, `keep_query = ["page"]`, "max_length = -1", 1),
		}, []string{sd("a.toml") + `:9: source[0].page.max_length`}},
		{"type error in an included file", map[string]string{
			"logtally.toml":  mainWithSource,
			"sites.d/a.toml": strings.Replace(siteA, `format = "nginx"`, `format = 5`, 1),
		}, []string{sd("a.toml") + `:5: source.format: incompatible types`}},
		{"syntax error in an included file", map[string]string{
			"logtally.toml":  mainWithSource,
			"sites.d/a.toml": "[[source]\n",
		}, []string{sd("a.toml") + `:1: table header: expected end of table array name`}},
		{"bad include glob", map[string]string{
			"logtally.toml": "\ninclude = [\"sites.d/[\"]\n" + mainWithSource,
		}, []string{`logtally.toml:2: include: "sites.d/[": not a valid glob`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := loadErr(t, tc.files)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("error\n%s\ndoes not contain\n%s", got, w)
				}
			}
		})
	}
}

// A problem of an included source wraps its *FieldError, keyed by the
// source's index in its own file.
func TestIncludeErrorsWrapFieldErrors(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"logtally.toml":  mainWithSource,
		"sites.d/a.toml": siteA + strings.Replace(siteB, `"json"`, `"apache"`, 1),
	})
	_, err := Load(filepath.Join(dir, "logtally.toml"))
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "source[1].format" {
		t.Fatalf("error %v: field %+v, want source[1].format", err, fe)
	}
}

// The shipped example's sites.d resolves beside it.
func TestExampleIncludes(t *testing.T) {
	c, err := Load("../systemd/logtally.toml")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(c.Files, filepath.Join("..", "systemd", "sites.d", "example.toml")) {
		t.Errorf("Files %q: no sites.d/example.toml", c.Files)
	}
}

// The example site, uncommented, is a valid included file.
func TestExampleSiteUncommented(t *testing.T) {
	b, err := os.ReadFile("../systemd/sites.d/example.toml")
	if err != nil {
		t.Fatal(err)
	}
	_, example, _ := strings.Cut(string(b), "# [[source]]\n")
	lines := []string{"[[source]]"}
	for _, l := range strings.Split(example, "\n") {
		lines = append(lines, strings.TrimPrefix(strings.TrimPrefix(l, "#"), " "))
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"logtally.toml": "", "sites.d/example.com.toml": strings.Join(lines, "\n")})
	c, err := Load(filepath.Join(dir, "logtally.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Sources) != 1 || c.Sources[0].Site != "example.com" || len(c.Sources[0].Filter.ExcludeUserAgents) == 0 {
		t.Errorf("sources %+v", c.Sources)
	}
}

// Sources of one site in one file, and "{host}" sources in several files,
// are fine.
func TestIncludeSameSiteAllowed(t *testing.T) {
	dir := t.TempDir()
	host := "[[source]]\nname = \"%s\"\nsite = \"{host}\"\npaths = [\"/%s\"]\nformat = \"vhost_combined\"\n"
	writeFiles(t, dir, map[string]string{
		"logtally.toml":  strings.NewReplacer("%s", "h0").Replace(host),
		"sites.d/a.toml": siteA + strings.NewReplacer(`name = "b"`, `name = "a2"`, "b.example.com", "a.example.com").Replace(siteB),
		"sites.d/h.toml": strings.NewReplacer("%s", "h1").Replace(host),
	})
	c, err := Load(filepath.Join(dir, "logtally.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Sources) != 4 {
		t.Errorf("sources %+v", c.Sources)
	}
}
