// Package redact hides what must not be shown as it is. URI returns a
// MongoDB URI with its password and credential-bearing options replaced,
// and the secrets it hid, so that a caller showing other text (an error
// from the driver) can cut them out too. (A name read from the logs is
// shown through query.Shown.) It imports nothing of logtally's, so that
// config (the start log line, check, state) and observe (/status) share
// it without observe importing config.
package redact

import (
	"net/url"
	"slices"
	"strings"
)

// redactedValue replaces a secret in a shown URI.
const redactedValue = "xxxxx"

// secretOption reports whether a MongoDB URI option (its name, any case)
// may carry a credential: its value is never shown. That is every option
// whose name contains "pass" (password, tlsCertificateKeyFilePassword,
// sslClientCertificateKeyPassword, sslPEMKeyPassword, proxyPassword),
// "secret", "token", "key" (tlsCertificateKeyFile, a path: hidden too,
// harmlessly) or "credential", and authMechanismProperties, which holds
// AWS_SESSION_TOKEN and the like.
func secretOption(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"pass", "secret", "token", "key", "credential", "authmechanismproperties"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// URI returns uri with its user-info password and the values of its
// credential-bearing options (see secretOption) replaced by "xxxxx", and
// the secrets it hid, as written and percent-decoded, each value of
// authMechanismProperties also on its own: what a caller that shows
// other text (an error from the driver) must also cut out. Everything that
// shows the MongoDB URI (the start log line, `check`, `state`, /status)
// shows it through here.
func URI(uri string) (redacted string, secrets []string) {
	add := func(s string) {
		p, err := url.PathUnescape(s)
		if err != nil {
			p = s
		}
		for _, f := range []string{s, p, unescape(s)} {
			if f != "" && !slices.Contains(secrets, f) {
				secrets = append(secrets, f)
			}
		}
	}
	rest := uri
	var b strings.Builder
	// User info: between "://" and the last '@' before the query, or the
	// last '@' at all when none is before the first '?' (an unescaped '?'
	// in the password): hiding too much is fine, too little is not.
	if scheme := strings.Index(rest, "://"); scheme >= 0 {
		q := strings.IndexByte(rest, '?')
		if q < 0 {
			q = len(rest)
		}
		at := strings.LastIndexByte(rest[:q], '@')
		if at < scheme {
			at = strings.LastIndexByte(rest, '@')
		}
		if at > scheme {
			userinfo := rest[scheme+3 : at]
			if colon := strings.IndexByte(userinfo, ':'); colon >= 0 {
				add(userinfo[colon+1:])
				b.WriteString(rest[:scheme+3] + userinfo[:colon] + ":" + redactedValue)
				rest = rest[at:]
			}
		}
	}
	q := strings.IndexByte(rest, '?')
	if q < 0 {
		b.WriteString(rest)
		return b.String(), secrets
	}
	b.WriteString(rest[:q+1])
	query := rest[q+1:]
	for len(query) > 0 {
		part := query
		sep := ""
		if j := strings.IndexAny(query, "&;"); j >= 0 {
			part, sep, query = query[:j], query[j:j+1], query[j+1:]
		} else {
			query = ""
		}
		name, value, ok := strings.Cut(part, "=")
		if ok && value != "" && secretOption(unescape(name)) {
			add(value)
			if strings.EqualFold(unescape(name), "authMechanismProperties") {
				for _, prop := range strings.Split(unescape(value), ",") {
					if _, v, ok := strings.Cut(prop, ":"); ok {
						add(v)
					}
				}
			}
			value = redactedValue
		}
		b.WriteString(name)
		if ok {
			b.WriteString("=" + value)
		}
		b.WriteString(sep)
	}
	return b.String(), secrets
}

func unescape(s string) string {
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s
}
