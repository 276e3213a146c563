package mongotest

import (
	"context"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"time"
)

// link is one client connection and its upstream connection. Each write
// command holds the server's write lock from its request until its reply
// has been passed on (or dropped, or the link closed).
type link struct {
	s          *Server
	client, up net.Conn
	closeOnce  sync.Once
	closed     chan struct{}

	mu    sync.Mutex
	done  bool          // replies has returned: nothing reads up any more
	held  bool          // the write lock is held for request id
	id    int32         // the write waiting for its reply
	fault fault         // what happens to that reply
	stall time.Duration // how long it is held back (stallReply)

	// forget names the database and collection (or every collection:
	// "") whose _id index the idIndexer must look for again when the
	// reply to the request of this id passes: a drop, a create.
	forget map[int32][2]string
	// refused are the statements MaxDocSize refused, by request id, for
	// their reply (limit.go).
	refused map[int32]refusal
}

// requests passes the client's messages upstream, taking the write lock
// for each write command.
func (l *link) requests() {
	for {
		m, err := readMessage(l.client)
		if err != nil {
			return
		}
		cmd, err := m.command()
		if err != nil {
			return
		}
		if l.s.ids != nil {
			l.lookups(m)
		}
		if isWrite(cmd) && m.flags()&flagMoreToCome == 0 {
			l.s.writes.Lock()
			f, stall := l.s.faults.next()
			l.mu.Lock()
			l.held, l.id, l.fault, l.stall = true, m.requestID(), f, stall
			l.mu.Unlock()
			if f == cutRequest {
				l.release() // nothing reaches the server
				return      // closed before the write reaches the server
			}
			if cmd == "update" {
				if max := l.s.maxDoc.Load(); max > 0 { // under the lock: see limit.go
					var refused []int32
					if m, refused = l.s.limitUpdates(m, max); len(refused) > 0 {
						l.mu.Lock()
						if l.refused == nil {
							l.refused = map[int32]refusal{}
						}
						l.refused[m.requestID()] = refusal{max: max, indexes: refused}
						l.mu.Unlock()
					}
				}
				m = l.s.narrow.narrow(m) // under the lock: see narrow.go
			}
		}
		if _, err := l.up.Write(m); err != nil {
			return
		}
	}
}

// replies passes the server's messages to the client, releasing the write
// lock once a write's reply is through (or dropped: the write was applied,
// the client never hears it).
func (l *link) replies() {
	defer func() {
		l.mu.Lock()
		l.done = true
		l.mu.Unlock()
	}()
	for {
		m, err := readMessage(l.up)
		if err != nil {
			return
		}
		l.mu.Lock()
		mine := l.held && m.responseTo() == l.id
		f, stall := l.fault, l.stall
		forget, drop := l.forget[m.responseTo()]
		delete(l.forget, m.responseTo())
		ref, refused := l.refused[m.responseTo()]
		delete(l.refused, m.responseTo())
		l.mu.Unlock()
		if refused {
			m = withWriteErrors(m, ref)
		}
		if drop {
			l.s.ids.forget(forget[0], forget[1])
		}
		if mine {
			switch f {
			case dropReply:
				return
			case stallReply:
				t := time.NewTimer(stall)
				select {
				case <-t.C:
				case <-l.closed:
					t.Stop()
					return
				}
			}
		}
		if _, err := l.client.Write(m); err != nil {
			return
		}
		if mine {
			l.release()
		}
	}
}

// release gives the write lock back if this link holds it.
func (l *link) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held {
		l.held = false
		l.s.writes.Unlock()
	}
}

// upGrace bounds the wait for the reply of a write the server is applying
// when its client goes away.
const upGrace = time.Minute

// close closes both connections and releases the write lock. A client
// gone (its timeout) while the server applies its write leaves the
// upstream connection open until that write's reply arrives (replies then
// calls close again): the lock is released only once the server is done,
// as FerretDB goes on applying a write whose connection closed, and a
// write let in beside it could interleave with it (an update lost).
func (l *link) close() {
	l.closeOnce.Do(func() {
		close(l.closed)
		_ = l.client.Close()
	})
	l.mu.Lock()
	wait := l.held && !l.done
	l.mu.Unlock()
	if wait {
		_ = l.up.SetReadDeadline(time.Now().Add(upGrace))
		return
	}
	_ = l.up.Close()
	l.release()
}

// fault is what the proxy does to one write.
type fault int

