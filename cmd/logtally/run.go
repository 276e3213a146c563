package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/logtally/logtally/config"
	logtallyd "github.com/logtally/logtally/daemon" // daemon is the tests' helper that runs this command
)

// cmdRun runs the daemon until SIGTERM or SIGINT; SIGHUP loads the config
// again and hands a valid one to the daemon.
func cmdRun(args []string, stderr io.Writer) error {
	fs, path := parseFlags("run", stderr)
	level := fs.String("log-level", "", "log `level`: debug, info, warn or error (default: [log] level)")
	if err := requireConfig(fs, args, path); err != nil {
		return err
	}
	cfg, err := config.Load(*path)
	if err != nil {
		return usageError{err}
	}
	log, tap, err := cfg.Logger(*level, stderr)
	if err != nil {
		return usagef("run: %w", err)
	}
	d := logtallyd.New(cfg, logtallyd.Options{Clock: processClock, Logger: log, Tap: tap, Version: version})

	// The first SIGTERM or SIGINT stops reading and drains (the daemon
	// tells systemd); a second exits at once.
	ctx, release := onStopSignals(func(sig os.Signal) {
		log.Info("stopping: reading stopped, flushing what is buffered", "signal", sig.String(), "timeout", d.Config().ShutdownTimeout.D())
	}, func(sig os.Signal) {
		log.Warn("second signal: exiting at once; the buffer keeps what was not written", "signal", sig.String())
	}, 1)
	defer release()
	hups := make(chan os.Signal, 1)
	signal.Notify(hups, syscall.SIGHUP)
	defer signal.Stop(hups)

	err = d.Open(ctx)
	if err == nil {
		ran := make(chan error, 1)
		go func() { ran <- d.Run(ctx) }()
		err = reloadOnHUP(d, *path, hups, ran, log)
	}
	d.Close(context.Background()) // Run has returned: closes what Open left
	if err != nil {
		log.Error("logtally stopped on an error", "err", err)
		if ce := (*logtallyd.ConfigError)(nil); errors.As(err, &ce) {
			return usageError{err}
		}
		return err
	}
	log.Info("logtally stopped")
	return nil
}

// reloadOnHUP loads the config at path at each SIGHUP and hands a valid
// one to d (an invalid one is logged, naming the key, and the running one
// is kept), until Run returns on ran; it returns Run's error.
func reloadOnHUP(d *logtallyd.Daemon, path string, hups <-chan os.Signal, ran <-chan error, log *slog.Logger) error {
	for {
		select {
		case err := <-ran:
			return err
		case <-hups:
		}
		log.Info("SIGHUP: reloading the config", "path", path)
		next, err := config.Load(path)
		if err != nil {
			log.Error("reload refused: the new config is invalid; the running one is kept", "err", err)
			continue
		}
		d.Reload(next)
	}
}
