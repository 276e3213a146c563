package notify

import (
	"os"
	"strings"

	"github.com/coreos/go-systemd/v22/daemon"
)

// Ready tells systemd that the daemon has started (READY=1).
func Ready() error { return send(daemon.SdNotifyReady) }

// Reloading tells systemd that the daemon is reloading its configuration
// (RELOADING=1); Ready ends the reload.
func Reloading() error { return send(daemon.SdNotifyReloading) }

// Stopping tells systemd that the daemon is shutting down (STOPPING=1).
// systemd stops watching for pings once it has it.
func Stopping() error { return send(daemon.SdNotifyStopping) }

// Status sets the status line `systemctl status` shows (STATUS=s).
// Newlines, which would end the assignment, become spaces.
func Status(s string) error { return send(statusMessage(s)) }

func statusMessage(s string) string {
	return "STATUS=" + strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}

// Enabled reports whether NOTIFY_SOCKET is set, that is whether the
// daemon runs under a service manager that listens.
func Enabled() bool { return os.Getenv("NOTIFY_SOCKET") != "" }

// send sends one message; nil without NOTIFY_SOCKET.
func send(state string) error {
	_, err := daemon.SdNotify(false, state)
	return err
}
