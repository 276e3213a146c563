package geo

import (
	"sync"
	"sync/atomic"
)

// Holder holds the DB read from two paths and reads them again on
// Reload (the daemon's SIGHUP), keeping the DB it has when the files
// cannot be read. DB and Reload are safe for concurrent use.
//
// A DB replaced by Reload is not closed: the goroutines still using it
// finish with it, and its memory goes when the last of them drops it.
type Holder struct {
	countryPath, asnPath string
	db                   atomic.Pointer[DB]
	mu                   sync.Mutex // one Reload at a time
}

// OpenHolder opens the databases (see Open) and returns a Holder of them.
func OpenHolder(countryPath, asnPath string) (*Holder, error) {
	db, err := Open(countryPath, asnPath)
	if err != nil {
		return nil, err
	}
	h := &Holder{countryPath: countryPath, asnPath: asnPath}
	h.db.Store(db)
	return h, nil
}

// DB returns the database held.
func (h *Holder) DB() *DB { return h.db.Load() }

// Reload opens the files again and holds the new DB; on any error it
// keeps the DB it has and returns the error.
func (h *Holder) Reload() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	db, err := Open(h.countryPath, h.asnPath)
	if err != nil {
		return err
	}
	h.db.Store(db)
	return nil
}

// Paths returns the files h reads: the country database's and the ASN
// database's ("" for none).
func (h *Holder) Paths() (country, asn string) { return h.countryPath, h.asnPath }
