package flusher

import "github.com/logtally/logtally/buffer"

// hooks are the test seams of the flusher, its expirer and its
// preallocator: one pointer each, nil in production. An error a hook
// returns stands for the server's (or the network's).
type hooks struct {
	afterChunk   func(p pass, chunk int) error     // after a chunk's progress is saved
	afterUpdate  func(p pass, ids []string)        // after step 1, when some bucket did not match
	beforeInsert func(p pass, ids []string)        // between steps 1 and 2
	exists       func(p pass, id string) bool      // replaces the known set: true sends the bucket to the update first
	beforeWhole  func(p pass, ids []string)        // before the insert of whole buckets
	afterWhole   func(p pass) error                // after that insert succeeded; stands for a reply lost
	beforeBulk   func(updates int) error           // before each bulk write
	index        func() error                      // at the start of ensuring the indexes
	expiry       func(p pass) error                // at the start of ensureExpiry; stands for a network failure
	prealloc     func(p pass, n int) error         // before a preallocation insertMany
	layout       func(buffer.Layout) buffer.Layout // replaces the layout a batch is written in
	tailBounds   *tailBounds                       // replaces defaultTailBounds
	beforeSpill  func(p pass, ids []string)        // before an insert of spill documents
	sourcesLimit int64                             // replaces bucket.SiteSourcesLimit when not 0
}
