// Package daemon is `logtally run`: the pipeline of a config, its HTTP
// endpoints (package observe, and the dashboard with [dashboard] daemon),
// the control socket `logtally replay` hands files to, systemd's
// notifications and watchdog (package notify), and reloads.
//
// A Daemon has litestream's lifecycle, as a pipeline.Pipeline does. New
// keeps the config and does no I/O. Open opens the first turn: it applies
// max_procs, warns when max_open_files leaves too little room under the
// limit on descriptors, checks the state dir, connects to MongoDB (the
// client does not wait for the server), serves the endpoints (which
// answer "starting" until the pipeline is open) and opens the pipeline,
// which may wait for MongoDB. Run runs the turn: control socket, READY=1,
// the watchdog, pipeline.Run; each Reload ends the turn (reading stops,
// the last counts are committed, nothing is drained: pipeline.ErrReload),
// closes it and opens the next one with the new config on the same
// buffer, whose tailers resume from the committed checkpoints. Run
// returns when its ctx ends or Close is called (the pipeline drains
// within shutdown_timeout: the staged stop of pipeline.Run) or a
// component fails. Close(ctx) stops a Run under way and waits for it. A
// turn closes in this order: the endpoints (they answer through the
// drain), the pipeline, MongoDB's client.
//
// Everything the daemon starts it waits for: Run returns only once the
// control socket's service, the watchdog, the HTTP server and the
// pipeline of its last turn have returned. Signals are cmd/logtally's: it
// cancels the context given to Open and Run at the first SIGTERM or
// SIGINT, loads the config at SIGHUP and calls Reload with a valid one.
// The clock is the one given in Options, handed to every component.
//
// Replay is `logtally replay` with a config: it hands the files to the
// daemon running on the state dir (its control socket, answered by
// replay.Service in the daemon's pipeline), or, when none runs there,
// counts them in a pipeline of its own, the daemon's without tailers,
// its buffer bounded to 32 MiB, drained at the end.
//
// Caveats:
//   - Reload takes a config the caller loaded and validated; the logger
//     ([log]) is the one given to New and is kept across reloads. A
//     Reload while a turn opens (its pipeline waiting for MongoDB) is
//     taken once that turn runs, and a later Reload before then replaces
//     it: several SIGHUPs in a row make one reload, to the last config.
//   - A ctx that ends while a turn's pipeline waits for MongoDB ends the
//     wait: the turn is closed, "stopped before starting" is logged, and
//     Open (first turn) or Run (a reloaded one) returns nil.
//   - STOPPING=1 is sent once, when the ctx given to Open or Run ends or
//     Close is called, not on a reload (RELOADING=1, then READY=1 once the
//     next turn runs) nor when a component fails.
//   - A state_dir the daemon cannot hold its buffer in is a *ConfigError
//     (a bad config: cmd/logtally exits 2), at Open or at a reload; a
//     failed reload ends Run with its error, as a component's does.
//   - max_procs (runtime.GOMAXPROCS) is process-wide: each turn applies
//     its config's, unless the GOMAXPROCS environment variable is set.
//   - A control socket that cannot be made, or an HTTP listen address in
//     use, is logged and the daemon counts on without it.
package daemon
