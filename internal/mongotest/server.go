package mongotest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Server is a MongoDB-wire server for one test, reached through a TCP proxy
// the test can cut off with Stop and restore with Resume.
type Server struct {
	upstream string // host:port the proxy forwards to
	addr     string // the proxy's listen address, stable across Resume
	uri      string // mongodb:// URI through the proxy
	direct   *mongo.Client

	mu      sync.Mutex
	ln      net.Listener // nil while stopped
	conns   map[net.Conn]struct{}
	wg      sync.WaitGroup
	closers []func()
}

// Start returns a server for t: the MongoDB named by MONGODB_URI if set,
// else a FerretDB embedded in this process with its data in t.TempDir()
// (starting one takes about a millisecond, so every test gets its own).
// Everything is shut down at t.Cleanup.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{conns: make(map[net.Conn]struct{})}
	t.Cleanup(s.close)

	upstreamURI := os.Getenv("MONGODB_URI")
	if upstreamURI == "" {
		uri, stop, err := Embedded(context.Background(), t.TempDir(), nil)
		if err != nil {
			t.Fatalf("mongotest: %v", err)
		}
		s.closers = append(s.closers, stop)
		upstreamURI = uri
	}
	host, proxied, err := splitURI(upstreamURI)
	if err != nil {
		t.Fatalf("mongotest: %v", err)
	}
	s.upstream = host

	direct, err := mongo.Connect(clientOptions(upstreamURI))
	if err != nil {
		t.Fatalf("mongotest: connect to %s: %v", host, err)
	}
	s.direct = direct
	s.closers = append(s.closers, func() { _ = direct.Disconnect(context.Background()) })

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("mongotest: proxy listen: %v", err)
	}
	s.addr = ln.Addr().String()
	s.uri = proxied(s.addr)
	s.serve(ln)
	return s
}

// Direct returns the database named name through a connection that does
// not pass the proxy: a test reads through it while Stop cuts the others
// off.
func (s *Server) Direct(name string) *mongo.Database { return s.direct.Database(name) }

// URI returns the mongodb:// URI of the proxy.
func (s *Server) URI() string { return s.uri }

// Database returns a fresh, uniquely named database on a new client
// connected through the proxy. The database is dropped (directly, not
// through the proxy, so it works while stopped) and the client disconnected
// at t.Cleanup.
func (s *Server) Database(t testing.TB) *mongo.Database {
	t.Helper()
	client, err := mongo.Connect(clientOptions(s.uri))
	if err != nil {
		t.Fatalf("mongotest: connect through proxy: %v", err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "test_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.direct.Database(name).Drop(ctx); err != nil {
			t.Errorf("mongotest: drop %s: %v", name, err)
		}
		_ = client.Disconnect(ctx)
	})
	return client.Database(name)
}

// Stop closes the proxy listener and every proxied connection, so clients
// see connection refused or reset, as when mongod is down. Stopping a
// stopped server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	if s.ln != nil {
		_ = s.ln.Close()
		s.ln = nil
	}
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// Resume listens again on the proxy's address. Resuming a running server
// does nothing.
func (s *Server) Resume() {
	s.mu.Lock()
	running := s.ln != nil
	s.mu.Unlock()
	if running {
		return
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		panic(fmt.Sprintf("mongotest: proxy listen again on %s: %v", s.addr, err))
	}
	s.serve(ln)
}

func (s *Server) close() {
	if s.addr != "" {
		s.Stop()
	}
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

// serve accepts on ln until Stop closes it.
func (s *Server) serve(ln net.Listener) {
	s.mu.Lock()
	s.ln = ln
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if !s.track(ln, c) {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.pipe(ln, c)
			}()
		}
	}()
}

// track registers c unless the listener it came from has been stopped, in
// which case it closes c and reports false.
func (s *Server) track(from net.Listener, c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln != from {
		_ = c.Close()
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	_ = c.Close()
}

// pipe forwards between client and a new upstream connection until either
// side closes.
func (s *Server) pipe(from net.Listener, client net.Conn) {
	defer s.untrack(client)
	up, err := net.DialTimeout("tcp", s.upstream, 5*time.Second)
	if err != nil {
		return
	}
	if !s.track(from, up) {
		return
	}
	defer s.untrack(up)
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		// Either side ending ends both, like a dropped connection.
		_ = dst.Close()
		_ = src.Close()
		done <- struct{}{}
	}
	go cp(up, client)
	go cp(client, up)
	<-done
	<-done
}

func clientOptions(uri string) *options.ClientOptions {
	return options.Client().ApplyURI(uri).
		SetConnectTimeout(2 * time.Second).
		SetServerSelectionTimeout(5 * time.Second)
}

// splitURI returns the first host of a mongodb:// URI and a func that
// rewrites the URI to point at another address with directConnection=true,
// keeping the credentials, database and options.
func splitURI(uri string) (host string, proxied func(addr string) string, err error) {
	rest, ok := strings.CutPrefix(uri, "mongodb://")
	if !ok {
		return "", nil, fmt.Errorf("unsupported URI %q: want mongodb://", uri)
	}
	userinfo := ""
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		userinfo, rest = rest[:i+1], rest[i+1:]
	}
	hosts, tail := rest, ""
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		hosts, tail = rest[:i], rest[i:]
	}
	host, _, _ = strings.Cut(hosts, ",")
	if host == "" {
		return "", nil, errors.New("URI has no host")
	}
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(host, "27017")
	}
	path, query, _ := strings.Cut(tail, "?")
	if path == "" {
		path = "/"
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return "", nil, fmt.Errorf("URI options: %w", err)
	}
	q.Del("replicaSet")
	q.Set("directConnection", "true")
	return host, func(addr string) string {
		return "mongodb://" + userinfo + addr + path + "?" + q.Encode()
	}, nil
}
