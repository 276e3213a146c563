package check

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"

	"github.com/logtally/logtally/config"
	"github.com/logtally/logtally/salts"
)

// ping connects to MongoDB and pings the primary.
func ping(ctx context.Context, cfg config.Mongo) error {
	client, _, err := cfg.Connect("logtally-check")
	if err != nil {
		return err
	}
	defer client.Disconnect(context.Background())
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout.D())
	defer cancel()
	if err := client.Ping(ctx, readpref.Primary()); err != nil {
		return fmt.Errorf("mongo %s: %w", cfg.Redacted(), err)
	}
	return nil
}

// probeID is an _id no document has: a find of it reads nothing, and
// still needs the user's find privilege on the collection.
const probeID = "\x00logtally check"

// readerAccess tells what cfg's user can read: each of reads (the
// collections serve and query read) it cannot, and whether it can read
// the salts collection. Each is asked by a find of probeID.
func readerAccess(ctx context.Context, cfg config.Mongo, reads []string) (unreadable []string, saltsRead bool, err error) {
	client, db, err := cfg.Connect("logtally-check")
	if err != nil {
		return nil, false, err
	}
	defer client.Disconnect(context.Background())
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout.D())
	defer cancel()
	readable := func(name string) (bool, error) {
		ok, err := readableOf(db.Collection(name).FindOne(ctx, bson.D{{Key: "_id", Value: probeID}}).Err())
		if err != nil {
			return false, fmt.Errorf("mongo %s: find in %s: %w", cfg.Redacted(), name, err)
		}
		return ok, nil
	}
	for _, name := range reads {
		ok, err := readable(name)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			unreadable = append(unreadable, name)
		}
	}
	saltsRead, err = readable(salts.Collection)
	return unreadable, saltsRead, err
}

// readableOf returns whether a find that ended in err read the
// collection: it did (err nil or no document), or MongoDB refused it for
// lack of a privilege (Unauthorized, code 13; Atlas's code 8000 "not
// allowed to do action"); any other error is returned.
func readableOf(err error) (bool, error) {
	if err == nil || errors.Is(err, mongo.ErrNoDocuments) {
		return true, nil
	}
	if se := mongo.ServerError(nil); errors.As(err, &se) && (se.HasErrorCode(13) || se.HasErrorCodeWithMessage(8000, "not allowed to do action")) {
		return false, nil
	}
	return false, err
}
