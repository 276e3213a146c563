package flusher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/internal/syncbuf"
	"github.com/logtally/logtally/internal/testenv"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/auth"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/description"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"
)

// Errors as mongo-driver v2 builds them. The handshake's is checked against
// a real server in TestAuthFailureAgainstRealServer.
var (
	authFailed = driver.Error{Code: 18, Name: "AuthenticationFailed", Message: "Authentication failed."}
	// What the mongo package returns for a handshake failure: the
	// driver.Error's code lifted into a CommandError.
	handshakeFailed = mongo.CommandError{Code: 18, Name: "AuthenticationFailed", Message: "Authentication failed.",
		Wrapped: topology.ConnectionError{Wrapped: authFailed}}
	unauthorized = mongo.CommandError{Code: 13, Name: "Unauthorized",
		Message: `not authorized on logtally to execute command { update: "minutes", ordered: false, $db: "logtally" }`}
	userNotFound = mongo.CommandError{Code: 11, Name: "UserNotFound", Message: `Could not find user "alice" for db "admin"`}
	networkErr   = driver.Error{Message: "connection reset", Labels: []string{driver.NetworkError},
		Wrapped: &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}}
)

// poolClearedErr has the text of the driver's unexported poolClearedError,
// which does not unwrap to its cause: an operation finds the connection
// pool cleared after another's handshake failed (seen in
// TestAuthFailureAgainstRealServer now and then).
type poolClearedErr struct{ cause error }

func (e poolClearedErr) Error() string {
	return "connection pool for 127.0.0.1:27017 was cleared because another operation failed with: " + e.cause.Error()
}

func TestAuthFailureRecognisesDriverErrors(t *testing.T) {
	_, clientSide := auth.CreateAuthenticator("NO-SUCH-MECHANISM", &auth.Cred{Username: "u"}, nil)
	var ae *auth.Error
	if !errors.As(clientSide, &ae) {
		t.Fatalf("CreateAuthenticator error %T is not an *auth.Error", clientSide)
	}
	selection := func(last error) error {
		return topology.ServerSelectionError{Wrapped: context.DeadlineExceeded, Desc: description.Topology{
			Servers: []description.Server{{LastError: last}},
		}}
	}
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"handshake: AuthenticationFailed", fmt.Errorf("bulk write 3 updates: %w", handshakeFailed), true},
		{"raw driver.Error 18 in a ConnectionError", topology.ConnectionError{Wrapped: authFailed}, true},
		{"Unauthorized", unauthorized, true},
		{"UserNotFound", userNotFound, true},
		{"MechanismUnavailable", mongo.CommandError{Code: 334}, true},
		{"Unauthorized write error", mongo.WriteException{WriteErrors: mongo.WriteErrors{{Code: 13, Message: "not authorized"}}}, true},
		{"Unauthorized bulk write error", fmt.Errorf("x: %w", mongo.BulkWriteException{
			WriteErrors: []mongo.BulkWriteError{{WriteError: mongo.WriteError{Code: 13}}}}), true},
		{"Atlas bad auth", mongo.CommandError{Code: 8000, Name: "AtlasError", Message: "bad auth : Authentication failed."}, true},
		{"Atlas not allowed", driver.Error{Code: 8000, Message: "user is not allowed to do action [update] on [logtally.minutes]"}, true},
		{"Atlas quota", mongo.CommandError{Code: 8000, Name: "AtlasError", Message: "you are over your space quota"}, false},
		{"client-side mechanism failure", topology.ConnectionError{Wrapped: clientSide}, true},
		{"server selection, auth failure as last error", selection(topology.ConnectionError{Wrapped: authFailed}), true},
		{"server selection, connection refused", selection(topology.ConnectionError{Wrapped: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}}), false},
		{"network error", fmt.Errorf("flush: %w", mongo.CommandError{Labels: []string{driver.NetworkError}, Wrapped: networkErr}), false},
		{"EOF in a connection", topology.ConnectionError{Wrapped: io.EOF}, false},
		{"pool cleared after a handshake failure", fmt.Errorf("create index on minutes: %w", poolClearedErr{handshakeFailed}), true},
		{"pool cleared after a network error", poolClearedErr{networkErr}, false},
		// What CI met: the mongo package's CommandError (no code) around
		// the pool's error, which the code checks alone took for a reply.
		{"pool cleared, as a CommandError", fmt.Errorf("create index on minutes: %w", mongo.CommandError{
			Message: poolClearedErr{handshakeFailed}.Error(), Labels: []string{"RetryableWriteError"}, Wrapped: poolClearedErr{handshakeFailed}}), true},
		{"pool cleared after a network error, as a CommandError", mongo.CommandError{
			Message: poolClearedErr{networkErr}.Error(), Wrapped: poolClearedErr{networkErr}}, false},
		{"duplicate key", mongo.WriteException{WriteErrors: mongo.WriteErrors{{Code: 11000}}}, false},
		{"shutting down", mongo.CommandError{Code: 91, Name: "ShutdownInProgress"}, false},
		{"timeout", context.DeadlineExceeded, false},
		{"nil", nil, false},
	}
	for _, c := range cases {
		if got := authFailure(c.err); got != c.want {
			t.Errorf("%s: authFailure(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

func TestAuthUser(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{`(UserNotFound) Could not find user "alice" for db "admin"`, "alice"},
		{`auth error: Could not find user bob@admin`, "bob"},
		{`UserNotFound: Could not find user: carol@logtally`, "carol"},
		{`(AuthenticationFailed) Authentication failed.`, ""},
		{`not authorized on logtally to execute command { update: "minutes" }`, ""},
	} {
		if got := authUser(errors.New(c.text)); got != c.want {
			t.Errorf("authUser(%q) = %q, want %q", c.text, got, c.want)
		}
	}
	if got := authUser(nil); got != "" {
		t.Errorf("authUser(nil) = %q", got)
	}
}

// lines returns the log lines of level.
func lines(logs, level string) []string {
	var out []string
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, "level="+level) {
			out = append(out, l)
		}
	}
	return out
}

