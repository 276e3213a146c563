package mongotest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	_ "modernc.org/sqlite" // the driver FerretDB's SQLite handler uses, registered as "sqlite"
)

// FerretDB v1.24.0 (SQLite handler) keeps each collection in a table of
// one JSON column, with a unique index on _ferretdb_sjson->"_id", but it
// looks documents up by _ferretdb_sjson->'$._id': the same value, written
// differently, so SQLite never uses the index and every lookup by _id
// (a find or an update with the filter {_id: v}, and the UPDATE that
// writes a document back) reads and parses every row of the table. On a
// collection of 2,355 documents of 20 kB, one update by _id took 10 s.
// The idIndexer adds an index on FerretDB's own expression to every table
// the proxied commands name, once the table exists; the lookups then take
// milliseconds. FerretDB ignores indexes it did not make (it lists its
// own from its metadata table), and a dropped table takes the index with
// it.

// idIndexName is the suffix of the added index's name (a user index of
// FerretDB's is named "<table>_<name>": its names cannot start with the
// reserved _ferretdb_ prefix, so this one cannot collide).
const idIndexName = "__ferretdb_mongotest_id_path"

// idIndexer adds the index to the tables of the embedded server's
// databases, each SQLite file <dir>/<database>.sqlite.
type idIndexer struct {
	dir string

	mu   sync.Mutex
	done map[[2]string]bool // (database, collection) whose table has the index
	made int64              // indexes created
}

// ensure makes sure the table of collection coll in database db has the
// index, if the table exists (it does not before the collection's first
// write: the next command naming it adds it then). Errors leave FerretDB
// as slow as it was, nothing worse: they are returned for the tests only.
func (x *idIndexer) ensure(ctx context.Context, db, coll string) error {
	if x == nil || db == "" || coll == "" || strings.ContainsAny(db, `/\`) {
		return nil
	}
	key := [2]string{db, coll}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.done[key] {
		return nil
	}
	path := filepath.Join(x.dir, db+".sqlite")
	if _, err := os.Stat(path); err != nil {
		return nil // no such database yet
	}
	// mode=rw: never create the file (FerretDB would then see a database
	// without its metadata table).
	conn, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path)+"?mode=rw&_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer conn.Close()
	var table string
	err = conn.QueryRowContext(ctx, `SELECT table_name FROM "_ferretdb_collections" WHERE name = ?`, coll).Scan(&table)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // no such collection yet
	}
	if err != nil {
		return fmt.Errorf("mongotest: table of %s.%s: %w", db, coll, err)
	}
	var n int
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = ?`, table+idIndexName).Scan(&n); err != nil {
		return fmt.Errorf("mongotest: indexes of %s.%s: %w", db, coll, err)
	}
	if n == 0 {
		q := fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %q ON %q (_ferretdb_sjson->'$._id')`, table+idIndexName, table)
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("mongotest: index %s.%s: %w", db, coll, err)
		}
		x.made++
	}
	if x.done == nil {
		x.done = map[[2]string]bool{}
	}
	x.done[key] = true
	return nil
}

// forget drops what ensure knows of db (coll "" : every collection),
// after a command that drops or renames it: a collection made again under
// the same name has a new table without the index.
func (x *idIndexer) forget(db, coll string) {
	if x == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for k := range x.done {
		if k[0] == db && (coll == "" || k[1] == coll) {
			delete(x.done, k)
		}
	}
}

// created returns how many indexes ensure has created.
func (x *idIndexer) created() int64 {
	if x == nil {
		return 0
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.made
}
