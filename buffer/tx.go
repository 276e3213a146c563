package buffer

import bolt "go.etcd.io/bbolt"

// ReadTx is a read transaction of the buffer (Buffer.View): what is read
// through one ReadTx is one consistent state of the file, whatever
// commits, seals and acknowledgements run meanwhile. Its readers are
// in the files of what they read: checkpoints and the last commit
// (commit.go), the batch in flight and its counts (batch.go, coarse.go),
// snapshots (snapshot.go), the ledger (ledger.go), archive sources
// (marksrange.go), visitors and salts (visitors.go). A ReadTx is valid
// only inside the function View runs; what its readers return is a copy,
// valid after it, except the keys ScanBatch and ScanCoarse hand their
// function.
type ReadTx struct{ tx *bolt.Tx }

// View runs fn in a read transaction and returns fn's error, or
// ErrTruncated's when the open file was found truncated. fn must not start
// another transaction of b (View, Update, Commit, Seal, SaveProgress, Ack,
// Rebuild, Restore): bbolt may then wait for itself. fn should not do
// network I/O: the transaction holds the pages it reads from reuse.
func (b *Buffer) View(fn func(*ReadTx) error) error {
	return b.view(func(tx *bolt.Tx) error { return fn(&ReadTx{tx: tx}) })
}

// Tx is a write transaction of the buffer (Buffer.Update): its writes are
// one bbolt transaction, all on disk once Update returned nil, none when it
// returned an error. It reads as a ReadTx does, its own writes included.
// Its writers are in the files of what they write: the writer number
// (number.go), archive sources (marksrange.go), visitors and salts
// (visitors.go). Counts, checkpoints and marks are written by Commit,
// batches by Seal, SaveProgress and Ack.
type Tx struct {
	ReadTx
	b *Buffer
}

// Update runs fn in a write transaction and commits it unless fn returns
// an error, which it returns (or ErrTruncated's when the open file was
// found truncated). Like View's, fn must not start another transaction of
// b, and should not do network I/O: it holds bbolt's one writer.
func (b *Buffer) Update(fn func(*Tx) error) error {
	return b.update(func(tx *bolt.Tx) error { return fn(&Tx{ReadTx: ReadTx{tx: tx}, b: b}) })
}
