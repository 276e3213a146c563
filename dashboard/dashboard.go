package dashboard

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/internal/hostcheck"
	"github.com/logtally/logtally/query"
)

//go:embed static
var static embed.FS

// CSP is the page's Content-Security-Policy: its own scripts, styles and
// API only; no inline script or style, no frame, no form, no other origin.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Bounds of the work one request may ask.
const (
	// DefaultTop is the pages of the top table when Config.Top is 0.
	DefaultTop = 50
	// MaxTop bounds Config.Top.
	MaxTop = 200
	// MaxCells bounds the counts one query of the page holds
	// (query.Reader.MaxCells): about 16 MB.
	MaxCells = 2_000_000
	// MaxRange is the longest range asked.
	MaxRange = 10 * 366 * 24 * time.Hour
	// MaxPage is the longest page name asked.
	MaxPage = 4096
	// Concurrent is the API requests answered at once; more get 503.
	Concurrent = 4
	// Timeout bounds one API request, its reads included, unless
	// Config.Timeout says otherwise.
	Timeout = 30 * time.Second
)

// Config configures New.
type Config struct {
	// Reader reads the buckets. Required. Its MaxCells is lowered to
	// MaxCells. Its Clock (clock.Real when nil) is the dashboard's: the
	// page's "now" and the retention checks read the same clock.
	Reader *query.Reader
	// Refresh is how often the page refreshes itself: the flush
	// interval, at least 2 s.
	Refresh time.Duration
	// Top is the pages of the top table, at most; 0 means DefaultTop.
	Top int
	// User and Password, when User is not empty, ask for HTTP basic
	// authentication.
	User, Password string
	// Hosts are the Host header names answered beside IP addresses and
	// localhost when there is no authentication (a guard against DNS
	// rebinding: package internal/hostcheck); the caller adds the listen
	// address's name (hostcheck.Names).
	Hosts []string
	// Attribution are the lines that credit the sources of the geo
	// databases the counts of countries and networks came from, as their
	// licences ask (geo.DB.Attribution); shown under those panels.
	Attribution []string
	// Timeout bounds one API request; 0 means Timeout.
	Timeout time.Duration
	// Logger defaults to discarding.
	Logger *slog.Logger
}

// Dashboard serves the page and its JSON API.
type Dashboard struct {
	cfg     Config
	reader  query.Reader
	log     *slog.Logger
	handler http.Handler
	busy    chan struct{}
	auth    [sha256.Size]byte // of "user:password"
}

// New returns the Dashboard of cfg. It reads nothing yet.
func New(cfg Config) (*Dashboard, error) {
	if cfg.Reader == nil || cfg.Reader.DB == nil {
		return nil, errors.New("dashboard: no reader")
	}
	if cfg.Top < 0 || cfg.Top > MaxTop {
		return nil, errors.New("dashboard: top out of range")
	}
	if cfg.User != "" && cfg.Password == "" {
		return nil, errors.New("dashboard: a user without a password")
	}
	cfg.Top = cmp.Or(cfg.Top, DefaultTop)
	cfg.Refresh = max(cfg.Refresh, 2*time.Second)
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	d := &Dashboard{cfg: cfg, reader: *cfg.Reader, log: log.With("component", "dashboard"), busy: make(chan struct{}, Concurrent)}
	d.reader.MaxCells = MaxCells
	d.reader.Clock = cmp.Or[clock.Clock](d.reader.Clock, clock.Real{})
	if cfg.User != "" {
		d.auth = sha256.Sum256([]byte(cfg.User + ":" + cfg.Password))
	}
	files, err := fs.Sub(static, "static")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /", http.FileServerFS(filesOnly{files}))
	mux.HandleFunc("GET /api/sites", d.api(d.sites))
	mux.HandleFunc("GET /api/view", d.api(d.view))
	d.handler = d.guard(mux)
	return d, nil
}

// filesOnly is an fs.FS whose directories other than the root (which
// http.FileServerFS answers with index.html) do not exist: a directory
// is never listed.
type filesOnly struct{ fs.FS }

