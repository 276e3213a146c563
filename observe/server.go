package observe

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/geo"
	"github.com/logtally/logtally/internal/hostcheck"
	"github.com/logtally/logtally/internal/httpserve"
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

// Config configures New.
type Config struct {
	// Listen is the host:port to listen on ([http] listen). Required.
	Listen string
	// Hosts are the Host header names answered beside IP addresses,
	// localhost and Listen's own name ([http] hosts): a guard against DNS
	// rebinding (package internal/hostcheck).
	Hosts []string
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
	// Geo, when not nil, holds the [geo] databases the parsers read:
	// /metrics shows each one's build time and age, read at each scrape
	// (a reload's new database shows at once).
	Geo *geo.Holder
	// Dashboard, when not nil, is served under /dashboard/ (the handler
	// sees paths without the prefix): package dashboard's page, with its
	// own checks of who is asking.
	Dashboard http.Handler
	// Clock defaults to clock.Real.
	Clock clock.Clock
	// Logger defaults to discarding.
	Logger *slog.Logger
}

// Server serves /metrics, /healthz and /status.
type Server struct {
	*httpserve.Server
	cfg     Config
	log     *slog.Logger
	mongo   string   // the redacted URI
	secrets []string // cut out of responses
	handler http.Handler
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
	if err := reg.Register(newCollector(cfg.Source, cfg.Version, cfg.Geo, cfg.Clock, s.log)); err != nil {
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
	index := "logtally: /metrics /healthz /status\n"
	// Every endpoint of its own answers the Host names of hostcheck,
	// /healthz too: a prober by address (a load balancer, Kubernetes,
	// curl on the host) sends an address, which is answered; one by name
	// needs the name in http.hosts. The page keeps its own checks
	// (the same rule without a password, the password with one).
	var h http.Handler = hostcheck.Guard(mux, hostcheck.Names(cfg.Listen, cfg.Hosts))
	if cfg.Dashboard != nil {
		mux.Handle("GET /dashboard", http.RedirectHandler("/dashboard/", http.StatusMovedPermanently))
		index = "logtally: /metrics /healthz /status /dashboard/\n"
		top := http.NewServeMux()
		top.Handle("/dashboard/", http.StripPrefix("/dashboard", cfg.Dashboard))
		top.Handle("/", h)
		top.Handle("GET /dashboard", h) // not top's own redirect
		h = top
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, index)
	})
	s.handler = h
	s.Server = httpserve.New(cfg.Listen, "http endpoints", h, s.log)
	return s, nil
}

// Handler returns the Server's handler, for tests.
func (s *Server) Handler() http.Handler { return s.handler }

// healther is a Source that can be alive and still not healthy (a full
// state dir, hits waiting for MongoDB or reading paused on a full buffer
// longer than unhealthy_after, a start waiting for MongoDB):
// *pipeline.Pipeline.
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
	// Lists are the pinned data lists built in (Lists).
	Lists []List `json:"lists"`
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
	rep := StatusReport{Time: now.UTC(), Version: s.cfg.Version, Health: "ok", Mongo: s.mongo, Lists: Lists(), Status: st}
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
