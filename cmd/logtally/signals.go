package main

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// stopSignal is the cause of a context a signal cancelled (onStopSignals).
type stopSignal struct{ sig os.Signal }

func (s stopSignal) Error() string { return "stopped by " + s.sig.String() }

// onStopSignals returns a context the first SIGINT or SIGTERM cancels,
// after calling stopping, with a stopSignal naming it as the cause. A
// second one calls exiting and exits the process at once with code: the
// buffer keeps what is committed, and what is not was never counted.
// release stops listening, cancels ctx and waits for the goroutine that
// listened; call it once, when the command is done.
func onStopSignals(stopping, exiting func(os.Signal), code int) (ctx context.Context, release func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	var listening sync.WaitGroup
	listening.Go(func() {
		var sig os.Signal
		select {
		case sig = <-sigs:
		case <-done:
			return
		}
		stopping(sig)
		cancel(stopSignal{sig})
		select {
		case sig = <-sigs:
		case <-done:
			return
		}
		exiting(sig)
		os.Exit(code)
	})
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		listening.Wait()
		cancel(nil)
	}
}
