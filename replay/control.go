package replay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The control socket: how `logtally replay` hands files to a running
// daemon, so that one process, with one buffer and one ledger, counts both
// the live files and the archives. bbolt lets one process open the buffer;
// a replay that finds no daemon on the socket opens the state dir itself.
//
// Protocol: one JSON request line ({"replay": Request}); the daemon
// answers with JSON lines: {"progress": Progress} every 200 ms, then
// one {"summary": Summary} or {"error": "..."}. The client closing
// the connection stops the replay (what was counted stays counted).
//
// Only root and the daemon's own user may ask (SO_PEERCRED, whatever the
// socket file's mode), and the request is checked before anything is
// read (see readControlRequest and Request.validate); a refusal is
// an error reply and a WARN naming the peer's uid and pid, never the
// request's contents.

// ErrNoDaemon is returned by AskDaemon when no logtally listens on the
// control socket.
var ErrNoDaemon = errors.New("no logtally is running on this state dir")

type controlRequest struct {
	Replay *Request `json:"replay"`
}

type controlReply struct {
	Progress *Progress `json:"progress,omitempty"`
	Summary  *Summary  `json:"summary,omitempty"`
	Error    string    `json:"error,omitempty"`
}

// Listen listens on the Unix socket path, replacing a socket file
// left by a logtally that is gone; a socket someone answers on is an
// error.
func Listen(path string) (net.Listener, error) {
	if c, err := net.Dial("unix", path); err == nil {
		c.Close()
		return nil, fmt.Errorf("control socket %s: another logtally answers on it", path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	if err := os.Chmod(path, 0o660); err != nil {
		ln.Close()
		return nil, fmt.Errorf("control socket: %w", err)
	}
	return ln, nil
}

// Serve answers control requests on ln until ctx ends, then closes
// it and waits for the requests being answered.
func (s *Service) Serve(ctx context.Context, ln net.Listener) {
	var wg sync.WaitGroup
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("control socket stopped", "err", err)
			}
			break
		}
		wg.Go(func() { s.answer(ctx, conn) })
	}
	wg.Wait()
}

// Control socket bounds. A request is one JSON line of at most
// maxControlRequest bytes, read within controlReadTimeout of the
// connection; it names at most maxReplayFiles files of at most
// maxReplayPath bytes each, and asks for at most maxReplayJobs jobs.
const (
	maxControlRequest = 64 << 10
	maxReplayFiles    = 1000
	maxReplayPath     = 4096 // PATH_MAX
	maxReplayJobs     = 256
)

// controlReadTimeout is how long a client has to send its request. A
// variable for the tests.
var controlReadTimeout = 5 * time.Second

// peerCred returns the uid and pid of the process at the other end of a
// Unix socket (SO_PEERCRED: the credentials it had when it connected).
func peerCred(conn net.Conn) (uid uint32, pid int32, err error) {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return 0, 0, fmt.Errorf("not a Unix socket connection: %T", conn)
	}
	rc, err := uc.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	var cred *syscall.Ucred
	var credErr error
	if err := rc.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return 0, 0, err
	}
	if credErr != nil {
		return 0, 0, fmt.Errorf("SO_PEERCRED: %w", credErr)
	}
	return cred.Uid, cred.Pid, nil
}

// allowedPeer reports whether a peer uid may use the control socket: root
// and the daemon's own user, whatever the socket file's mode says. A
// replay makes the daemon read the files it names with the daemon's
// rights and write their paths to MongoDB's ledger, so only a user who
// could read them as the daemon anyway may ask.
func allowedPeer(uid uint32) bool {
	return uid == 0 || int(uid) == os.Geteuid()
}

// validate checks every field of a replay request read from the socket.
func (r *Request) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch {
	case len(r.Files) == 0:
		bad("files: none named")
	case len(r.Files) > maxReplayFiles:
		bad("files: %d named, at most %d per request", len(r.Files), maxReplayFiles)
	}
	for i, f := range r.Files {
		switch {
		case f == "":
			bad("files[%d]: empty", i)
		case len(f) > maxReplayPath:
			bad("files[%d]: %d bytes long, at most %d", i, len(f), maxReplayPath)
		case !filepath.IsAbs(f):
			bad("files[%d]: not an absolute path", i)
		case strings.IndexByte(f, 0) >= 0:
			bad("files[%d]: holds a NUL byte", i)
		}
	}
	if r.Jobs < 0 || r.Jobs > maxReplayJobs {
		bad("jobs: %d, want 1 to %d (0: the default)", r.Jobs, maxReplayJobs)
	}
	for _, t := range []struct {
		name string
		t    time.Time
	}{{"since", r.Since}, {"until", r.Until}} {
		if !t.t.IsZero() && (t.t.Year() < 1970 || t.t.Year() > 9999) {
			bad("%s: %s is not between 1970 and 9999", t.name, t.t.Format(time.RFC3339))
		}
	}
	if !r.Since.IsZero() && !r.Until.IsZero() && !r.Since.Before(r.Until) {
		bad("since %s is not before until %s", r.Since.Format(time.RFC3339), r.Until.Format(time.RFC3339))
	}
	for _, f := range []struct {
		name, v string
		max     int
	}{{"source", r.Source, 256}, {"site", r.Site, 256}, {"format", r.Format, 32}, {"log_format", r.LogFormat, 4096}} {
		if len(f.v) > f.max {
			bad("%s: %d bytes long, at most %d", f.name, len(f.v), f.max)
		}
	}
	return errors.Join(errs...)
}

