// Package testenv is what the tests of every package share: a buffer
// opened for a test and checked for consistency when the test ends
// (bbolt's lesson: its test helper checks every test's database), waits
// on a condition instead of sleeps, and a local address and a GET for
// the tests of the HTTP endpoints. It imports only buffer, so that
// the tests of every package above buffer can use it, those inside their
// package included; buffer's own tests keep their openTest.
//
// The end-to-end tests' configuration (config's defaults plus overrides)
// is in testenv/testconfig: config imports most packages, which could then
// not use this one.
package testenv

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/logtally/logtally/buffer"
)

// OpenBuffer opens the buffer at path with opts for a test and registers a
// cleanup that closes it and checks the file with buffer.Verify: a test
// fails if it leaves an inconsistent file behind, whoever wrote it last
// (a daemon the test ran on the file, killed or stopped, included; a
// daemon's own cleanup, registered later, runs first). Closing a Buffer
// twice is harmless, so a test may close it early: to reopen the file, to
// look at it, or to leave it to a daemon. A file gone at the end, or
// another file at the path (a test that removed its state dir, or put
// junk in the buffer's place on purpose), is not checked.
func OpenBuffer(t testing.TB, path string, opts buffer.Options) *buffer.Buffer {
	t.Helper()
	b, err := buffer.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	opened, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("close %s: %v", path, err)
		}
		if now, err := os.Stat(path); err != nil || !os.SameFile(opened, now) {
			return
		}
		if err := buffer.Verify(path); err != nil {
			t.Errorf("the buffer file the test left: %v", err)
		}
	})
	return b
}

// MaxPoll is the longest pause between two looks of Until.
const MaxPoll = 50 * time.Millisecond

// Until reports whether cond holds within d. It looks at once, then after
// pauses that double from a millisecond up to MaxPoll: a condition met by
// the next step of a goroutine is seen at once, and one that reads a
// database is not asked more than 20 times a second. It is how tests wait
// for an event (a commit count, a batch acknowledged, a line logged, a
// file written) instead of sleeping for a time that hopes to cover it;
// it may be called from any goroutine.
func Until(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for pause := time.Millisecond; ; pause = min(2*pause, MaxPoll) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
	}
}

// Wait waits until cond holds; past d it fails the test, saying what it
// waited for, then each of show as it is then (a daemon's log, say).
func Wait(t testing.TB, d time.Duration, what string, cond func() bool, show ...fmt.Stringer) {
	t.Helper()
	if Until(d, cond) {
		return
	}
	var b strings.Builder
	for _, s := range show {
		b.WriteString("\n" + s.String())
	}
	t.Fatalf("timed out after %v waiting for %s%s", d, what, b.String())
}

// FreeAddr returns a loopback address ("127.0.0.1:port") nothing listens
// on now.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Get returns the status code and body of GET http://addr+path, or 0 and
// the error's text.
func Get(addr, path string) (int, string) {
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