func (f filesOnly) Open(name string) (fs.File, error) {
	file, err := f.FS.Open(name)
	if err != nil || name == "." {
		return file, err
	}
	if st, err := file.Stat(); err != nil || st.IsDir() {
		file.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return file, nil
}

// Handler returns the page's handler: GET only, behind the checks of who
// is asking. It serves the page at "/": mount it under a prefix with
// http.StripPrefix.
func (d *Dashboard) Handler() http.Handler { return d.handler }

// guard checks every request before h: the method, the Host (without
// authentication), the credentials (with), and sets the headers that keep
// the page from being framed, sniffed or given other origins' scripts.
func (d *Dashboard) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", CSP)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Cross-Origin-Resource-Policy", "same-origin")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			hd.Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, "the dashboard is read-only: GET only")
			return
		}
		if d.cfg.User == "" {
			if !hostcheck.Allowed(r.Host, d.cfg.Hosts) {
				writeError(w, http.StatusForbidden, "host not allowed: without a password the dashboard answers IP addresses, localhost, "+
					"its listen address's name and dashboard.hosts (a guard against DNS rebinding)")
				return
			}
		} else {
			user, pass, ok := r.BasicAuth()
			got := sha256.Sum256([]byte(user + ":" + pass))
			if !ok || subtle.ConstantTimeCompare(got[:], d.auth[:]) != 1 {
				hd.Set("WWW-Authenticate", `Basic realm="logtally", charset="UTF-8"`)
				writeError(w, http.StatusUnauthorized, "authentication required")
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// api wraps an API handler: at most Concurrent at once (503 beyond), a
// Timeout, no caching, and its value or error as JSON.
func (d *Dashboard) api(fn func(ctx context.Context, r *http.Request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		select {
		case d.busy <- struct{}{}:
			defer func() { <-d.busy }()
		default:
			w.Header().Set("Retry-After", "2")
			writeError(w, http.StatusServiceUnavailable, "busy: too many requests at once")
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), cmp.Or(d.cfg.Timeout, Timeout))
		defer cancel()
		v, err := fn(ctx, r)
		if err != nil {
			status, msg := d.status(err)
			writeError(w, status, msg)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if err := json.NewEncoder(w).Encode(v); err != nil {
			d.log.Warn("writing a response", "err", err)
		}
	}
}

// status returns the HTTP status and message of err: the request's own
// mistakes as they are (they quote the request, never the database), a
// database error as a generic message (its details are logged).
func (d *Dashboard) status(err error) (int, string) {
	switch {
	case errors.Is(err, query.ErrUnknownSite), errors.Is(err, query.ErrUnknownPage):
		return http.StatusNotFound, err.Error()
	case errors.Is(err, query.ErrBadRequest), errors.Is(err, query.ErrRetention):
		return http.StatusBadRequest, err.Error()
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout, "the database did not answer in time"
	}
	// The wrapping names pages read from the buckets (text from the
	// logs): the log gets the innermost cause alone.
	cause := err
	for u := errors.Unwrap(cause); u != nil; u = errors.Unwrap(cause) {
		cause = u
	}
	d.log.Error("reading the buckets failed", "cause", cause.Error())
	return http.StatusInternalServerError, "reading the buckets failed (see the log)"
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// sitesReply is the body of GET api/sites.
type sitesReply struct {
	Sites   []string `json:"sites"`
	Refresh int64    `json:"refresh_seconds"`
	Now     int64    `json:"now"`
	Top     int      `json:"top"`
}

func (d *Dashboard) sites(ctx context.Context, _ *http.Request) (any, error) {
	sites, err := d.reader.Sites(ctx)
	if err != nil {
		return nil, err
	}
	if sites == nil {
		sites = []string{}
	}
	return sitesReply{Sites: sites, Refresh: int64((d.cfg.Refresh + time.Second/2) / time.Second),
		Now: d.reader.Clock.Now().UnixMilli(), Top: d.cfg.Top}, nil
}