const (
	pass       fault = iota
	dropReply        // applied; its reply dropped and the connection closed
	cutRequest       // the connection closed before the write reaches the server
	stallReply       // applied; its reply held back for a while
)

// faults decides what happens to each write command, in the order the
// proxy applies them (under the write lock).
type faults struct {
	mu        sync.Mutex
	writes    int64 // write commands seen
	dropped   int64 // replies dropped
	cut       int64 // writes cut before the server
	tooLarge  int64 // update statements refused (MaxDocSize)
	dropEvery int64
	rng       *rand.Rand // picks the dropped replies (DropReplyEvery)
	next1     []fault    // one-shot faults for the next writes, in order
	stall     time.Duration
}

func (f *faults) next() (fault, time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes++
	what := pass
	if len(f.next1) > 0 {
		what, f.next1 = f.next1[0], f.next1[1:]
	} else if f.dropEvery > 0 && f.rng.Int64N(f.dropEvery) == 0 {
		what = dropReply
	}
	switch what {
	case dropReply:
		f.dropped++
	case cutRequest:
		f.cut++
	}
	return what, f.stall
}

// FaultStats counts the proxy's write commands and the faults it made.
type FaultStats struct {
	Writes, DroppedReplies, CutRequests int64
	// TooLarge counts the update statements refused by MaxDocSize.
	TooLarge int64
}

// DropReplyEvery drops the reply to one write command in n (n ≤ 0: none)
// and closes its connection: the write is applied, the client sees a
// network error and must not count it twice when it retries. Which ones
// is drawn at random from seed, not every nth: a client that repeats a
// fixed cycle of n writes (a retried flush) would otherwise lose the same
// step's reply every time, for ever, which no network does.
func (s *Server) DropReplyEvery(n int, seed uint64) {
	s.faults.mu.Lock()
	s.faults.dropEvery = int64(max(n, 0))
	s.faults.rng = rand.New(rand.NewPCG(seed, 0xd20b))
	s.faults.mu.Unlock()
}

// DropNextReply drops the reply to the next write command (applied) and
// closes its connection.
func (s *Server) DropNextReply() { s.queue(dropReply, 0) }

// CutNextWrite closes the connection of the next write command before it
// reaches the server: it is not applied.
func (s *Server) CutNextWrite() { s.queue(cutRequest, 0) }

// StallNextReply holds the reply to the next write command (applied) back
// for d, and the server's other writes with it: longer than the client's
// timeout, the client gives up on a write that was applied.
func (s *Server) StallNextReply(d time.Duration) { s.queue(stallReply, d) }

func (s *Server) queue(f fault, d time.Duration) {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.next1 = append(s.faults.next1, f)
	if f == stallReply {
		s.faults.stall = d
	}
}

// Faults returns what the proxy has done so far.
func (s *Server) Faults() FaultStats {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	return FaultStats{Writes: s.faults.writes, DroppedReplies: s.faults.dropped, CutRequests: s.faults.cut, TooLarge: s.faults.tooLarge}
}

// lookups has the idIndexer add the _id index to the collection a command
// names, or forget what it knows of a collection or database the command
// drops or makes (before it is sent and again once its reply passes: a
// command naming it in between could find the old table).
func (l *link) lookups(m message) {
	o, ok := parseMsg(m)
	if !ok {
		return
	}
	first, err := o.body.IndexErr(0)
	if err != nil {
		return
	}
	db, _ := o.body.Lookup("$db").StringValueOK()
	name, _ := first.Value().StringValueOK()
	var forget [2]string
	switch first.Key() {
	case "drop", "create":
		forget = [2]string{db, name}
	case "dropDatabase":
		forget = [2]string{db, ""}
	case "renameCollection": // {renameCollection: "db.from", to: "db.to"}, on admin
		for _, ns := range []string{name, o.body.Lookup("to").StringValue()} {
			if d, _, ok := strings.Cut(ns, "."); ok {
				l.s.ids.forget(d, "")
			}
		}
		return
	default:
		if name != "" {
			ctx, cancel := context.WithTimeout(context.Background(), indexTimeout)
			_ = l.s.ids.ensure(ctx, db, name)
			cancel()
		}
		return
	}
	l.s.ids.forget(forget[0], forget[1])
	l.mu.Lock()
	if l.forget == nil {
		l.forget = map[int32][2]string{}
	}
	l.forget[m.requestID()] = forget
	l.mu.Unlock()
}

// indexTimeout bounds the idIndexer's work for one command.
const indexTimeout = time.Minute
