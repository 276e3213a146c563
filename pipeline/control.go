package pipeline

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"

	"github.com/logtally/logtally/replay"
)

// The control socket: how `logtally replay` hands files to a running
// daemon, so that one process, with one buffer and one ledger, counts both
// the live files and the archives. bbolt lets one process open the buffer;
// a replay that finds no daemon on the socket opens the state dir itself.
//
// Protocol: one JSON request line ({"replay": ReplayRequest}); the daemon
// answers with JSON lines: {"progress": replay.Progress} every 200 ms, then
// one {"summary": ReplaySummary} or {"error": "..."}. The client closing
// the connection stops the replay (what was counted stays counted).

// ErrNoDaemon is returned by RequestReplay when no logtally listens on the
// control socket.
var ErrNoDaemon = errors.New("no logtally is running on this state dir")

type controlRequest struct {
	Replay *ReplayRequest `json:"replay"`
}

type controlReply struct {
	Progress *replay.Progress `json:"progress,omitempty"`
	Summary  *ReplaySummary   `json:"summary,omitempty"`
	Error    string           `json:"error,omitempty"`
}

// listenControl listens on the Unix socket path, replacing a socket file
// left by a logtally that is gone; a socket someone answers on is an
// error.
func listenControl(path string) (net.Listener, error) {
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

// serveControl answers control requests on ln until ctx ends, then closes
// it and waits for the requests being answered.
func (p *Pipeline) serveControl(ctx context.Context, ln net.Listener) {
	var wg sync.WaitGroup
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() == nil {
				p.log.Warn("control socket stopped", "err", err)
			}
			break
		}
		wg.Go(func() { p.answer(ctx, conn) })
	}
	wg.Wait()
}

// answer answers one control connection.
func (p *Pipeline) answer(ctx context.Context, conn net.Conn) {
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
	r := bufio.NewReader(conn)
	var req controlRequest
	line, err := r.ReadBytes('\n')
	if err == nil {
		err = json.Unmarshal(line, &req)
	}
	if err != nil || req.Replay == nil {
		send(controlReply{Error: fmt.Sprintf("bad control request: %v", err)})
		return
	}
	// The client sends nothing more: EOF or an error means it is gone.
	go func() {
		r.ReadByte()
		cancel()
	}()
	p.log.Info("replay requested on the control socket", "files", len(req.Replay.Files))
	sum, err := p.Replay(ctx, *req.Replay, func(pr replay.Progress) { send(controlReply{Progress: &pr}) })
	if err != nil {
		send(controlReply{Error: err.Error(), Summary: sum})
		return
	}
	send(controlReply{Summary: sum})
}

// RequestReplay runs req in the logtally listening on the control socket
// path, calling report with its progress. It returns ErrNoDaemon when
// nothing listens there. Cancelling ctx stops the replay in the daemon;
// what it counted stays counted.
func RequestReplay(ctx context.Context, path string, req ReplayRequest, report func(replay.Progress)) (*ReplaySummary, error) {
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
