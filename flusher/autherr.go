package flusher

import (
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"regexp"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/auth"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"
)

// authLogEvery is how often a repeated authentication failure is logged
// again; the repeats in between are counted.
const authLogEvery = 10 * time.Minute

// authCodes are the server error codes of an authentication or
// authorization failure.
var authCodes = [...]int{
	11,  // UserNotFound
	13,  // Unauthorized: the user lacks a role for the command
	18,  // AuthenticationFailed: unknown user, wrong password or mechanism
	334, // MechanismUnavailable
}

// atlasAuthMessages are the messages of Atlas proxy errors (code 8000,
// AtlasError) that are authentication or authorization failures; other
// AtlasErrors (a quota, say) are not.
var atlasAuthMessages = [...]string{"bad auth", "not allowed to do action", "Authentication failed"}

// authFailure reports whether err is MongoDB refusing the credentials:
// an authentication failure in the connection handshake or an
// authorization failure of a command. Retrying it does not help until
// the credentials (or the user's roles) are fixed.
//
// With mongo-driver v2 a failed handshake surfaces as a
// topology.ConnectionError wrapping an *auth.Error, which wraps the
// server's reply (a driver.Error with code 18); the mongo package turns
// that into a mongo.CommandError with the same code. A command the user
// may not run is a server error with code 13 (in a write exception too).
// While a handshake keeps failing, server selection may time out instead,
// with the auth failure as the server's last error in the topology.
func authFailure(err error) bool {
	if err == nil {
		return false
	}
	if poolClearedByAuth(err) {
		return true
	}
	// A server reply decides by its code. A network failure (also one
	// during the SASL conversation) is a driver.Error without a code.
	if se := mongo.ServerError(nil); errors.As(err, &se) {
		for _, c := range authCodes {
			if se.HasErrorCode(c) {
				return true
			}
		}
		for _, m := range atlasAuthMessages {
			if se.HasErrorCodeWithMessage(8000, m) {
				return true
			}
		}
		return false
	}
	var de driver.Error
	if errors.As(err, &de) {
		for _, c := range authCodes {
			if int(de.Code) == c {
				return true
			}
		}
		if de.Code == 8000 {
			for _, m := range atlasAuthMessages {
				if strings.Contains(de.Message, m) {
					return true
				}
			}
		}
		return false
	}
	var sse topology.ServerSelectionError
	if errors.As(err, &sse) {
		for _, s := range sse.Desc.Servers {
			if authFailure(s.LastError) {
				return true
			}
		}
		return false
	}
	// No server reply: the client side of the mechanism failed (a server
	// signature that does not match the password, an unknown mechanism),
	// unless the connection did.
	var ae *auth.Error
	if errors.As(err, &ae) {
		return !networkFailure(err) && ae.Message() != "handshake failure"
	}
	return false
}

// poolClearedByAuth reports whether err is an operation refused because
// the connection pool was cleared after a failed handshake: the driver's
// poolClearedError does not unwrap to its cause but quotes it, and the
// mongo package may wrap it in a CommandError without a code, so only its
// text tells.
func poolClearedByAuth(err error) bool {
	_, cause, ok := strings.Cut(err.Error(), poolCleared)
	if !ok {
		return false
	}
	for _, m := range authMarks {
		if strings.Contains(cause, m) {
			return true
		}
	}
	return false
}

// poolCleared is the driver's text of an operation refused because the
// connection pool was cleared; the error it quotes follows.
const poolCleared = "was cleared because another operation failed with: "

// authMarks are how driver.Error.Error() names the auth failure codes
// (and Atlas's message), for errors only known by their text.
var authMarks = [...]string{"(UserNotFound)", "(Unauthorized)", "(AuthenticationFailed)", "(MechanismUnavailable)", "bad auth"}

// networkFailure reports whether err is a connection's failure or a
// timeout rather than an answer.
func networkFailure(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// userPatterns find the user name in a server's authentication error, for
// the servers that include it: `Could not find user "alice" for db
// "admin"` (UserNotFound), `Could not find user alice@admin` (older
// servers).
var userPatterns = [...]*regexp.Regexp{
	regexp.MustCompile(`(?i)\buser:?\s+"([^"]+)"`),
	regexp.MustCompile(`(?i)could not find user:?\s+([^"@\s]+)@`),
}

// authUser returns the user an authentication error names, or "" when the
// driver's error does not say (MongoDB's usual "Authentication failed."
// does not). The driver never puts the password in an error.
func authUser(err error) string {
	if err == nil {
		return ""
	}
	text := err.Error()
	for _, re := range userPatterns {
		if m := re.FindStringSubmatch(text); m != nil {
			return m[1]
		}
	}
	return ""
}

// authReport rate-limits the log of one retry loop's authentication
// failures: the first is logged at ERROR, then one every authLogEvery
// with the number of repeats not logged.
type authReport struct {
	failures   int // in this retry loop
	notLogged  int // since the last line
	lastLogged time.Time
}

// failed records an authentication failure of what's attempt at now and
// logs it unless one was logged less than authLogEvery ago.
// user is the connection string's user, named when the server's error
// does not name one.
func (r *authReport) failed(log *slog.Logger, now time.Time, what string, attempt int, err error, user string) {
	r.failures++
	if r.failures > 1 && now.Sub(r.lastLogged) < authLogEvery {
		r.notLogged++
		return
	}
	msg := what + " failed: MongoDB refused the credentials (authentication or authorization failure)"
	attrs := []any{"attempt", attempt}
	if u := cmp.Or(authUser(err), user); u != "" {
		msg += ": check the password and roles of this user in mongo.uri / mongo.uri_file"
		attrs = append(attrs, "user", u)
	} else {
		msg += ": check the credentials of mongo.uri / mongo.uri_file"
	}
	msg += "; retrying, this error is logged once every " + authLogEvery.String()
	if r.failures > 1 {
		attrs = append(attrs, "repeats_not_logged", r.notLogged)
	}
	log.Error(msg, append(attrs, "err", err)...)
	r.lastLogged, r.notLogged = now, 0
}

// succeeded logs that the credentials work again, if they had failed.
func (r *authReport) succeeded(log *slog.Logger, what string) {
	if r.failures > 0 {
		log.Info(what+" succeeded: MongoDB accepts the credentials again", "auth_failures", r.failures)
	}
}

// AuthFailure reports whether err is MongoDB refusing the credentials (an
// authentication or authorization failure), which retrying does not cure.
// Other packages' retry loops (the progress record's lease) use it with
// AuthReport, so that every loop logs such failures by one rule.
func AuthFailure(err error) bool { return authFailure(err) }

// AuthReport rate-limits one retry loop's log of authentication failures
// as the flusher's own loops do: the first at ERROR, then one every
// authLogEvery with the repeats not logged. The zero value is ready.
type AuthReport struct{ r authReport }

// Failed records an authentication failure of what's attempt at now and
// logs it unless one was logged less than authLogEvery ago. user is the
// connection string's user, named when the server's error names none.
func (r *AuthReport) Failed(log *slog.Logger, now time.Time, what string, attempt int, err error, user string) {
	r.r.failed(log, now, what, attempt, err, user)
}

// Succeeded logs that the credentials work again, if they had failed, and
// starts a new loop.
func (r *AuthReport) Succeeded(log *slog.Logger, what string) {
	r.r.succeeded(log, what)
	r.r = authReport{}
}
