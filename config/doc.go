// Package config loads logtally's TOML configuration: defaults first
// (Default), then the file decoded over them (Load), then Validate, which
// names every bad field with its value.
//
// Caveats:
//   - Durations are strings with a unit ("10s"); a bare number is an error,
//     never nanoseconds. Sizes are strings like "512MiB" or a plain number
//     of bytes.
//   - Unknown keys are errors. The TOML decoder gives line numbers for
//     syntax and type errors; for unknown keys and bad values the line is
//     found by looking for the key under its table header, so it is
//     reported only where it can be found.
//   - A source's checkpoints are filed under its name (default: its site).
//     Renaming a source makes logtally read its files again from the start.
package config
