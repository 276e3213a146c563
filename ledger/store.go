package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/logtally/logtally/stream"
)

// Collection holds the database's copy of the ledger: per fingerprint,
// how far the file or archive it names is counted and acknowledged,
// whichever host or state dir counted it (the flusher writes it), and the
// replays' claims.
const Collection = "ledger"

// DefaultTimeout bounds each database operation of a Store whose timeout
// is not set.
const DefaultTimeout = 10 * time.Second

// Store reads MongoDB's ledger and holds claims on its entries. It is
// safe for concurrent use.
type Store struct {
	coll    *mongo.Collection
	timeout time.Duration
}

// New returns the Store of db's ledger collection, each operation bounded
// by timeout (0: DefaultTimeout). It does no I/O.
func New(db *mongo.Database, timeout time.Duration) *Store {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Store{coll: db.Collection(Collection), timeout: timeout}
}

// Read returns the database's entries of every stream under keys
// (fingerprint keys: stream.LedgerCandidates), as the buffer's ledger
// does for its own (buffer.ReadTx.Streams): how far each is counted and
// acknowledged (Acked is Offset), with its tail check; Updated is not read.
// The claims are not entries.
func (s *Store) Read(ctx context.Context, keys []string) ([]stream.Entry, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	ids := make(bson.A, 0, len(keys))
	var streams bson.A // the range of each fingerprint's streams' _ids
	for _, k := range keys {
		id := stream.LedgerID(k)
		ids = append(ids, id)
		streams = append(streams, bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: id + ":"}, {Key: "$lt", Value: id + ";"}}}})
	}
	or := append(bson.A{bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}}}, streams...)
	octx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	cur, err := s.coll.Find(octx, bson.D{{Key: "$or", Value: or}},
		options.Find().SetProjection(bson.D{{Key: "offset", Value: 1}, {Key: "tail_len", Value: 1}, {Key: "tail_sum", Value: 1}, {Key: "source", Value: 1}, {Key: "path", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	var docs []struct {
		ID      string `bson:"_id"`
		Offset  int64  `bson:"offset"`
		TailLen int    `bson:"tail_len"`
		TailSum int64  `bson:"tail_sum"`
		Source  string `bson:"source"`
		Path    string `bson:"path"`
	}
	if err := cur.All(octx, &docs); err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	out := make([]stream.Entry, 0, len(docs))
	for _, d := range docs {
		k, ok := stream.ParseLedgerID(d.ID)
		if !ok {
			continue
		}
		var e stream.Entry
		e.FPLen, e.FPSum, e.Stream, _ = stream.ParseEntryKey(k)
		if e.Stream != 0 && (d.TailLen < 0 || int64(d.TailLen) > d.Offset) {
			continue
		}
		e.Offset, e.Acked, e.Source, e.Path = d.Offset, d.Offset, d.Source, d.Path
		if e.Stream != 0 {
			e.TailLen, e.TailSum = d.TailLen, uint64(d.TailSum)
		}
		out = append(out, e)
	}
	return out, nil
}

// Claim is a lease on a stream's ledger entry: the replay that holds it
// reads the stream, and others wait for it (see Store.Claim). A claim is
// a document of its own in the ledger collection, stream.ClaimID(key): the
// entry's document and the fields the flusher writes are left alone.
type Claim struct {
	// Holder identifies the claimant: its buffer's instance id.
	Holder string `bson:"holder"`
	// Instance and Host name it for people: the instance name (may be
	// empty) and the host it runs on. Path is the file it reads.
	Instance string `bson:"instance,omitempty"`
	Host     string `bson:"host,omitempty"`
	Path     string `bson:"path,omitempty"`
	// Until is when the lease ends unless renewed: after it, another
	// replay may take the claim over.
	Until time.Time `bson:"until"`
}

// Claim takes, or renews, c on key's ledger entry: it succeeds when
// there is no claim, one whose Until is not after now (taken over), or one
// of c.Holder (renewed). ok is false when another holder's live claim is
// there: cur is that claim (zero when it went meanwhile: try again).
//
// A claim is made by inserting its document, whose _id is unique: of
// claimants racing, exactly one succeeds, on MongoDB and on servers whose
// conditional updates are not atomic (FerretDB's SQLite backend).
func (s *Store) Claim(ctx context.Context, key string, c Claim, now time.Time) (cur Claim, ok bool, err error) {
	coll := s.coll
	id := stream.ClaimID(key)
	octx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	c.Until = c.Until.UTC()
	doc := func() bson.D {
		// updated: a claim left by a dead holder expires like an entry.
		return bson.D{{Key: "_id", Value: id}, {Key: "holder", Value: c.Holder}, {Key: "instance", Value: c.Instance},
			{Key: "host", Value: c.Host}, {Key: "path", Value: c.Path}, {Key: "until", Value: c.Until}, {Key: "updated", Value: now.UTC()}}
	}
	for range 3 {
		_, err = coll.InsertOne(octx, doc())
		if err == nil {
			return c, true, nil
		}
		if !mongo.IsDuplicateKeyError(err) {
			return Claim{}, false, fmt.Errorf("claim ledger %s: %w", id, err)
		}
		err = coll.FindOne(octx, bson.D{{Key: "_id", Value: id}}).Decode(&cur)
		switch {
		case errors.Is(err, mongo.ErrNoDocuments):
			continue // released meanwhile
		case err != nil:
			return Claim{}, false, fmt.Errorf("read ledger claim %s: %w", id, err)
		case cur.Holder == c.Holder:
			res, err := coll.UpdateOne(octx, bson.D{{Key: "_id", Value: id}, {Key: "holder", Value: c.Holder}}, bson.D{{Key: "$set", Value: doc()[1:]}})
			if err != nil {
				return Claim{}, false, fmt.Errorf("renew ledger claim %s: %w", id, err)
			}
			if res.MatchedCount == 1 {
				return c, true, nil
			}
			continue // taken over meanwhile
		case !cur.Until.After(now):
			// Expired: only the claim read is deleted, then the insert
			// decides between the claimants.
			_, err := coll.DeleteOne(octx, bson.D{{Key: "_id", Value: id}, {Key: "holder", Value: cur.Holder}, {Key: "until", Value: cur.Until}})
			if err != nil {
				return Claim{}, false, fmt.Errorf("take over ledger claim %s: %w", id, err)
			}
			continue
		default:
			return cur, false, nil
		}
	}
	return Claim{}, false, nil
}

// Release drops holder's claim on key's ledger entry, if it still has
// it.
func (s *Store) Release(ctx context.Context, key, holder string) error {
	octx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if _, err := s.coll.DeleteOne(octx, bson.D{{Key: "_id", Value: stream.ClaimID(key)}, {Key: "holder", Value: holder}}); err != nil {
		return fmt.Errorf("release ledger claim %s: %w", stream.ClaimID(key), err)
	}
	return nil
}
