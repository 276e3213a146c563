package redact

import "testing"

func TestTerminal(t *testing.T) {
	for in, want := range map[string]string{
		"/index.html":            "/index.html",
		"/caf\u00e9":             "/caf\u00e9",
		"/a\x1b[31mred":          `/a\x1b[31mred`,
		"/\u202egnp.exe":         `/\u202egnp.exe`,
		"/x\u2066y\u2069\u200f":  `/x\u2066y\u2069\u200f`,
		"/bad\xff\x7f\u0085\t\n": `/bad\xff\x7f\x85\x09\x0a`,
		"\x00":                   `\x00`,
	} {
		if got := Terminal(in); got != want {
			t.Errorf("Terminal(%q) = %q, want %q", in, got, want)
		}
	}
}
