package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/internal/httpserve"
	"github.com/logtally/logtally/observe"
	"github.com/logtally/logtally/pipeline"
	"github.com/logtally/logtally/termview"
)

// stateLockTimeout is how long `logtally state` waits for the buffer's
// lock before it takes the buffer for a running daemon's.
const stateLockTimeout = 300 * time.Millisecond

// stateHTTPTimeout bounds the request to a running daemon's /status.
const stateHTTPTimeout = 5 * time.Second

// cmdState prints what the state dir holds: from the buffer file while
// logtally is stopped, else from the running daemon's /status.
func cmdState(args []string, stdout, stderr io.Writer) error {
	fs, path := parseFlags("state", stderr)
	if err := requireConfig(fs, args, path); err != nil {
		return err
	}
	cfg, err := config.Load(*path)
	if err != nil {
		return usageError{err}
	}
	bufPath := cfg.BufferPath()
	if _, err := os.Stat(bufPath); errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(stdout, "no buffer file at %s: logtally has not run with this state_dir, or the state dir was lost "+
			"(the next start rebuilds it from instance %q's progress record in MongoDB)\n", bufPath, cfg.Instance)
		return nil
	} else if err != nil {
		return err
	}
	// Opening takes a shared lock on the file: a running daemon holds
	// it exclusively. Nothing is written: a read-only state dir will do.
	buf, err := buffer.OpenReadOnly(bufPath, buffer.Options{LockTimeout: stateLockTimeout})
	if errors.Is(err, buffer.ErrLocked) {
		return stateFromDaemon(cfg, stdout)
	}
	if err != nil {
		return err
	}
	st, err := pipeline.ReadStatus(buf)
	if cerr := buf.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	st.Instance = cfg.Instance
	fmt.Fprintf(stdout, "logtally is not running: state read from %s\n", bufPath)
	fmt.Fprintf(stdout, "mongo        %s, database %q\n", cfg.Mongo.Redacted(), cfg.Mongo.Database)
	termview.State(stdout, st, sourceNames(cfg), processClock.Now())
	return nil
}

// stateFromDaemon prints the running daemon's /status.
func stateFromDaemon(cfg config.Config, stdout io.Writer) error {
	if cfg.HTTP.Listen == "" {
		return fmt.Errorf("logtally is running (it holds %s) and [http] listen is empty, so its state cannot be read "+
			"while it runs: set [http] listen (default %q) and restart it, or stop it and run logtally state again",
			cfg.BufferPath(), config.DefaultHTTPListen)
	}
	url := "http://" + httpserve.DialAddr(cfg.HTTP.Listen) + "/status"
	ctx, cancel := context.WithTimeout(context.Background(), stateHTTPTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("logtally is running (it holds %s), and its status cannot be read: %w", cfg.BufferPath(), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("read %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("logtally is running (it holds %s), and GET %s answered %s: %s", cfg.BufferPath(), url, resp.Status, body)
	}
	var rep observe.StatusReport
	if err := json.Unmarshal(body, &rep); err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	termview.Running(stdout, rep, url, cfg.Mongo.Database, sourceNames(cfg))
	return nil
}

// sourceNames are the names of cfg's sources.
func sourceNames(cfg config.Config) []string {
	var names []string
	for _, s := range cfg.Sources {
		names = append(names, s.Name)
	}
	return names
}
