package mongotest

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"

	"github.com/FerretDB/FerretDB/ferretdb"
)

// Embedded starts FerretDB in this process with its data in dir (an existing
// directory), listening on 127.0.0.1:0. It returns the server's mongodb://
// URI and a stop func that shuts it down and waits for it. Cancelling ctx
// also shuts it down. A nil logger discards FerretDB's logs.
func Embedded(ctx context.Context, dir string, logger *slog.Logger) (uri string, stop func(), err error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, fmt.Errorf("embedded ferretdb: %w", err)
	}
	sqliteURL := (&url.URL{
		Scheme:   "file",
		Opaque:   filepath.ToSlash(abs) + "/",
		RawQuery: "_pragma=synchronous(OFF)",
	}).String()
	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: "127.0.0.1:0"},
		Logger:    logger,
		Handler:   "sqlite",
		SQLiteURL: sqliteURL,
	})
	if err != nil {
		return "", nil, fmt.Errorf("embedded ferretdb: %w", err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = f.Run(runCtx)
	}()
	stop = func() {
		cancel()
		<-done
	}
	return f.MongoDBURI(), stop, nil
}
