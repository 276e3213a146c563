package buffer

import (
	"bytes"

	bolt "go.etcd.io/bbolt"
)

// Finished files: a file whose checkpoint is deleted (a Done chunk) leaves
// no trace in the stored checkpoints, so a batch's snapshot could not name
// a file created and finished between two seals, nor say where a file
// finished within the batch ended. Commit keeps such a file's last
// checkpoint in pending/finished; Seal moves them into the batch
// (sealed/finished, present, maybe empty, in every batch this version
// seals: its absence means "not known"); acknowledging a minute-only batch
// adds them to meta/coarse_finished, the files finished since the last
// acknowledged full batch, which acknowledging a full batch empties.
var (
	subFinished       = []byte("finished")        // in pending and sealed: caller's key -> checkpoint
	subCoarseFinished = []byte("coarse_finished") // in meta
)

// putFinished records finished files' last checkpoints in the pending
// ones (a later one under the same key replaces the earlier).
func putFinished(tx *bolt.Tx, finished map[string][]byte) error {
	if len(finished) == 0 {
		return nil
	}
	pf, err := tx.Bucket(bktPending).CreateBucketIfNotExists(subFinished)
	if err != nil {
		return err
	}
	for k, v := range finished {
		if err := pf.Put([]byte(k), bytes.Clone(v)); err != nil {
			return err
		}
	}
	return nil
}

// sealFinished moves the pending finished files into the batch being
// sealed (an empty set when there are none: the batch knows it finished
// none).
func sealFinished(sealed, pending *bolt.Bucket) error {
	if sealed.Bucket(subFinished) != nil { // left by a failed ack
		if err := sealed.DeleteBucket(subFinished); err != nil {
			return err
		}
	}
	if pending.Bucket(subFinished) == nil {
		_, err := sealed.CreateBucket(subFinished)
		return err
	}
	if err := pending.MoveBucket(subFinished, sealed); err != nil {
		return err
	}
	_, err := pending.CreateBucket(subFinished)
	return err
}

// ackFinished completes an Ack (in its transaction, before ackCoarse): a
// minute-only batch's finished files join those the coarse counts hold
// since the last full batch (or make that set unknown, when the batch was
// sealed without them); a full batch starts the set afresh.
func ackFinished(tx *bolt.Tx, sealed *bolt.Bucket) error {
	meta := tx.Bucket(bktMeta)
	sf := sealed.Bucket(subFinished)
	if sealed.Get(keyMinuteOnly) == nil {
		if meta.Bucket(subCoarseFinished) != nil {
			if err := meta.DeleteBucket(subCoarseFinished); err != nil {
				return err
			}
		}
		if _, err := meta.CreateBucket(subCoarseFinished); err != nil {
			return err
		}
	} else if cf := meta.Bucket(subCoarseFinished); cf != nil {
		if sf == nil {
			if err := meta.DeleteBucket(subCoarseFinished); err != nil {
				return err
			}
		} else if err := sf.ForEach(func(k, v []byte) error { return cf.Put(k, v) }); err != nil {
			return err
		}
	}
	if sf != nil {
		return sealed.DeleteBucket(subFinished)
	}
	return nil
}

// readFinished copies a finished set; nil when bkt is nil (not known).
func readFinished(bkt *bolt.Bucket) map[string][]byte {
	if bkt == nil {
		return nil
	}
	out := map[string][]byte{}
	bkt.ForEach(func(k, v []byte) error {
		out[string(k)] = bytes.Clone(v)
		return nil
	})
	return out
}

// putFinishedSet stores set as the sub-bucket name of parent, replacing
// it; a nil set leaves none (not known).
func putFinishedSet(parent *bolt.Bucket, name []byte, set map[string][]byte) error {
	if parent.Bucket(name) != nil {
		if err := parent.DeleteBucket(name); err != nil {
			return err
		}
	}
	if set == nil {
		return nil
	}
	bkt, err := parent.CreateBucket(name)
	if err != nil {
		return err
	}
	for k, v := range set {
		if err := bkt.Put([]byte(k), v); err != nil {
			return err
		}
	}
	return nil
}
