package recent_test

import (
	"os/exec"
	"regexp"
	"testing"
)

// Gen's Get and GetBytes are written to be inlined (see Get): a change of
// them, or a Go release with another inlining budget, that stops it costs
// every cache hit a call, which the benchmarks alone would show. The
// compiler's own report (-gcflags=-m) must say it inlines them where the
// caches are hit: botclass's and referrer's GetBytes (Get has the same
// form).
func TestGetInlined(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the compiler; skipped in -short mode")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command in PATH to ask the compiler")
	}
	for _, c := range []struct{ pkg, file, call string }{
		{"botclass", "cache.go", `recent\.GetBytes\[.*\]`},
		{"referrer", "classify.go", `recent\.GetBytes\[.*\]`},
	} {
		pkg := "github.com/logtally/logtally/" + c.pkg
		out, err := exec.Command(goBin, "build", "-gcflags="+pkg+"=-m", "-o", "/dev/null", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go build -gcflags=-m %s: %v\n%s", pkg, err, out)
		}
		re := regexp.MustCompile(`(?m)\b` + c.pkg + `/` + regexp.QuoteMeta(c.file) + `:\d+:\d+: inlining call to ` + c.call + `$`)
		if !re.Match(out) {
			t.Errorf("the compiler does not inline %s in %s/%s; what it says of package recent:\n%s", c.call, c.pkg, c.file,
				regexp.MustCompile(`(?m)^.*recent\..*$`).FindAll(out, -1))
		}
	}
}
