package observe

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/pipeline"
	"github.com/logtally/logtally/redact"
)

// Source is what the Server reads of the pipeline. *pipeline.Pipeline
// implements it.
type Source interface {
	// Stats returns the running totals.
	Stats() pipeline.Stats
	// Alive returns nil while the pipeline makes its rounds.
	Alive(now time.Time) error
	// Status returns the buffer's and the tailers' state.
	Status() (pipeline.Status, error)
}

// ShutdownTimeout bounds the wait for requests in progress when Run's
// context ends.
const ShutdownTimeout = 5 * time.Second

// Config configures New.
type Config struct {
	// Listen is the host:port to listen on ([http] listen). Required.
	Listen string
	// Source is the pipeline. Required.
	Source Source
	// Version is logtally's version, for logtally_build_info and /status.
	Version string
	// Instance names this host in /status when the Source's Status has
	// none.
	Instance string
	// MongoURI is shown redacted in /status; its secrets (password,
	// credential options, see redact.URI) are cut
	// out of every /status and /healthz response.
	MongoURI string
	// Tap, when not nil, is the log's Tap: /status shows the last
	// warning or error of each component.
	Tap *Tap
	// Clock defaults to clock.Real.
	Clock clock.Clock
	// Logger defaults to discarding.
	Logger *slog.Logger
}

// Server serves /metrics, /healthz and /status.
type Server struct {
	cfg     Config
	log     *slog.Logger
	mongo   string   // the redacted URI
	secrets []string // cut out of responses
	srv     *http.Server
	ln      net.Listener
}

// New returns a Server for cfg. It does not listen yet.
func New(cfg Config) (*Server, error) {
	if cfg.Listen == "" {
		return nil, errors.New("observe: no listen address")
	}
	if cfg.Source == nil {
		return nil, errors.New("observe: no source")
	}
	cfg.Clock = cmp.Or[clock.Clock](cfg.Clock, clock.Real{})
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, log: log.With("component", "http")}
	s.mongo, s.secrets = redactURI(cfg.MongoURI)

	reg := prometheus.NewRegistry()
	if err := reg.Register(newCollector(cfg.Source, cfg.Version, cfg.Clock, s.log)); err != nil {
		return nil, fmt.Errorf("observe: %w", err)
	}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:      slogPrinter{s.log},
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      reg, // promhttp_metric_handler_errors_total
	}))
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /status", s.status)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "logtally: /metrics /healthz /status\n")
	})
	s.srv = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	return s, nil
}

// Handler returns the Server's handler, for tests.
func (s *Server) Handler() http.Handler { return s.srv.Handler }

// Listen opens the listening socket, so that an address in use is found
// before Run. Run calls it if it was not called. Call it at most once,
// before Run and from the same goroutine.
func (s *Server) Listen() error {
	if s.ln != nil {
		return nil
	}
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.cfg.Listen, err)
	}
	s.ln = ln
	return nil
}

// Addr returns the address listened on, or nil before Listen.
func (s *Server) Addr() net.Addr {
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Run listens (unless Listen was called) and serves until ctx ends, then
// shuts down: it stops accepting, waits up to ShutdownTimeout for the
// requests in progress and returns nil. A listen or serve error is
// returned at once. Call it once.
func (s *Server) Run(ctx context.Context) error {
	if err := s.Listen(); err != nil {
		return err
	}
	s.log.Info("http endpoints listening", "addr", s.ln.Addr().String())
	served := make(chan error, 1)
	go func() { served <- s.srv.Serve(s.ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	err := s.srv.Shutdown(sctx)
	<-served // http.ErrServerClosed
	if err != nil {
		s.srv.Close()
		return fmt.Errorf("http server shutdown: %w", err)
	}
	return nil
}

// healther is a Source that can be alive and still not healthy (a full
// state dir, a start waiting for MongoDB): *pipeline.Pipeline.
type healther interface {
	Health(now time.Time) error
}

// health returns why /healthz fails: the Source's Health if it has one,
// else Alive.
func (s *Server) health(now time.Time) error {
	if h, ok := s.cfg.Source.(healther); ok {
		return h.Health(now)
	}
	return s.cfg.Source.Alive(now)
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := s.health(s.cfg.Clock.Now()); err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write(s.scrub([]byte(err.Error() + "\n")))
		return
	}
	w.Write([]byte("ok\n"))
}

// StatusReport is the JSON body of GET /status.
type StatusReport struct {
	// Time is when the report was made.
	Time time.Time `json:"time"`
	// Version is logtally's version.
	Version string `json:"version,omitempty"`
	// Health is "ok", or why /healthz fails.
	Health string `json:"health"`
	// Mongo is the MongoDB URI, password redacted.
	Mongo string `json:"mongo,omitempty"`
	pipeline.Status
	// Problems are the last warning or error of each component, newest
	// first, when the log is tapped (Config.Tap).
	Problems []Problem `json:"recent_problems,omitempty"`
}

func (s *Server) status(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	st, err := s.cfg.Source.Status()
	if err != nil {
		http.Error(w, string(s.scrub([]byte("status: "+err.Error()))), http.StatusInternalServerError)
		return
	}
	now := s.cfg.Clock.Now()
	rep := StatusReport{Time: now.UTC(), Version: s.cfg.Version, Health: "ok", Mongo: s.mongo, Status: st}
	rep.Instance = cmp.Or(rep.Instance, s.cfg.Instance)
	if err := s.health(now); err != nil {
		rep.Health = err.Error()
	}
	if s.cfg.Tap != nil {
		rep.Problems = s.cfg.Tap.Problems()
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		http.Error(w, "status: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(s.scrub(b.Bytes()))
}

// minSecret is the shortest password scrub cuts out of responses: a
// shorter one would mangle them. Such a password still never appears by
// way of the URI, which is only ever shown redacted.
const minSecret = 4

// scrub replaces every occurrence of a secret in b.
func (s *Server) scrub(b []byte) []byte {
	for _, sec := range s.secrets {
		b = bytes.ReplaceAll(b, []byte(sec), []byte("xxxxx"))
	}
	return b
}

// redactURI returns uri as config.Mongo.Redacted shows it, and the forms
// its secrets (password, credential options: redact.URI) may take in
// a response (as written, percent-decoded, JSON-escaped), longest first.
func redactURI(uri string) (redacted string, secrets []string) {
	redacted, forms := redact.URI(uri)
	for _, f := range slices.Clone(forms) {
		if j, err := json.Marshal(f); err == nil {
			forms = append(forms, strings.Trim(string(j), `"`))
		}
	}
	for _, f := range forms {
		if len(f) >= minSecret && !slices.Contains(secrets, f) {
			secrets = append(secrets, f)
		}
	}
	slices.SortStableFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	return redacted, secrets
}

// slogPrinter is promhttp's error log.
type slogPrinter struct{ log *slog.Logger }

func (p slogPrinter) Println(v ...any) {
	p.log.Warn("metrics: " + strings.TrimSuffix(fmt.Sprintln(v...), "\n"))
}
