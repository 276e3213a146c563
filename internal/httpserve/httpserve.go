// Package httpserve runs an http.Server for the life of a context: it
// listens (early, so that an address in use is found before the rest
// starts), serves, and on cancellation stops accepting and waits a bounded
// time for the requests in progress. A listen name taken for loopback is
// resolved and must resolve to loopback addresses only. The daemon's
// endpoints (package observe) and `logtally serve` (package dashboard)
// run on it.
package httpserve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"
)

// ShutdownTimeout bounds the wait for requests in progress when Run's
// context ends.
const ShutdownTimeout = 5 * time.Second

// Server serves one handler on one address.
type Server struct {
	// LookupHost resolves a listen name taken for loopback (see Listen);
	// nil means net.DefaultResolver.LookupHost. Tests set it.
	LookupHost func(ctx context.Context, host string) ([]string, error)

	addr string
	what string
	log  *slog.Logger
	srv  *http.Server
	ln   net.Listener
}

// New returns a Server of h on addr (host:port), named what in its log
// lines ("http endpoints"), with the timeouts of a small local service.
// It does not listen yet.
func New(addr, what string, h http.Handler, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{addr: addr, what: what, log: log, srv: &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}}
}

// lookupTimeout bounds the resolution of a listen name.
const lookupTimeout = 10 * time.Second

// Listen opens the listening socket, so that an address in use is found
// before Run. Run calls it if it was not called. Call it at most once,
// before Run and from the same goroutine.
//
// A listen name that LoopbackHost takes for loopback (localhost,
// *.localhost: config lets them listen without a password) is resolved
// here (the hosts file, then DNS) and listened on only if every address
// it resolves to is loopback, on the first of them (IPv4 first, as
// net.Listen would): a hosts file line "192.0.2.2 dash.localhost" is an
// error, not a page on the network. Other names are listened on as
// net.Listen resolves them.
func (s *Server) Listen() error {
	if s.ln != nil {
		return nil
	}
	addr, err := s.loopbackAddr()
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.addr, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.addr, err)
	}
	s.ln = ln
	return nil
}

// loopbackAddr returns the address to listen on for s.addr: s.addr, or
// for a name taken for loopback the loopback address it resolves to.
func (s *Server) loopbackAddr() (string, error) {
	host, port, err := net.SplitHostPort(s.addr)
	if err != nil || net.ParseIP(strings.Trim(host, "[]")) != nil || !LoopbackHost(host) {
		return s.addr, nil
	}
	lookup := s.LookupHost
	if lookup == nil {
		lookup = net.DefaultResolver.LookupHost
	}
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	addrs, err := lookup(ctx, host)
	if err != nil {
		return "", err
	}
	var ips []net.IP
	for _, a := range addrs {
		ip := net.ParseIP(a)
		if ip == nil || !ip.IsLoopback() {
			return "", fmt.Errorf("%s resolves to %s, not a loopback address: listen on 127.0.0.1, "+
				"or correct the hosts file or DNS", host, a)
		}
		ips = append(ips, ip)
	}
	if len(ips) == 0 {
		return "", fmt.Errorf("%s resolves to no address", host)
	}
	ip := ips[0]
	for _, i := range ips {
		if i.To4() != nil {
			ip = i
			break
		}
	}
	return net.JoinHostPort(ip.String(), port), nil
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
	s.log.Info(s.what+" listening", "addr", s.ln.Addr().String())
	served := make(chan error, 1)
	go func() { served <- s.srv.Serve(s.ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("%s: %w", s.what, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	err := s.srv.Shutdown(sctx)
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) && serr != nil {
		return fmt.Errorf("%s: %w", s.what, serr)
	}
	if err != nil {
		s.srv.Close()
		return fmt.Errorf("%s shutdown: %w", s.what, err)
	}
	return nil
}

// LoopbackHost reports whether host (a name or an IP, without port; IPv6
// with or without brackets) names this machine's loopback: localhost, a
// *.localhost name, or a loopback IP. Any other name may resolve to
// anything; so may a hosts file's localhost names, which Listen
// resolves and checks.
func LoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// DialAddr turns a listen address into one to connect to: an empty or
// unspecified host is this host (logtally state asks the daemon's
// /status there).
func DialAddr(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	switch ip := net.ParseIP(host); {
	case host == "":
		host = "127.0.0.1"
	case ip != nil && ip.IsUnspecified() && ip.To4() != nil:
		host = "127.0.0.1"
	case ip != nil && ip.IsUnspecified():
		host = "::1"
	}
	return net.JoinHostPort(host, port)
}
