package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/observe"
	"github.com/logtally/logtally/pipeline"
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
	printState(stdout, st, &cfg, processClock.Now())
	return nil
}

// stateFromDaemon prints the running daemon's /status.
func stateFromDaemon(cfg config.Config, stdout io.Writer) error {
	if cfg.HTTP.Listen == "" {
		return fmt.Errorf("logtally is running (it holds %s) and [http] listen is empty, so its state cannot be read "+
			"while it runs: set [http] listen (default %q) and restart it, or stop it and run logtally state again",
			cfg.BufferPath(), config.DefaultHTTPListen)
	}
	url := "http://" + dialAddr(cfg.HTTP.Listen) + "/status"
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
	fmt.Fprintf(stdout, "logtally %s is running: state read from %s at %s\n", rep.Version, url, rep.Time.Format(time.RFC3339))
	fmt.Fprintf(stdout, "health       %s\n", rep.Health)
	fmt.Fprintf(stdout, "mongo        %s, database %q\n", rep.Mongo, cfg.Mongo.Database)
	printState(stdout, rep.Status, &cfg, rep.Time)
	if len(rep.Problems) > 0 {
		fmt.Fprintln(stdout, "recent problems (last per component):")
		for _, p := range rep.Problems {
			fmt.Fprintf(stdout, "  %s %-5s %s: %s", p.Time.Format(time.RFC3339), p.Level, p.Component, p.Message)
			for _, k := range slices.Sorted(maps.Keys(p.Attrs)) {
				fmt.Fprintf(stdout, " %s=%q", k, p.Attrs[k])
			}
			fmt.Fprintln(stdout)
		}
	}
	return nil
}

// dialAddr turns a listen address into one to connect to: an empty or
// unspecified host is this host.
func dialAddr(listen string) string {
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

// printState prints st; sources in the config without a checkpoint are
// listed, those in the buffer but not in the config are marked.
func printState(w io.Writer, st pipeline.Status, cfg *config.Config, now time.Time) {
	at := func(t time.Time) string {
		if t.IsZero() {
			return "never"
		}
		return fmt.Sprintf("%s (%s ago)", t.UTC().Format(time.RFC3339), now.Sub(t).Round(time.Second))
	}
	fmt.Fprintf(w, "instance     %s\n", st.Instance)
	fmt.Fprintf(w, "buffer id    %s\n", st.BufferID)
	if st.Writer != 0 {
		fmt.Fprintf(w, "writer       %d (applied.%d in the buckets)\n", st.Writer, st.Writer)
	} else {
		fmt.Fprintf(w, "writer       not numbered yet (claimed before the first batch)\n")
	}
	if fi, err := os.Stat(st.BufferPath); err == nil {
		fmt.Fprintf(w, "buffer       %s, file size %d bytes\n", st.BufferPath, fi.Size())
	} else {
		fmt.Fprintf(w, "buffer       %s\n", st.BufferPath)
	}
	fmt.Fprintf(w, "last commit  %s\n", at(st.LastCommit))
	fmt.Fprintf(w, "pending      %d keys, %d hits not yet acknowledged by MongoDB (the batch in flight included)\n", st.PendingKeys, st.PendingHits)
	if st.CoarseHits > 0 {
		fmt.Fprintf(w, "coarse       %d hits in the minute buckets, waiting for the next full batch to reach the daily and monthly ones\n", st.CoarseHits)
	}
	if b := st.InFlight; b != nil {
		fmt.Fprintf(w, "in flight    batch %s: %d keys, %d hits, sealed %s, resume: %s\n", b.ID, b.Keys, b.Hits, at(b.SealedAt), b.Resume)
	} else {
		fmt.Fprintf(w, "in flight    none\n")
	}
	if a := st.LastAcked; a != nil {
		fmt.Fprintf(w, "last acked   batch %s, sealed %s\n", a.ID, at(a.SealedAt))
	} else {
		fmt.Fprintf(w, "last acked   none\n")
	}
	configured := map[string]bool{}
	for _, s := range cfg.Sources {
		configured[s.Name] = true
	}
	sources := slices.Clone(st.Sources)
	for _, s := range cfg.Sources {
		if !slices.ContainsFunc(sources, func(ss pipeline.SourceStatus) bool { return ss.Name == s.Name }) {
			sources = append(sources, pipeline.SourceStatus{Name: s.Name})
		}
	}
	for _, s := range sources {
		note := ""
		if !configured[s.Name] {
			note = " (not in the config: its checkpoints are kept, and resume if it is added back)"
		}
		fmt.Fprintf(w, "source %q: lag %d bytes%s\n", s.Name, s.LagBytes, note)
		if len(s.Files) == 0 {
			fmt.Fprintf(w, "  no checkpoint yet\n")
			continue
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, f := range s.Files {
			size := fmt.Sprintf("size %d\tlag %d", f.Size, f.Lag)
			if f.Size < 0 {
				size = "not found\t(deleted, or rotated away out of reach)"
			}
			var flags []string
			if !f.Checkpoint {
				flags = append(flags, "no checkpoint yet")
			}
			if f.Followed {
				flags = append(flags, "followed")
			}
			extra := ""
			if len(flags) > 0 {
				extra = fmt.Sprintf("\t(%s)", strings.Join(flags, ", "))
			}
			fmt.Fprintf(tw, "  %s\tdev:ino %s\toffset %d\t%s%s\n", f.Path, f.File, f.Offset, size, extra)
		}
		tw.Flush()
	}
}
