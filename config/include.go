package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Included files: the main file's include globs (default
// DefaultInclude, "sites.d/*.toml") name files holding [[source]] tables
// only, one site per file, as with Filebeat's inputs.d. Load reads them
// after the main file: the globs in the order listed, each glob's matches
// in sorted order, a file matched twice (or the main file itself) once.
// Their sources are appended after the main file's. A glob matching
// nothing, or a missing directory, is no included file.

// origin is the file that defines a source, and its index among that
// file's [[source]] tables.
type origin struct {
	name  string
	data  []byte
	index int
}

// line returns the line of the source's key (name or site, ...) in its
// file, or 0. A name defaulted from the site is found at the site's line.
func (o *origin) line(key string) int {
	k := toml.Key{"source[" + strconv.Itoa(o.index) + "]", key}
	if n := lineOf(o.data, k); n > 0 || key != "name" {
		return n
	}
	return lineOf(o.data, toml.Key{k[0], "site"})
}

// at names the source's key with its file and line: "b.toml:3".
func (o *origin) at(key string) string {
	if n := o.line(key); n > 0 {
		return fmt.Sprintf("%s:%d", o.name, n)
	}
	return o.name
}

// sourceRef names source i of c for a message about the source mine (nil
// when unknown): "source[1]" within one file, "source[0] in b.toml:3"
// across files.
func (c *Config) sourceRef(i int, mine *origin, key string) string {
	o := c.Sources[i].from
	if o == nil {
		return fmt.Sprintf("source[%d]", i)
	}
	if mine != nil && mine.name == o.name {
		return fmt.Sprintf("source[%d]", o.index)
	}
	return fmt.Sprintf("source[%d] in %s", o.index, o.at(key))
}

// readIncludes reads the files matched by c.Include, relative globs
// resolved against the directory of main, and appends their sources and
// names. Bad globs are left to Validate.
func (c *Config) readIncludes(main string) error {
	dir := filepath.Dir(main)
	self, _ := filepath.Abs(main)
	seen := map[string]bool{self: true}
	var errs []error
	for _, g := range c.Include {
		if g == "" {
			continue
		}
		if !filepath.IsAbs(g) {
			g = filepath.Join(dir, g)
		}
		matches, err := filepath.Glob(g)
		if err != nil {
			continue
		}
		for _, f := range matches {
			abs, _ := filepath.Abs(f)
			if seen[abs] {
				continue
			}
			seen[abs] = true
			srcs, err := readSites(f)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			c.Files = append(c.Files, f)
			c.Sources = append(c.Sources, srcs...)
		}
	}
	return errors.Join(errs...)
}

// sitesFile is what an included file may hold.
type sitesFile struct {
	Sources []Source `toml:"source"`
}

// readSites reads and decodes the included file name. Any top-level key
// but [[source]] is an error naming it and its line.
func readSites(name string) ([]Source, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read included config: %w", err)
	}
	var sf sitesFile
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&sf)
	if err != nil {
		return nil, decodeError(name, data, err)
	}
	var errs []error
	reported := map[string]bool{}
	for _, k := range md.Undecoded() {
		if k[0] == "source" {
			errs = append(errs, problem(name, data, k, &FieldError{Field: strings.Join(k, "."), Problem: "unknown key"}))
			continue
		}
		if reported[k[0]] {
			continue
		}
		reported[k[0]] = true
		fe := &FieldError{Field: k[0], Problem: "not allowed in an included file, which holds only [[source]] tables (set it in the main file)"}
		if line := topLine(data, k[0]); line > 0 {
			errs = append(errs, fmt.Errorf("%s:%d: %w", name, line, fe))
		} else {
			errs = append(errs, fmt.Errorf("%s: %w", name, fe))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for i := range sf.Sources {
		sf.Sources[i].from = &origin{name: name, data: data, index: i}
	}
	return sf.Sources, nil
}

// topLine returns the first line setting the top-level key (key = ...,
// key.x = ... before any table header) or opening its table ([key],
// [key.x], [[key]]), or 0.
func topLine(data []byte, key string) int {
	inTable := false
	for i, raw := range strings.Split(string(data), "\n") {
		line := strings.TrimSpace(raw)
		if strings.HasPrefix(line, "[") {
			inTable = true
			name := strings.TrimSpace(strings.Trim(strings.SplitN(line, "#", 2)[0], " []"))
			if name == key || strings.HasPrefix(name, key+".") {
				return i + 1
			}
			continue
		}
		if inTable {
			continue
		}
		if eq := strings.IndexByte(line, '='); eq > 0 {
			k := strings.Trim(strings.TrimSpace(line[:eq]), `"'`)
			if k == key || strings.HasPrefix(k, key+".") {
				return i + 1
			}
		}
	}
	return 0
}

// locate returns fe, a problem Validate found, prefixed with the file and
// line that define it: a source's problems are reported in the file of
// that source, with the source's index within that file; the others in the
// main file name.
func (c *Config) locate(name string, data []byte, fe *FieldError) error {
	head, rest, _ := strings.Cut(fe.Field, ".")
	if base, i := splitIndex(head); base == "source" && i >= 0 && i < len(c.Sources) && c.Sources[i].from != nil {
		o := c.Sources[i].from
		local := *fe
		local.Field = "source[" + strconv.Itoa(o.index) + "]"
		if rest != "" {
			local.Field += "." + rest
		}
		if rest == "name" {
			if line := o.line("name"); line > 0 {
				return fmt.Errorf("%s:%d: %w", o.name, line, &local)
			}
		}
		return problem(o.name, o.data, local.key(), &local)
	}
	return problem(name, data, fe.key(), fe)
}
