// Package botclass classifies user agents into bot classes (Class).
//
// Caveat: a client can send any user agent. The classes say what the
// user agent declares, or looks like; a bot that sends a browser's user
// agent is counted as a person.
package botclass