// readControlRequest reads and checks the one request line of a control
// connection: at most maxControlRequest bytes, within controlReadTimeout,
// no unknown field. On error, reason is what went wrong without anything
// the client sent, for the log; err says it in full, for the reply.
func readControlRequest(conn net.Conn) (_ *Request, reason string, err error) {
	conn.SetReadDeadline(time.Now().Add(controlReadTimeout))
	defer conn.SetReadDeadline(time.Time{})
	line, err := bufio.NewReaderSize(io.LimitReader(conn, maxControlRequest), 4096).ReadBytes('\n')
	switch {
	case err == io.EOF && len(line) >= maxControlRequest:
		err = fmt.Errorf("longer than %d bytes", maxControlRequest)
		return nil, err.Error(), err
	case err == io.EOF:
		err = errors.New("no newline-terminated request line")
		return nil, err.Error(), err
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = fmt.Errorf("no request line within %v", controlReadTimeout)
		return nil, err.Error(), err
	case err != nil:
		return nil, "cannot read the request", err
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	var req controlRequest
	if err := dec.Decode(&req); err != nil {
		return nil, "not a JSON request of known fields", fmt.Errorf("not a request: %w", err)
	}
	if req.Replay == nil {
		return nil, "no replay in the request", errors.New("no replay in the request")
	}
	if err := req.Replay.validate(); err != nil {
		return nil, "invalid fields", err
	}
	return req.Replay, "", nil
}

// answer answers one control connection: from root or the daemon's own
// user only, one checked request (see readControlRequest).
func (s *Service) answer(ctx context.Context, conn net.Conn) {
	defer conn.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	enc := json.NewEncoder(conn)
	send := func(r controlReply) {
		mu.Lock()
		defer mu.Unlock()
		if enc.Encode(r) != nil {
			cancel() // the client is gone: stop
		}
	}
	refuse := func(msg string) {
		conn.SetWriteDeadline(time.Now().Add(controlReadTimeout)) // a client that reads nothing
		send(controlReply{Error: msg})
	}
	uid, pid, err := peerCred(conn)
	if err != nil {
		s.log.Warn("control request refused: the peer's credentials cannot be read", "err", err)
		refuse(fmt.Sprintf("control socket: cannot read your credentials: %v", err))
		return
	}
	if !allowedPeer(uid) {
		s.log.Warn("control request refused: only root and the daemon's user may use the control socket",
			"peer_uid", uid, "peer_pid", pid, "daemon_uid", os.Geteuid())
		refuse(fmt.Sprintf("control socket: uid %d may not use it: only root and uid %d (logtally's user) may", uid, os.Geteuid()))
		return
	}
	req, reason, err := readControlRequest(conn)
	if err != nil {
		// The request's contents are not logged, only what is wrong.
		s.log.Warn("control request refused: bad request", "peer_uid", uid, "peer_pid", pid, "reason", reason)
		refuse(fmt.Sprintf("bad control request: %v", err))
		return
	}
	// The client sends nothing more: EOF or an error means it is gone.
	go func() {
		var b [1]byte
		conn.Read(b[:])
		cancel()
	}()
	s.log.Info("replay requested on the control socket", "files", len(req.Files), "peer_uid", uid, "peer_pid", pid)
	sum, err := s.Replay(ctx, *req, func(pr Progress) { send(controlReply{Progress: &pr}) })
	if err != nil {
		send(controlReply{Error: err.Error(), Summary: sum})
		return
	}
	send(controlReply{Summary: sum})
}

// AskDaemon runs req in the logtally listening on the control socket
// path, calling report with its progress. It returns ErrNoDaemon when
// nothing listens there. Cancelling ctx stops the replay in the daemon;
// what it counted stays counted.
func AskDaemon(ctx context.Context, path string, req Request, report func(Progress)) (*Summary, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) {
			return nil, ErrNoDaemon
		}
		return nil, fmt.Errorf("control socket: %w", err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	b, err := json.Marshal(controlRequest{Replay: &req})
	if err != nil {
		return nil, err
	}
	if len(b) >= maxControlRequest {
		return nil, fmt.Errorf("control socket: %d files make a request of %d bytes, more than the %d a request may have: replay them in several runs",
			len(req.Files), len(b)+1, maxControlRequest)
	}
	if _, err := conn.Write(append(b, '\n')); err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	dec := json.NewDecoder(bufio.NewReader(conn))
	for {
		var rep controlReply
		if err := dec.Decode(&rep); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("control socket: the daemon stopped answering (stopped or reloaded? run the same command again to resume): %w", err)
		}
		switch {
		case rep.Progress != nil:
			if report != nil {
				report(*rep.Progress)
			}
		case rep.Error != "":
			return rep.Summary, errors.New(rep.Error)
		case rep.Summary != nil:
			return rep.Summary, nil
		}
	}
}