// retry logs authentication failures at ERROR: the first, then one every
// ten minutes with the repeats not logged; other failures stay at WARN;
// success after them is logged.
func TestRetryRateLimitsAuthFailures(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	logs := &syncbuf.Buffer{}
	f := &Flusher{clock: clk, log: slog.New(slog.NewTextHandler(logs, nil)), maxBackoff: time.Minute}
	// Call k (from 1) happens k-1 minutes in: 14 failures, then success.
	call := 0
	fn := func(context.Context) error {
		call++
		switch {
		case call == 3:
			return networkErr
		case call == 11:
			return fmt.Errorf("flush batch b1: %w", userNotFound)
		case call < 15:
			return fmt.Errorf("flush batch b1: %w", unauthorized)
		}
		return nil
	}
	done := make(chan bool, 1)
	go func() { done <- f.retry(context.Background(), "flush", fn) }()
	for range 14 {
		clk.BlockUntil(1)
		clk.Advance(time.Minute)
	}
	if ok := <-done; !ok {
		t.Fatal("retry reported failure")
	}
	out := logs.String()
	errs, warns, infos := lines(out, "ERROR"), lines(out, "WARN"), lines(out, "INFO")
	if len(errs) != 2 || len(warns) != 1 || len(infos) != 1 {
		t.Fatalf("%d ERROR, %d WARN, %d INFO lines; want 2 (the first, and ten minutes later), 1 (the network error), 1 (recovered):\n%s",
			len(errs), len(warns), len(infos), out)
	}
	for _, want := range []string{"flush failed: MongoDB refused the credentials (authentication or authorization failure)",
		"check the credentials of mongo.uri / mongo.uri_file", "attempt=1 ", "Unauthorized"} {
		if !strings.Contains(errs[0], want) {
			t.Errorf("first ERROR line lacks %q: %s", want, errs[0])
		}
	}
	if strings.Contains(errs[0], "repeats_not_logged") {
		t.Errorf("first ERROR line counts repeats: %s", errs[0])
	}
	// Call 11, ten minutes after the first: calls 2 and 4..10 were not
	// logged. Its error names the user.
	for _, want := range []string{"attempt=11 ", "repeats_not_logged=8 ", "user=alice ", "check the password and roles of this user"} {
		if !strings.Contains(errs[1], want) {
			t.Errorf("second ERROR line lacks %q: %s", want, errs[1])
		}
	}
	if !strings.Contains(warns[0], "flush failed") || !strings.Contains(warns[0], "attempt=3 ") {
		t.Errorf("the network error is not the WARN it was: %s", warns[0])
	}
	if !strings.Contains(infos[0], "MongoDB accepts the credentials again") || !strings.Contains(infos[0], "auth_failures=13") {
		t.Errorf("recovery not logged: %s", infos[0])
	}
}

