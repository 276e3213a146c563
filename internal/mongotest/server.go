package mongotest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Server is a MongoDB-wire server for one test, reached through a proxy
// that applies write commands one at a time and that the test can cut off
// (Stop, Resume), restart (Restart) or make fail (Faults).
type Server struct {
	addr string // the proxy's listen address, stable across Resume
	uri  string // mongodb:// URI through the proxy

	// The embedded server, when MONGODB_URI is not set: its data
	// directory and how to stop it (Restart starts another on dir).
	dir  string
	stop func()

	mu       sync.Mutex
	upstream string        // host:port the proxy forwards to
	direct   *mongo.Client // to upstream, not through the proxy
	ln       net.Listener  // nil while stopped
	conns    map[net.Conn]struct{}
	wg       sync.WaitGroup

	// writes is held from a write command's request to its reply: the
	// server sees one write at a time (see the package doc).
	writes sync.Mutex
	faults faults

	// With the embedded server: the _id indexes it lacks and the
	// narrowing of guarded updates (nil with MONGODB_URI).
	ids    *idIndexer
	narrow *narrower

	// maxDoc bounds the documents updates leave (MaxDocSize; 0: none),
	// tried in the scratch collection of this name (limit.go).
	maxDoc      atomic.Int64
	scratchName string
	scratchUsed atomic.Bool // dropped at close
}

// Start returns a server for t: the MongoDB named by MONGODB_URI if set,
// else a FerretDB embedded in this process with its data in t.TempDir()
// (starting one takes about a millisecond, so every test gets its own).
// Everything is shut down at t.Cleanup.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := start(t.TempDir)
	if s != nil {
		t.Cleanup(s.close)
	}
	if err != nil {
		t.Fatalf("mongotest: %v", err)
	}
	return s
}

// New returns a server for a program that is not a test (a benchmark), as
// Start does, the embedded server's data in dir (an existing directory,
// which the caller removes). Close shuts it down.
func New(dir string) (*Server, error) {
	s, err := start(func() string { return dir })
	if err != nil {
		if s != nil {
			s.close()
		}
		return nil, err
	}
	return s, nil
}

// Close shuts down the proxy, and the embedded server if there is one.
// It is for servers made by New; Start's are closed at the test's
// cleanup.
func (s *Server) Close() { s.close() }

// start starts the server, embedded with its data in dir() unless
// MONGODB_URI is set. On error the Server returned, if any, must be
// closed.
func start(dir func() string) (*Server, error) {
	s := &Server{conns: make(map[net.Conn]struct{}), scratchName: newScratchName()}
	upstreamURI := os.Getenv("MONGODB_URI")
	if upstreamURI == "" {
		s.dir = dir()
		uri, stop, err := Embedded(context.Background(), s.dir, nil)
		if err != nil {
			return s, err
		}
		s.stop = stop
		upstreamURI = uri
		// What makes FerretDB look documents up by _id as MongoDB does
		// (index.go, narrow.go); a real MongoDB needs neither.
		s.ids = &idIndexer{dir: s.dir}
		s.narrow = newNarrower(s.directClient)
	}
	host, proxied, err := splitURI(upstreamURI)
	if err != nil {
		return s, err
	}
	if err := s.connect(host, upstreamURI); err != nil {
		return s, err
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return s, fmt.Errorf("proxy listen: %w", err)
	}
	s.addr = ln.Addr().String()
	s.uri = proxied(s.addr)
	s.serve(ln)
	return s, nil
}

// connect points the proxy and the direct client at the server at host.
func (s *Server) connect(host, uri string) error {
	direct, err := mongo.Connect(clientOptions(uri))
	if err != nil {
		return fmt.Errorf("connect to %s: %w", host, err)
	}
	s.mu.Lock()
	old := s.direct
	s.upstream, s.direct = host, direct
	s.mu.Unlock()
	if old != nil {
		_ = old.Disconnect(context.Background())
	}
	return nil
}

// directClient returns the client that does not pass the proxy.
func (s *Server) directClient() *mongo.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.direct
}

// Lookups returns what the proxy did so that the embedded server looks
// documents up by _id, as MongoDB does: the indexes it added, and the
// statements of guarded updates it narrowed to their _id. Both are 0 with
// MONGODB_URI.
func (s *Server) Lookups() (indexes, narrowed int64) {
	if s.narrow != nil {
		narrowed = s.narrow.done.Load()
	}
	return s.ids.created(), narrowed
}

// Direct returns the database named name through a connection that does
// not pass the proxy: a test reads through it while Stop cuts the others
// off. Its writes are not applied one at a time.
func (s *Server) Direct(name string) *mongo.Database {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.direct.Database(name)
}

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
		if err := s.Direct(name).Drop(ctx); err != nil {
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

// Restart stops the server and starts it again on the same data, as
// mongod restarting: every connection is closed, and connections made
// meanwhile are refused. With MONGODB_URI, whose server the test does not
// own, it only closes the connections (Stop, then Resume).
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop()
	defer s.Resume()
	if s.stop == nil {
		return
	}
	s.stop()
	uri, stop, err := Embedded(context.Background(), s.dir, nil)
	if err != nil {
		t.Fatalf("mongotest: restart: %v", err)
	}
	s.stop = stop
	host, _, err := splitURI(uri)
	if err != nil {
		t.Fatalf("mongotest: restart: %v", err)
	}
	if err := s.connect(host, uri); err != nil {
		t.Fatalf("mongotest: restart: %v", err)
	}
}

func (s *Server) close() {
	if s.addr != "" {
		s.Stop()
	}
	s.mu.Lock()
	direct := s.direct
	s.mu.Unlock()
	if direct != nil {
		if s.scratchUsed.Load() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_ = direct.Database(scratchDB).Collection(s.scratchName).Drop(ctx)
			cancel()
		}
		_ = direct.Disconnect(context.Background())
	}
	if s.stop != nil {
		s.stop()
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

// pipe forwards whole messages between client and a new upstream
// connection until either side closes (link).
func (s *Server) pipe(from net.Listener, client net.Conn) {
	defer s.untrack(client)
	s.mu.Lock()
	upstream := s.upstream
	s.mu.Unlock()
	up, err := net.DialTimeout("tcp", upstream, 5*time.Second)
	if err != nil {
		return
	}
	if !s.track(from, up) {
		return
	}
	defer s.untrack(up)
	l := &link{s: s, client: client, up: up, closed: make(chan struct{})}
	done := make(chan struct{}, 2)
	run := func(f func()) {
		f()
		l.close() // either side ending ends both, like a dropped connection
		done <- struct{}{}
	}
	go run(l.requests)
	go run(l.replies)
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
