// Package notify speaks systemd's sd_notify protocol for the daemon: Ready,
// Stopping and Status send READY=1, STOPPING=1 and STATUS= lines, and a
// Watchdog sends WATCHDOG=1 pings and periodic status lines while the
// daemon runs.
//
// The pings prove progress, not that a goroutine still wakes up: the
// Watchdog asks its Alive function at every ping time (half the interval
// systemd passes in WATCHDOG_USEC) and pings only when it returns nil. A
// stuck pipeline therefore stops the pings and systemd kills and restarts
// the service WatchdogSec after the last one (systemd/logtally.service).
//
// Everything is a no-op outside systemd (NOTIFY_SOCKET unset). Sending uses
// github.com/coreos/go-systemd/v22/daemon, which dials the socket for every
// message; a failed send is returned (helpers) or logged (Watchdog), never
// fatal: systemd's own timeouts handle a daemon that cannot notify.
package notify
