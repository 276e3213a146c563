package recovery

import (
	"github.com/logtally/logtally/aggregate"
	"github.com/logtally/logtally/buffer"
	"github.com/logtally/logtally/clock"
	"github.com/logtally/logtally/parser"
	"github.com/logtally/logtally/tailer"
)

// Config configures Rebuild.
type Config struct {
	// BufferPath is the buffer file to make.
	BufferPath string
	// Buffer holds the buffer's options; its Logger and InstanceID are
	// set by Rebuild.
	Buffer buffer.Options
	// Sources are the configured sources: where their files are found
	// again and how their lines are parsed.
	Sources []Source
	// Visitors, when not nil, makes the re-read lines add their visitors
	// too (the salts from MongoDB: salts.Lookup), put in the rebuilt
	// buffer for the flusher to send.
	Visitors *aggregate.Visitors
	// Dims, when not nil, is the parser.Config.Dims of an archive's
	// replay source (its recorded settings omit the geo databases).
	Dims *parser.DimsConfig
	// Clock is required.
	Clock clock.Clock
}

// Source is what a rebuild needs of one configured source.
type Source struct {
	// Name is the source's name (stream.Checkpoint.Source).
	Name string
	// Files are its globs, rotated globs and symlink rule.
	Files tailer.SourceFiles
	// Parser parses its lines.
	Parser parser.Config
	// MaxLineBytes is its tailer's longest line; 0 is
	// tailer.DefaultMaxLineBytes.
	MaxLineBytes int
}
