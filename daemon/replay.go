package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/pipeline"
	"github.com/logtally/logtally/replay"
)

// Replay hands req to the daemon running on cfg's state dir (its control
// socket), or, when none runs there, counts it in a pipeline of its own:
// the daemon's, without tailers, its buffer bounded (replayMaxBuffer),
// drained at the end. It returns the summary and where the replay ran. A
// state dir it cannot use is a *ConfigError.
func Replay(ctx context.Context, cfg config.Config, req replay.Request, report func(replay.Progress), clk clock.Clock, log *slog.Logger) (*replay.Summary, string, error) {
	sum, err := replay.AskDaemon(ctx, cfg.ControlSocket(), req, report)
	if !errors.Is(err, replay.ErrNoDaemon) {
		return sum, "in the running daemon", err
	}
	if _, err := buffer.CheckDir(cfg.StateDir, config.BufferFile); err != nil {
		return nil, "", &ConfigError{fmt.Errorf("state_dir: %w", err)}
	}
	client, db, err := cfg.Mongo.Connect("logtally-replay")
	if err != nil {
		return nil, "", err
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		client.Disconnect(ctx)
	}()
	pc := cfg.Pipeline(db, clk, log)
	pc.NoTail = true
	if pc.Dims != nil {
		if pc.Dims.Geo, err = geoHolder(nil, cfg.Geo, log); err != nil {
			return nil, "", &ConfigError{err}
		}
	}
	// A year of archives must not take a year of memory: reading pauses
	// while this much is buffered and not acknowledged (bbolt's pages are
	// mapped, and count in the resident set as they are touched).
	if pc.Buffer.MaxSize <= 0 || pc.Buffer.MaxSize > replayMaxBuffer {
		pc.Buffer.MaxSize = replayMaxBuffer
	}
	p, err := pipeline.New(pc)
	if err != nil {
		return nil, "", err
	}
	if err := p.Open(ctx); err != nil {
		if errors.Is(err, buffer.ErrLocked) {
			return nil, "", fmt.Errorf("%w: a logtally holds the state dir but does not answer on %s", err, cfg.ControlSocket())
		}
		return nil, "", err
	}
	defer p.Close(context.Background())
	runCtx, stopRun := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- p.Run(runCtx) }()
	sum, err = replay.NewService(p).Replay(ctx, req, report)
	stopRun() // commits and drains what is left (a stopped replay's counts)
	if rerr := <-runDone; rerr != nil {
		err = errors.Join(err, rerr)
	}
	return sum, "in this process (no daemon runs on " + cfg.StateDir + ")", err
}

// replayMaxBuffer bounds buffer.max_size for a replay that runs on its
// own.
const replayMaxBuffer = 32 << 20
