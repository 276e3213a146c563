package main

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"net/http"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/dashboard"
	"github.com/logtally/logtally/observe"
)

// newLogger builds the daemon's logger from [log] (format, level) and the
// -log-level flag, which wins when set. The Tap keeps each component's
// last warning or error for /status.
func newLogger(cfg config.Config, flagLevel string, w io.Writer) (*slog.Logger, *observe.Tap, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(cmp.Or(flagLevel, cfg.Log.Level))); err != nil {
		return nil, nil, usagef("run: -log-level %q: %v", flagLevel, err)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if cfg.Log.Format == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	tap := observe.NewTap(h)
	return slog.New(tap).With("instance", cfg.Instance), tap, nil
}

// serveHTTP serves /metrics, /healthz and /status on [http] listen (empty:
// nothing), and with [dashboard] daemon the page at /dashboard/ reading
// db, until the returned stop is called; p must not be read once the
// pipeline is closed (lateSource). A listen address in use is logged and
// counting goes on.
func serveHTTP(cfg config.Config, p observe.Source, db *mongo.Database, tap *observe.Tap, log *slog.Logger) (stop func(), err error) {
	if cfg.HTTP.Listen == "" {
		return func() {}, nil
	}
	var dash http.Handler
	if cfg.Dashboard.Daemon {
		d, err := dashboard.New(cfg.DashboardConfig(db, cfg.HTTP.Listen, processClock, log))
		if err != nil {
			return nil, err
		}
		dash = d.Handler()
	}
	srv, err := observe.New(observe.Config{Listen: cfg.HTTP.Listen, Hosts: cfg.HTTP.Hosts, Source: p, Version: version,
		Instance: cfg.Instance, MongoURI: cfg.Mongo.URI, Tap: tap, Dashboard: dash, Clock: processClock, Logger: log})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Run(ctx); err != nil {
			log.Error("http endpoints not served; counting goes on", "listen", cfg.HTTP.Listen, "err", err)
		}
	}()
	return func() { cancel(); <-done }, nil
}
