package visitor

import (
	"encoding/binary"

	"github.com/logtally/logtally/fnv1a"
)

// Salt is a period's secret key, 16 random bytes shared by every host.
// Whoever holds it can test a guessed (site, address, user agent) against
// a stored register; once it is deleted, nobody can.
type Salt [16]byte

// Key returns the visitor key of (site, client address, user agent) under
// salt: SipHash-1-3 (see the package doc for why not 2-4), keyed by the
// salt's two little-endian words, of the three fields framed as
//
//	uvarint(len(site)) uvarint(len(client)) uvarint(len(ua)) site client ua
//
// The lengths come first and a uvarint is self-delimiting, so the framing
// decodes one way only: ("ab", "c") and ("a", "bc") hash different
// messages. The fields are hashed as given (the caller decides whether a
// site or an address is normalised first). Key does not allocate.
//
// Key is part of the stored format: every host must compute the same key
// for the same visitor in a period, so changing the hash or the framing
// makes hosts of two versions count each visitor twice. A test pins it.
func Key(s *Salt, site, client, ua []byte) uint64 {
	return key(s, site, client, ua, 1, 3)
}

// key is Key with c compression and d finalization rounds.
func key(s *Salt, site, client, ua []byte, c, d int) uint64 {
	var h sip
	h.init(binary.LittleEndian.Uint64(s[:8]), binary.LittleEndian.Uint64(s[8:]), c)
	// The common case (a whole line's fields fit) is framed in one
	// stack buffer and hashed in one pass; longer fields are streamed.
	var buf [keyBuf]byte
	n := binary.PutUvarint(buf[:], uint64(len(site)))
	n += binary.PutUvarint(buf[n:], uint64(len(client)))
	n += binary.PutUvarint(buf[n:], uint64(len(ua)))
	if n+len(site)+len(client)+len(ua) <= len(buf) {
		n += copy(buf[n:], site)
		n += copy(buf[n:], client)
		n += copy(buf[n:], ua)
		h.write(buf[:n])
	} else {
		h.write(buf[:n])
		h.write(site)
		h.write(client)
		h.write(ua)
	}
	return h.sum64(d)
}

// keyBuf is the framed length Key hashes from one stack buffer.
const keyBuf = 384

// UADigest is a user agent's part of a visitor key: its 64-bit FNV-1a
// hash. A user agent enters the key as this digest, computed once per
// distinct user agent (the parser caches it with the bot class), so that
// the keyed hash of a line covers a few dozen bytes, not the whole user
// agent. Two user agents with one digest (2^-64 per pair) count as one.
func UADigest(ua []byte) uint64 { return fnv1a.Extend(fnv1a.Offset, ua) }

// KeyOf returns the visitor key of a line: Key of its site, its client
// address and its user agent's digest (UADigest), little-endian. Every
// writer and every test keys lines with it.
func KeyOf(s *Salt, site, client []byte, uaDigest uint64) uint64 {
	// The usual line (a site and an address of a few dozen bytes) is
	// framed in a small buffer: what Key frames, without zeroing Key's
	// larger one.
	if len(site)+len(client) <= 48 {
		var buf [64]byte
		n := binary.PutUvarint(buf[:], uint64(len(site)))
		n += binary.PutUvarint(buf[n:], uint64(len(client)))
		n += binary.PutUvarint(buf[n:], 8)
		n += copy(buf[n:], site)
		n += copy(buf[n:], client)
		binary.LittleEndian.PutUint64(buf[n:], uaDigest)
		var h sip
		h.init(binary.LittleEndian.Uint64(s[:8]), binary.LittleEndian.Uint64(s[8:]), 1)
		h.write(buf[:n+8])
		return h.sum64(3)
	}
	var d [8]byte
	binary.LittleEndian.PutUint64(d[:], uaDigest)
	return Key(s, site, client, d[:])
}
