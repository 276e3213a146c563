package flusher

// How the flusher's writes stand, for a health check: when it last made
// progress and since when its attempts fail.

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"
)

// Progress is how the flusher's writes stand (Flusher.Progress).
type Progress struct {
	// At is when the flusher last made progress: Run began, a round found
	// nothing to write, or MongoDB acknowledged a chunk or a batch. While
	// counts wait and MongoDB acknowledges nothing, it stays put; an idle
	// flusher moves it every Interval.
	At time.Time
	// FailingSince is when the attempts to write began failing: the first
	// failure since the last attempt that succeeded; zero while they
	// succeed.
	FailingSince time.Time
	// Failure says how the last attempt failed, in words that name no
	// host, URI or secret (the log has the error): "MongoDB unreachable",
	// "MongoDB refuses the credentials" or "writes to MongoDB failing".
	// Empty while FailingSince is zero.
	Failure string
}

// progressRecord keeps Progress.
type progressRecord struct {
	mu sync.Mutex
	p  Progress
}

// made records progress at now.
func (pr *progressRecord) made(now time.Time) {
	pr.mu.Lock()
	pr.p.At = now
	pr.mu.Unlock()
}

// attempt records how an attempt to write ended at now: a success clears
// the failure, a failure keeps the time of the first one.
func (pr *progressRecord) attempt(now time.Time, err error) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if err == nil {
		pr.p.FailingSince, pr.p.Failure = time.Time{}, ""
		return
	}
	if pr.p.FailingSince.IsZero() {
		pr.p.FailingSince = now
	}
	pr.p.Failure = failureKind(err)
}

func (pr *progressRecord) get() Progress {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.p
}

// failureKind names how a write failed, without the error's text (which
// may name the server's address).
func failureKind(err error) string {
	var sel topology.ServerSelectionError
	switch {
	case authFailure(err):
		return "MongoDB refuses the credentials"
	case mongo.IsNetworkError(err), mongo.IsTimeout(err), errors.As(err, &sel), errors.Is(err, context.DeadlineExceeded):
		return "MongoDB unreachable"
	}
	return "writes to MongoDB failing"
}

// Progress returns how the flusher's writes stand: when it last made
// progress, and since when and how its attempts fail. A health check
// compares At with the counts pending: a flusher with nothing to write
// makes no progress and is fine.
func (f *Flusher) Progress() Progress { return f.prog.get() }
