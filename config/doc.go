// Package config loads logtally's TOML configuration: defaults first
// (Default), then the file decoded over them (Load), then Validate, which
// names every bad field with its value.
//
// Files: config.go (the types, Default, Load, Parse), source.go (the
// [[source]] tables and Source.Parser), include.go (the included files,
// include = ["sites.d/*.toml"]), validate.go (Validate), lines.go
// (FieldError and finding a key's line), values.go (Duration, Size,
// WriteConcern), geo.go (the [geo] table), components.go (the settings of
// the components the commands and the daemon build from a config, each
// mapping written once: Mongo.Connect, Config.Pipeline, Reader,
// DashboardConfig, ControlSocket, Source).
//
// Each default is defined once, beside the package that takes the value
// and applies it to a zero value (pipeline.DefaultCommitInterval,
// flusher.DefaultInterval, bucket.DefaultMinuteCollection, buffer.DefaultMaxSize, ...): config uses those
// constants by name, so importing config imports those packages. Only the
// keys whose values go to cmd/logtally and package daemon alone (state_dir, mongo.uri,
// mongo.database, http.listen, log.*, ...) have their defaults here
// (DefaultStateDir, DefaultMongoURI, ...). The MongoDB URI is shown
// through package redact (Mongo.Redacted).
//
// Caveats:
//   - Durations are strings with a unit ("10s"); a bare number is an error,
//     never nanoseconds. Sizes are strings like "512MiB" or "1.5GiB", or a
//     plain number of bytes; they are computed exactly (a fraction of a
//     byte is dropped), and negative sizes or sizes over 8 EiB are errors.
//   - Unknown keys are errors. The TOML decoder gives line numbers for
//     syntax and type errors; for unknown keys and bad values the line is
//     found by looking for the key under its table header, so it is
//     reported only where it can be found. Problems found after decoding
//     (unknown keys, Validate's, mongo.uri_file) wrap a *FieldError;
//     decoding errors (syntax, types, bad durations and sizes) do not.
//   - A source's checkpoints are filed under its name (default: its site).
//     Renaming a source makes logtally read its files again from the start.
//   - A source's parser settings (format, log_format, regex, time_layout,
//     bots, client, [source.json], [source.page], [source.filter]) are checked by
//     building its parser.Parser; each problem names its key, e.g.
//     source[1].page.rewrite[0].match. Keys inside inline tables are
//     reported at the line of the array that holds them.
//   - Load reads the main file, then the files its include globs match
//     (relative to its directory; default sites.d/*.toml, none matching
//     is fine), each glob's in sorted order, and appends their sources;
//     Parse reads one file only. An included file holds [[source]] tables
//     and nothing else. A problem of an included source names that file,
//     its line and the source's index in that file (source[0].format);
//     a source name, or a site other than "{host}", defined in two files
//     names both. Config.Files lists the files read, the main one first.
//   - [geo] country_db and asn_db are checked to name existing regular
//     files (not in a file without [[source]], a dashboard host's); what
//     they hold is judged by geo.Open when the daemon opens them.
//   - [dimensions] enabled turns on the counts by where traffic comes
//     from (Pipeline sets parser.DimsConfig; the daemon gives it the [geo]
//     databases).
//   - [site_aliases] applies to every source whose site is "{host}".
//     Source.Parser carries the aliases only for sources of a Config
//     that went through Parse or Validate.
package config
