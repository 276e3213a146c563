package recovery

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/internal/mongotest"
	"github.com/logtally/logtally/internal/syncbuf"
	"github.com/logtally/logtally/internal/testenv"
	"github.com/logtally/logtally/record"
)

// Credentials MongoDB refuses make the lease's retry log one ERROR naming
// the user, then nothing more within the rate limit: not a WARN per
// attempt.
func TestLeaseRefusedCredentialsLoggedOnce(t *testing.T) {
	srv := mongotest.Start(t)
	uri := strings.Replace(srv.URI(), "mongodb://", "mongodb://alice:s3cret-pw@", 1)
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(context.Background())
	buf := testenv.OpenBuffer(t, filepath.Join(t.TempDir(), "buffer.db"), buffer.Options{})
	logs := &syncbuf.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	clk := clock.NewFake(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	store, err := record.NewStore(record.Config{
		DB: client.Database("logtally"), Instance: "web-1", Holder: record.NewHolder(),
		Timeout: 10 * time.Second, LeaseTTL: 30 * time.Second, Clock: clk, Logger: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := NewRecorder(store, buf, clk, log, "alice")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rec.Keep(ctx) }()
	for range 12 { // twelve failed attempts, a minute of backoffs at most
		clk.BlockUntil(1)
		clk.Advance(10 * time.Second)
	}
	clk.BlockUntil(1)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	text := logs.String()
	if n := strings.Count(text, "level=ERROR"); n != 1 || !strings.Contains(text, "take the instance's lease failed: MongoDB refused the credentials") ||
		!strings.Contains(text, "user=alice") {
		t.Errorf("%d ERROR lines, want one naming the refused credentials and the user:\n%s", n, text)
	}
	if strings.Contains(text, "level=WARN") {
		t.Errorf("WARN lines for refused credentials:\n%s", text)
	}
	if strings.Contains(text, "s3cret") {
		t.Errorf("the password is logged:\n%s", text)
	}
}
