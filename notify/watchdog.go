package notify

import (
	"context"
	"log/slog"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"

	"github.com/logtally/logtally/clock"
)

// DefaultStatusInterval is how often the Watchdog sends a status line.
const DefaultStatusInterval = 30 * time.Second

// warnEvery bounds the WARN about withheld pings to one per minute while
// they stay withheld.
const warnEvery = time.Minute

// Config configures a Watchdog.
type Config struct {
	// Alive reports whether the daemon makes progress (nil) or why not. It
	// is called at every ping time; a ping is sent only when it returns
	// nil. Required.
	Alive func(now time.Time) error
	// Status returns the current status line, sent at start and every
	// StatusInterval. Optional.
	Status func() string
	// StatusInterval defaults to DefaultStatusInterval.
	StatusInterval time.Duration
	// Clock defaults to clock.Real.
	Clock clock.Clock
	// Logger defaults to discarding.
	Logger *slog.Logger
}

// Watchdog sends WATCHDOG=1 every half watchdog interval while Alive
// reports progress, and a STATUS= line every StatusInterval.
type Watchdog struct {
	cfg Config
	log *slog.Logger

	// withheld counts the pings not sent since the last one that was;
	// warned is when that was last logged.
	withheld int
	warned   time.Time
	// sendFailed is set after a failed send was logged, until one succeeds.
	sendFailed bool
}

// New returns a Watchdog. It panics if cfg.Alive is nil: a watchdog that
// pings without asking would only prove that a timer fires.
func New(cfg Config) *Watchdog {
	if cfg.Alive == nil {
		panic("notify.New: Config.Alive is nil")
	}
	if cfg.StatusInterval <= 0 {
		cfg.StatusInterval = DefaultStatusInterval
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Watchdog{cfg: cfg, log: log}
}

// Run sends status lines, and pings when systemd asked for them
// (WATCHDOG_USEC, for this process if WATCHDOG_PID is set), until ctx is
// done. The first ping is due half an interval after Run starts, so that
// the daemon's components have turned at least once. Without NOTIFY_SOCKET
// Run returns at once.
func (w *Watchdog) Run(ctx context.Context) {
	if !Enabled() {
		return
	}
	interval, err := daemon.SdWatchdogEnabled(false)
	if err != nil {
		w.log.Error("watchdog: WATCHDOG_USEC unusable, no pings: systemd will stop logtally after WatchdogSec", "err", err)
		interval = 0
	}
	half := interval / 2
	now := w.cfg.Clock.Now()
	w.status()
	nextStatus := now.Add(w.cfg.StatusInterval)
	var nextPing time.Time
	if half > 0 {
		nextPing = now.Add(half)
		w.log.Debug("watchdog: pinging while the pipeline makes progress", "every", half, "watchdog", interval)
	}
	for {
		next := nextStatus
		if half > 0 && nextPing.Before(next) {
			next = nextPing
		}
		select {
		case <-ctx.Done():
			return
		case <-w.cfg.Clock.After(next.Sub(now)):
		}
		now = w.cfg.Clock.Now()
		if half > 0 && !now.Before(nextPing) {
			w.ping(now)
			nextPing = now.Add(half)
		}
		if !now.Before(nextStatus) {
			w.status()
			nextStatus = now.Add(w.cfg.StatusInterval)
		}
	}
}

// ping sends WATCHDOG=1 if Alive reports progress.
func (w *Watchdog) ping(now time.Time) {
	if err := w.cfg.Alive(now); err != nil {
		w.withheld++
		if w.withheld == 1 || now.Sub(w.warned) >= warnEvery {
			w.log.Warn("watchdog: no progress, ping withheld; systemd restarts logtally if this lasts WatchdogSec",
				"err", err, "withheld", w.withheld)
			w.warned = now
		}
		return
	}
	if w.withheld > 0 {
		w.log.Info("watchdog: progress again, pings resumed", "withheld", w.withheld)
		w.withheld = 0
	}
	w.send(daemon.SdNotifyWatchdog)
}

func (w *Watchdog) status() {
	if w.cfg.Status != nil {
		w.send(statusMessage(w.cfg.Status()))
	}
}

// send sends one message, logging the first of a run of failures.
func (w *Watchdog) send(state string) {
	if err := send(state); err != nil {
		if !w.sendFailed {
			w.log.Warn("sd_notify failed", "err", err)
			w.sendFailed = true
		}
		return
	}
	w.sendFailed = false
}
