package mongotest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
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
