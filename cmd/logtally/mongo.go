package main

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"

	"github.com/logtally/logtally/config"
)

// connect returns a client for cfg. It does not wait for the server: the
// daemon starts and buffers while MongoDB is down.
func connect(cfg config.Mongo, app string) (*mongo.Client, *mongo.Database, error) {
	wc := &writeconcern.WriteConcern{Journal: &cfg.Journal}
	if n := cfg.WriteConcern.Nodes(); n >= 0 {
		wc.W = n
	} else {
		wc.W = "majority"
	}
	opts := options.Client().ApplyURI(cfg.URI).
		SetAppName(app).
		SetWriteConcern(wc).
		SetServerSelectionTimeout(cfg.Timeout.D()).
		SetConnectTimeout(cfg.Timeout.D())
	client, err := mongo.Connect(opts)
	if err != nil {
		return nil, nil, fmt.Errorf("mongo %s: %w", cfg.Redacted(), err)
	}
	return client, client.Database(cfg.Database), nil
}

func ping(ctx context.Context, cfg config.Mongo) error {
	client, _, err := connect(cfg, "logtally-check")
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
