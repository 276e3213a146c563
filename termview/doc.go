// Package termview shows logtally's state to a person at a terminal: a
// replay's progress while it runs (ReplayProgress: a bar on a terminal, a
// plain line every 5 s otherwise) and its summary (ReplaySummary), and
// the state dir's status (State, for `logtally state`; Running, a running
// daemon's /status). IsTerminal and
// ColorTerminal say what the output is. It writes to the writer it is
// given and reads nothing but the clock it is given (and the buffer
// file's size, for State).
//
// Caveats:
//   - ReplayProgress's bar (github.com/schollz/progressbar) times its own
//     elapsed time and ETA with the wall clock; its description and the
//     plain lines use the clock given to NewReplayProgress.
//   - Names shown are file paths from the config and the checkpoints
//     (State) or the replay's arguments (ReplayProgress, ReplaySummary),
//     never anything read from the logs.
//   - query's charts are query's (query.Write, format chart): they are
//     one of its output formats, beside table, csv and json.
package termview
