package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The README's first command works: go run ./internal/cmd/demo counts
// every hit of the sample log into the embedded server, finds all of them
// in MongoDB (the hot pages' buckets and the cold pages' tails), and
// prints what it stored.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo builds logtally and runs it: skipped in -short mode")
	}
	cmd := exec.Command("go", "run", "./internal/cmd/demo")
	cmd.Dir = "../../.." // the module's root, as the README runs it
	out, err := cmd.CombinedOutput()
	for _, want := range []string{
		"logs: testdata/sample/access.log (262 hits)",
		"all 262 hits in MongoDB",
		"monthly buckets of the hot pages",
		"cold pages, in the monthly tails",
		"20150517/semicomplete.com: views=262 ",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("no %q in the demo's output", want)
		}
	}
	if err != nil || t.Failed() {
		t.Fatalf("go run ./internal/cmd/demo: %v\n%s", err, out)
	}
}
