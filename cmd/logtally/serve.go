package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/dashboard"
	"github.com/logtally/logtally/geo"
	"github.com/logtally/logtally/internal/httpserve"
)

// cmdServe serves the dashboard on [dashboard] listen (or -listen) until
// SIGTERM or SIGINT. It only reads the buckets: a MongoDB user with find on
// the collections of query.Reader.Reads is enough (README's role; check
// warns when the user can read the salts).
func cmdServe(args []string, stderr io.Writer) error {
	fs, path := parseFlags("serve", stderr)
	listen := fs.String("listen", "", "`host:port` to listen on (default [dashboard] listen, 127.0.0.1:9465)")
	level := fs.String("log-level", "", "least `level` logged: debug, info, warn or error (default [log] level)")
	if err := requireConfig(fs, args, path); err != nil {
		return err
	}
	cfg, err := config.LoadReader(*path)
	if err != nil {
		return usageError{err}
	}
	if *listen != "" {
		cfg.Dashboard.Listen = *listen
		if err := cfg.Validate(); err != nil {
			return usagef("serve: -listen: %w", err)
		}
	}
	log, _, err := cfg.Logger(*level, stderr)
	if err != nil {
		return usagef("serve: %w", err)
	}
	client, db, err := cfg.Mongo.Connect("logtally-serve")
	if err != nil {
		return err
	}
	defer client.Disconnect(context.Background())
	dc := cfg.DashboardConfig(db, cfg.Dashboard.Listen, processClock, log)
	dc.Attribution = geoAttribution(cfg.Geo, log)
	d, err := dashboard.New(dc)
	if err != nil {
		return err
	}
	srv := httpserve.New(cfg.Dashboard.Listen, "dashboard", d.Handler(), log.With("component", "dashboard"))
	if err := srv.Listen(); err != nil {
		return err
	}
	ctx, release := onStopSignals(func(sig os.Signal) { log.Info("stopping", "signal", sig.String()) },
		func(os.Signal) {}, 1)
	defer release()
	log.Info("dashboard serving", "url", fmt.Sprintf("http://%s/", srv.Addr()), "mongo", cfg.Mongo.Redacted(), "database", cfg.Mongo.Database,
		"auth", cfg.Dashboard.Auth())
	if err := srv.Run(ctx); err != nil && !errors.Is(err, ctx.Err()) {
		return err
	}
	return nil
}

// geoAttribution returns the lines that credit the [geo] databases'
// sources (geo.DB.Attribution), for the dashboard to show under the
// countries and networks: none when [geo] names no file or its files
// cannot be opened here (a dashboard host need not have them: logged).
func geoAttribution(g config.Geo, log *slog.Logger) []string {
	if g.CountryDB == "" && g.ASNDB == "" {
		return nil
	}
	db, err := geo.Open(g.CountryDB, g.ASNDB)
	if err != nil {
		log.Warn("the [geo] databases cannot be read here: the dashboard shows no attribution for them", "err", err)
		return nil
	}
	return db.Attribution()
}
