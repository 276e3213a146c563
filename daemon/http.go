package daemon

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/dashboard"
	"github.com/logtally/logtally/geo"
	"github.com/logtally/logtally/observe"
	"github.com/logtally/logtally/pipeline"
)

// serveHTTP serves /metrics, /healthz and /status on [http] listen (empty:
// nothing), and with [dashboard] daemon the page at /dashboard/ reading
// db, with g the turn's [geo] databases (nil: none read) for /metrics, until the returned stop is called, which waits for the server to
// return; p must not be read once the pipeline is closed (lateSource). A
// listen address in use is logged and counting goes on.
func (d *Daemon) serveHTTP(cfg config.Config, p observe.Source, db *mongo.Database, g *geo.Holder) (stop func(), err error) {
	if cfg.HTTP.Listen == "" {
		return func() {}, nil
	}
	log := d.log
	var dash http.Handler
	if cfg.Dashboard.Daemon {
		dc := cfg.DashboardConfig(db, cfg.HTTP.Listen, d.opts.Clock, log)
		if d.geo != nil {
			dc.Attribution = d.geo.DB().Attribution()
		}
		page, err := dashboard.New(dc)
		if err != nil {
			return nil, err
		}
		dash = page.Handler()
	}
	srv, err := observe.New(observe.Config{Listen: cfg.HTTP.Listen, Hosts: cfg.HTTP.Hosts, Source: p, Version: d.opts.Version,
		Instance: cfg.Instance, MongoURI: cfg.Mongo.URI, Tap: d.opts.Tap, Geo: g, Dashboard: dash, Clock: d.opts.Clock, Logger: log})
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

// lateSource is what the HTTP endpoints read: the pipeline once it is
// open, before that an empty one that is not healthy, saying why.
type lateSource struct {
	p      atomic.Pointer[pipeline.Pipeline]
	reason atomic.Value // string: why there is no pipeline
}

func (s *lateSource) why() error { return errors.New(s.reason.Load().(string)) }

func (s *lateSource) Alive(now time.Time) error {
	if p := s.p.Load(); p != nil {
		return p.Alive(now)
	}
	return s.why()
}

// Health is the pipeline's Health, or why there is none.
func (s *lateSource) Health(now time.Time) error {
	if p := s.p.Load(); p != nil {
		return p.Health(now)
	}
	return s.why()
}

func (s *lateSource) Stats() pipeline.Stats {
	if p := s.p.Load(); p != nil {
		return p.Stats()
	}
	return pipeline.Stats{}
}

// VisitorsNow is the pipeline's, or none (for /metrics).
func (s *lateSource) VisitorsNow(now time.Time) (pipeline.VisitorsNow, bool, error) {
	if p := s.p.Load(); p != nil {
		return p.VisitorsNow(now)
	}
	return pipeline.VisitorsNow{}, false, nil
}

func (s *lateSource) Status() (pipeline.Status, error) {
	if p := s.p.Load(); p != nil {
		return p.Status()
	}
	return pipeline.Status{}, nil
}
