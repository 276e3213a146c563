package mongotest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// The proxy reads whole wire messages: its header (length, requestID,
// responseTo, opCode) and, for an OP_MSG, the command's name.

const (
	opMsg          = 2013
	headerLen      = 16
	maxMessage     = 48 << 20 // MongoDB's maxMessageSizeBytes
	flagChecksum   = 1 << 0
	flagMoreToCome = 1 << 1
)

// message is one whole wire message, header included.
type message []byte

// readMessage reads one message from r.
func readMessage(r io.Reader) (message, error) {
	var h [4]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, err
	}
	n := int(int32(binary.LittleEndian.Uint32(h[:])))
	if n < headerLen || n > maxMessage {
		return nil, fmt.Errorf("mongotest: wire message of %d bytes", n)
	}
	m := make(message, n)
	copy(m, h[:])
	if _, err := io.ReadFull(r, m[4:]); err != nil {
		return nil, err
	}
	return m, nil
}

func (m message) requestID() int32  { return int32(binary.LittleEndian.Uint32(m[4:8])) }
func (m message) responseTo() int32 { return int32(binary.LittleEndian.Uint32(m[8:12])) }
func (m message) opCode() int32     { return int32(binary.LittleEndian.Uint32(m[12:16])) }

// flags returns an OP_MSG's flag bits (0 for other messages).
func (m message) flags() uint32 {
	if m.opCode() != opMsg || len(m) < headerLen+4 {
		return 0
	}
	return binary.LittleEndian.Uint32(m[16:20])
}

// command returns the name of an OP_MSG's command: the first key of its
// body (the kind 0 section). It is "" for other messages.
func (m message) command() (string, error) {
	if m.opCode() != opMsg {
		return "", nil
	}
	end := len(m)
	if m.flags()&flagChecksum != 0 {
		end -= 4
	}
	for i := headerLen + 4; i < end; {
		kind := m[i]
		i++
		if i+4 > end {
			break
		}
		size := int(int32(binary.LittleEndian.Uint32(m[i:])))
		if size < 5 || i+size > end {
			break
		}
		if kind == 0 {
			// A BSON document: its length, then elements: a type byte
			// and the key as a C string.
			doc := m[i : i+size]
			if doc[4] == 0 {
				return "", errors.New("mongotest: empty command document")
			}
			for k := 5; k < len(doc); k++ {
				if doc[k] == 0 {
					return string(doc[5:k]), nil
				}
			}
			break
		}
		i += size
	}
	return "", errors.New("mongotest: OP_MSG without a command body")
}

// isWrite reports whether cmd writes documents: the commands the proxy
// applies one at a time.
func isWrite(cmd string) bool {
	switch cmd {
	case "insert", "update", "delete", "findAndModify", "findandmodify", "bulkWrite":
		return true
	}
	return false
}

// msgParts is an OP_MSG taken apart: its flags, its body (the kind 0
// section) and its document sequences (kind 1 sections), for the proxy's
// rewrites (narrow.go).
type msgParts struct {
	flags uint32
	body  bsoncore.Document
	seqs  []docSeq
}

// docSeq is a kind 1 section: a named sequence of documents (a write
// command's "updates", "documents" or "deletes").
type docSeq struct {
	id   string
	docs []bsoncore.Document
}

// parseMsg takes an OP_MSG apart. It reports false for other messages and
// for one it cannot read whole, or that carries a checksum (a rewrite
// would have to compute it again).
func parseMsg(m message) (msgParts, bool) {
	var o msgParts
	if m.opCode() != opMsg || len(m) < headerLen+4 {
		return o, false
	}
	o.flags = m.flags()
	if o.flags&flagChecksum != 0 {
		return o, false
	}
	body := false
	for rest := []byte(m[headerLen+4:]); len(rest) > 0; {
		kind := rest[0]
		rest = rest[1:]
		switch kind {
		case 0:
			doc, r, ok := bsoncore.ReadDocument(rest)
			if !ok || body {
				return o, false
			}
			o.body, body, rest = doc, true, r
		case 1:
			if len(rest) < 4 {
				return o, false
			}
			size := int(int32(binary.LittleEndian.Uint32(rest)))
			if size < 5 || size > len(rest) {
				return o, false
			}
			sec := rest[4:size]
			rest = rest[size:]
			id, docs, ok := bsoncore.ReadKey(sec)
			if !ok {
				return o, false
			}
			s := docSeq{id: id}
			for len(docs) > 0 {
				doc, r, ok := bsoncore.ReadDocument(docs)
				if !ok {
					return o, false
				}
				s.docs, docs = append(s.docs, doc), r
			}
			o.seqs = append(o.seqs, s)
		default:
			return o, false
		}
	}
	return o, body
}

// encode writes o as a message with m's requestID and responseTo: the
// body first, then the sequences.
func (o msgParts) encode(m message) message {
	b := make([]byte, headerLen, len(m)+64)
	binary.LittleEndian.PutUint32(b[4:], uint32(m.requestID()))
	binary.LittleEndian.PutUint32(b[8:], uint32(m.responseTo()))
	binary.LittleEndian.PutUint32(b[12:], opMsg)
	b = binary.LittleEndian.AppendUint32(b, o.flags)
	b = append(b, 0)
	b = append(b, o.body...)
	for _, s := range o.seqs {
		b = append(b, 1)
		at := len(b)
		b = binary.LittleEndian.AppendUint32(b, 0)
		b = bsoncore.AppendKey(b, s.id)
		for _, d := range s.docs {
			b = append(b, d...)
		}
		binary.LittleEndian.PutUint32(b[at:], uint32(len(b)-at))
	}
	binary.LittleEndian.PutUint32(b[0:], uint32(len(b)))
	return b
}
