// Package ledger is MongoDB's copy of the ledger as its readers use it:
// how far every stream is counted, whichever host or state dir counted
// it (Store.Read), and the replays' claims on its entries (Store.Claim,
// Store.Release), so that a stream is replayed by one logtally at a time.
// An entry is a stream.Entry, the type the state dir's ledger returns too.
//
// The flusher writes the entries (its ledger marks, after a batch's bucket
// updates and before its acknowledgement) and expires them; a claim is a
// document of its own in the same collection (stream.ClaimID), which the
// flusher's writes leave alone. The documents' _ids are stream's
// (LedgerID, ClaimID).
//
// Caveats:
//   - A claim is a lease: a holder that dies leaves it until its Until.
//     A holder that cannot renew it in time may find it taken over.
//   - Read skips documents whose _id is not a ledger id or whose tail
//     check cannot be (a tail longer than its offset).
package ledger