// Against a real server: FerretDB v1.24.0 as embedded by mongotest runs
// without its "new auth", so any SCRAM login fails in the handshake with
// AuthenticationFailed (code 18), as a wrong password does on MongoDB. Run
// retries it with backoff and logs it at ERROR once per ten minutes of
// (fake) time, never with the password.
func TestAuthFailureAgainstRealServer(t *testing.T) {
	srv := mongotest.Start(t)
	uri := strings.Replace(srv.URI(), "mongodb://", "mongodb://alice:s3cret-pw@", 1)
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(context.Background())
	buf := testenv.OpenBuffer(t, filepath.Join(t.TempDir(), "buffer.db"), buffer.Options{})
	logs := &syncbuf.Buffer{}
	clk := clock.NewFake(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	f, err := New(Config{Buffer: buf, DB: client.Database("logtally"), Clock: clk, Timeout: 10 * time.Second,
		MaxBackoff: time.Minute, User: "alice", Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	// The real error first: it must be one authFailure recognises.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	real := f.maint.expirer.ensure(ctx)
	cancel()
	if !authFailure(real) {
		t.Fatalf("the server's refusal is not recognised: %T %v", real, real)
	}
	t.Logf("the driver's error: %v", real)

	ctx, cancel = context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	// Attempt k of Run's "ensure indexes" comes k-1 minutes in (the
	// backoff is at most MaxBackoff).
	// Two waiters: the index retry's backoff and the flush interval.
	for range 11 {
		clk.BlockUntil(2)
		clk.Advance(time.Minute)
	}
	clk.BlockUntil(2) // attempt 12 failed
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	if strings.Contains(out, "s3cret-pw") {
		t.Errorf("the password is in the log:\n%s", out)
	}
	errs := lines(out, "ERROR")
	if n := len(lines(out, "WARN")); n != 0 || len(errs) != 2 {
		t.Fatalf("%d ERROR and %d WARN lines for 12 attempts over 11 minutes, want 2 ERROR, 0 WARN:\n%s", len(errs), n, out)
	}
	if !strings.Contains(errs[0], "ensure indexes (counts are written meanwhile) failed: MongoDB refused the credentials") ||
		!strings.Contains(errs[0], "check the password and roles of this user") || !strings.Contains(errs[0], "user=alice ") ||
		!strings.Contains(errs[0], "attempt=1 ") {
		t.Errorf("first ERROR line: %s", errs[0])
	}
	if !regexp.MustCompile(`attempt=11 user=alice repeats_not_logged=9 `).MatchString(errs[1]) {
		t.Errorf("second ERROR line, ten minutes later, does not count 9 repeats: %s", errs[1])
	}
	if st := f.Stats(); st.Retries != 12 {
		t.Errorf("Retries = %d, want 12", st.Retries)
	}
}
