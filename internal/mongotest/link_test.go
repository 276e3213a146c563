package mongotest

import (
	"encoding/binary"
	"net"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// opMsgOf returns an OP_MSG of request id carrying cmd (a kind 0 section).
func opMsgOf(t *testing.T, id int32, cmd bson.D) message {
	t.Helper()
	body, err := bson.Marshal(cmd)
	if err != nil {
		t.Fatal(err)
	}
	m := make(message, headerLen+4+1, headerLen+4+1+len(body))
	binary.LittleEndian.PutUint32(m[4:], uint32(id))
	binary.LittleEndian.PutUint32(m[12:], opMsg)
	m = append(m, body...)
	binary.LittleEndian.PutUint32(m[0:], uint32(len(m)))
	return m
}

// replyTo returns a reply message to request id.
func replyTo(t *testing.T, id int32) message {
	m := opMsgOf(t, id+1000, bson.D{{Key: "ok", Value: 1}})
	binary.LittleEndian.PutUint32(m[8:], uint32(id))
	return m
}

// A client that goes away (its timeout) while the server applies its
// write leaves the write lock held until the server's reply: FerretDB
// goes on applying it, and another write let in beside it could
// interleave with it. Before, the lock was released at the client's
// close.
func TestWriteLockHeldUntilTheServerReplies(t *testing.T) {
	s := &Server{}
	client, proxySide := net.Pipe()
	up, server := net.Pipe()
	l := &link{s: s, client: proxySide, up: up, closed: make(chan struct{})}
	ended := make(chan struct{}, 2)
	for _, f := range []func(){l.requests, l.replies} {
		go func() { f(); l.close(); ended <- struct{}{} }()
	}

	update := opMsgOf(t, 7, bson.D{{Key: "update", Value: "c"}, {Key: "$db", Value: "d"}})
	go client.Write(update)
	got, err := readMessage(server) // the server has the write
	if err != nil || got.requestID() != 7 {
		t.Fatalf("upstream read %v, %v", got, err)
	}
	client.Close() // the client's timeout
	<-ended        // requests has ended; replies waits on the server

	locked := make(chan struct{})
	go func() { s.writes.Lock(); close(locked); s.writes.Unlock() }()
	select {
	case <-locked:
		t.Fatal("the write lock was released while the server still applied the write")
	case <-time.After(100 * time.Millisecond): // a negative: nothing to wait on
	}
	if _, err := server.Write(replyTo(t, 7)); err != nil {
		t.Fatal(err)
	}
	<-ended
	select {
	case <-locked:
	case <-time.After(10 * time.Second):
		t.Fatal("the write lock is still held after the server's reply")
	}
	if _, err := server.Read(make([]byte, 1)); err == nil {
		t.Error("the upstream connection is still open after the reply")
	}
}
