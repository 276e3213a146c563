package replay

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/logtally/logtally/internal/syncbuf"
)

// controlServer serves the control socket of a Pipeline that has nothing
// else: a request that passed every check would reach Replay and panic,
// so each test here shows it was refused before. It returns the socket's
// path and the log.
func controlServer(t *testing.T, dir string) (string, *syncbuf.Buffer) {
	t.Helper()
	logs := &syncbuf.Buffer{}
	p := &Service{log: slog.New(slog.NewTextHandler(logs, nil))}
	path := filepath.Join(dir, "control.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	return path, logs
}

// ask sends raw on the socket and returns the daemon's one reply.
func ask(t *testing.T, path string, raw []byte) controlReply {
	t.Helper()
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	go conn.Write(raw) // the daemon may answer before reading all of it
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	var rep controlReply
	if err := json.NewDecoder(conn).Decode(&rep); err != nil {
		t.Fatalf("no reply to a %d-byte request: %v", len(raw), err)
	}
	return rep
}

// Hostile requests get an error reply naming what is wrong, are logged at
// WARN with the peer's uid and pid and never their contents, and the
// daemon keeps answering.
func TestControlRefusesBadRequests(t *testing.T) {
	path, logs := controlServer(t, t.TempDir())
	for _, tc := range []struct{ req, want string }{
		{`{"replay":{"files":["/etc/shadow"],"jobs":-1}}`, "jobs: -1"},
		{`{"replay":{"files":["/etc/shadow"],"jobs":1000000000}}`, "jobs: 1000000000"},
		{`{"replay":{"files":[],"jobs":0}}`, "files: none named"},
		{`{"replay":{}}`, "files: none named"},
		{`{"replay":{"files":["etc/shadow"]}}`, "files[0]: not an absolute path"},
		{`{"replay":{"files":[""]}}`, "files[0]: empty"},
		{`{"replay":{"files":["/etc/shadow\u0000x"]}}`, "NUL"},
		{`{"replay":{"files":["/` + strings.Repeat("a", 5000) + `"]}}`, "bytes long, at most 4096"},
		{`{"replay":{"files":["/etc/shadow"],"since":"2026-02-02T00:00:00Z","until":"2026-02-01T00:00:00Z"}}`, "is not before until"},
		{`{"replay":{"files":["/etc/shadow"],"since":"0001-01-01T00:00:01Z"}}`, "is not between 1970 and 9999"},
		{`{"replay":{"files":["/etc/shadow"],"uid":0}}`, `unknown field "uid"`},
		{`{"replay":{"files":["/etc/shadow"],"site":"` + strings.Repeat("s", 300) + `"}}`, "site: 300 bytes long"},
		{`{"quit":true}`, "unknown field"},
		{`{}`, "no replay in the request"},
		{`/etc/shadow`, "not a request"},
		{`{"replay":{"files":["/etc/shadow"]}}`, "no newline-terminated request line"}, // no '\n'
	} {
		raw := tc.req + "\n"
		if strings.Contains(tc.want, "newline") {
			raw = tc.req
		}
		var rep controlReply
		if tc.want == "no newline-terminated request line" {
			// The client half-closes: EOF before a newline.
			conn, err := net.Dial("unix", path)
			if err != nil {
				t.Fatal(err)
			}
			conn.Write([]byte(raw))
			conn.(*net.UnixConn).CloseWrite()
			if err := json.NewDecoder(conn).Decode(&rep); err != nil {
				t.Fatal(err)
			}
			conn.Close()
		} else {
			rep = ask(t, path, []byte(raw))
		}
		if !strings.HasPrefix(rep.Error, "bad control request: ") || !strings.Contains(rep.Error, tc.want) || rep.Summary != nil {
			t.Errorf("%.80s: reply %+v, want an error saying %q", tc.req, rep, tc.want)
		}
	}
	out := logs.String()
	if n := strings.Count(out, "level=WARN msg=\"control request refused: bad request\" peer_uid="+fmt.Sprint(os.Geteuid())+" peer_pid="+fmt.Sprint(os.Getpid())); n != 16 {
		t.Errorf("%d refusals logged at WARN with the peer's uid and pid, want 16:\n%s", n, out)
	}
	if strings.Contains(out, "shadow") || strings.Contains(out, "sss") {
		t.Errorf("the log shows a request's contents:\n%s", out)
	}
}

// A 10 MiB request without a newline is refused after the first 64 KiB:
// the daemon's memory does not grow with it.
func TestControlBoundsRequestSize(t *testing.T) {
	path, _ := controlServer(t, t.TempDir())
	huge := make([]byte, 10<<20)
	for i := range huge {
		huge[i] = 'x'
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rep := ask(t, path, huge)
	runtime.ReadMemStats(&after)
	if !strings.Contains(rep.Error, "longer than 65536 bytes") {
		t.Errorf("reply %+v, want the request refused as too long", rep)
	}
	grew := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated while refusing a 10 MiB request: %d bytes", grew)
	if grew > 4<<20 {
		t.Errorf("%d bytes allocated while refusing a 10 MiB request, want < 4 MiB", grew)
	}
	// Still answering.
	if rep := ask(t, path, []byte("{}\n")); !strings.Contains(rep.Error, "no replay") {
		t.Errorf("after the huge request: %+v", rep)
	}
}

// A client that connects and sends nothing is answered with an error once
// the read deadline passes, and the daemon keeps answering others
// meanwhile.
func TestControlClientThatNeverSends(t *testing.T) {
	defer func(d time.Duration) { controlReadTimeout = d }(controlReadTimeout)
	controlReadTimeout = 200 * time.Millisecond
	path, logs := controlServer(t, t.TempDir())
	silent, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	if rep := ask(t, path, []byte("{}\n")); !strings.Contains(rep.Error, "no replay") {
		t.Errorf("beside a silent client: %+v", rep)
	}
	silent.SetReadDeadline(time.Now().Add(30 * time.Second))
	var rep controlReply
	if err := json.NewDecoder(silent).Decode(&rep); err != nil {
		t.Fatalf("no reply to the silent client: %v", err)
	}
	if !strings.Contains(rep.Error, "no request line within 200ms") {
		t.Errorf("silent client: %+v", rep)
	}
	if !strings.Contains(logs.String(), "no request line within") {
		t.Errorf("log:\n%s", logs)
	}
}

// envControlClient makes the test binary a control client of the socket
// it names (TestControlClientHelper), for TestControlRefusesOtherUsers.
const envControlClient = "LOGTALLY_TEST_CONTROL_CLIENT"

// TestControlClientHelper is the client process of TestControlRefusesOtherUsers.
func TestControlClientHelper(t *testing.T) {
	path := os.Getenv(envControlClient)
	if path == "" {
		t.Skip("only a helper process")
	}
	conn, err := net.Dial("unix", path)
	if err != nil {
		fmt.Println("dial:", err)
		os.Exit(3)
	}
	conn.Write([]byte(`{"replay":{"files":["/etc/shadow"]}}` + "\n"))
	line, _ := bufio.NewReader(conn).ReadString('\n')
	fmt.Print(line)
	os.Exit(0)
}

// A user other than root and the daemon's is refused whatever the socket
// file's mode allows, with its uid and pid logged.
func TestControlRefusesOtherUsers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run a client as uid 65534")
	}
	dir := t.TempDir()
	// Let uid 65534 reach the socket and run a copy of this binary.
	for _, d := range []string{filepath.Dir(dir), dir} { // t.TempDir's two levels, 0700
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "client")
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	src.Close()
	dst.Close()
	path, logs := controlServer(t, dir)
	if err := os.Chmod(path, 0o666); err != nil { // the file mode alone would let it in
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestControlClientHelper$")
	cmd.Env = append(os.Environ(), envControlClient+"="+path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("client as uid 65534: %v\n%s", err, out)
	}
	var rep controlReply
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("client's output: %q: %v", out, err)
	}
	if !strings.Contains(rep.Error, "uid 65534 may not use it") {
		t.Errorf("reply %+v, want uid 65534 refused", rep)
	}
	if !strings.Contains(logs.String(), fmt.Sprintf("level=WARN msg=\"control request refused: only root and the daemon's user may use the control socket\" peer_uid=65534 peer_pid=%d", cmd.Process.Pid)) {
		t.Errorf("log:\n%s", logs)
	}
}

// A request of today's client passes the checks.
func TestControlRequestValidates(t *testing.T) {
	r := Request{Files: []string{"/var/log/nginx/access.log.2.gz"}, Site: "example.com", Format: "combined",
		Since: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Until: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), Jobs: 4}
	if err := r.validate(); err != nil {
		t.Error(err)
	}
	r.Jobs = 0 // the default
	if err := r.validate(); err != nil {
		t.Error(err)
	}
}
