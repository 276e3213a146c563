package visitor

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func testSalt(b byte) *Salt {
	var s Salt
	for i := range s {
		s[i] = b + byte(i)
	}
	return &s
}

var (
	tSite = []byte("www.example.com")
	tIPv4 = []byte("203.0.113.195")
	tIPv6 = []byte("2001:db8:85a3:8d3:1319:8a2e:370:7348")
	tUA   = []byte("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0")
)

// framed is the message Key hashes, built the slow way.
func framed(site, client, ua []byte) []byte {
	var m []byte
	m = binary.AppendUvarint(m, uint64(len(site)))
	m = binary.AppendUvarint(m, uint64(len(client)))
	m = binary.AppendUvarint(m, uint64(len(ua)))
	m = append(m, site...)
	m = append(m, client...)
	return append(m, ua...)
}

// Key is SipHash-1-3 under the salt of the framed fields, on both of its
// paths (one stack buffer, streamed), and a pinned value catches any
// change of the hash or the framing (which would make hosts of two
// versions count every visitor twice).
func TestKeyDefinition(t *testing.T) {
	s := testSalt(0)
	k0, k1 := binary.LittleEndian.Uint64(s[:8]), binary.LittleEndian.Uint64(s[8:])
	long := bytes.Repeat([]byte("x"), 2*keyBuf)
	for _, c := range [][3][]byte{
		{tSite, tIPv4, tUA}, {tSite, tIPv6, tUA}, {nil, nil, nil},
		{tSite, tIPv4, long}, {long, tIPv4, tUA}, {tSite, tIPv6, long[:keyBuf-len(tSite)-len(tIPv6)-3]},
		{tSite, tIPv6, long[:keyBuf-len(tSite)-len(tIPv6)-2]},
	} {
		want := SipHash13(k0, k1, framed(c[0], c[1], c[2]))
		if got := Key(s, c[0], c[1], c[2]); got != want {
			t.Errorf("Key(%d, %d, %d bytes) = %016x, want SipHash13 of the framing %016x", len(c[0]), len(c[1]), len(c[2]), got, want)
		}
	}
	if got, want := Key(s, tSite, tIPv4, tUA), uint64(0xba96b3c3b18fec6b); got != want {
		t.Errorf("Key of the pinned case = %#016x, want %#016x: the visitor key changed", got, want)
	}
}

func TestKeyDistinct(t *testing.T) {
	s := testSalt(0)
	seen := map[uint64]string{}
	add := func(name string, site, client, ua string) {
		t.Helper()
		k := Key(s, []byte(site), []byte(client), []byte(ua))
		if prev, ok := seen[k]; ok {
			t.Errorf("%s and %s have the same key %016x", name, prev, k)
		}
		seen[k] = name
	}
	add("base", "example.com", "192.0.2.1", "UA/1")
	add("other site", "example.org", "192.0.2.1", "UA/1")
	add("other client", "example.com", "192.0.2.2", "UA/1")
	add("other ua", "example.com", "192.0.2.1", "UA/2")
	add("no ua", "example.com", "192.0.2.1", "")
	// Framing: the same bytes cut at other places.
	add("ab|c|d", "ab", "c", "d")
	add("a|bc|d", "a", "bc", "d")
	add("a|b|cd", "a", "b", "cd")
	add("abcd||", "abcd", "", "")
	add("|abcd|", "", "abcd", "")
	add("||abcd", "", "", "abcd")
	add("abc|d|", "abc", "d", "")
	// A length prefix's byte inside a field cannot fake another cut.
	add("\\x01a|b|", "\x01a", "b", "")
	add("|\\x01|ab", "", "\x01", "ab")
	// Many clients and user agents: no collision among 100k keys (a
	// collision at 64 bits would be a bug, not chance: p ≈ 3e-10).
	for i := range 50_000 {
		add("client "+strconv.Itoa(i), "example.com", "10.0."+strconv.Itoa(i/256)+"."+strconv.Itoa(i%256), "UA/1")
		add("ua "+strconv.Itoa(i), "example.com", "192.0.2.1", "UA/1 build "+strconv.Itoa(i))
	}
}

// Keys under two salts are unrelated: each output bit flips with
// probability 1/2, independently of the input.
func TestKeySaltsUnrelated(t *testing.T) {
	a, b := testSalt(0), testSalt(1)
	const n = 20_000
	var flips [64]int
	total := 0
	for i := range n {
		client := []byte("10.1." + strconv.Itoa(i/256) + "." + strconv.Itoa(i%256))
		x := Key(a, tSite, client, tUA) ^ Key(b, tSite, client, tUA)
		total += bits.OnesCount64(x)
		for j := range flips {
			flips[j] += int(x >> j & 1)
		}
	}
	// Mean 32 bits per key, standard deviation of the mean 4/sqrt(n).
	if mean := float64(total) / n; mean < 31.9 || mean > 32.1 {
		t.Errorf("keys under two salts differ in %.3f bits on average, want 32", mean)
	}
	// Each bit flips n/2 ± 5 standard deviations (sqrt(n)/2 = 71).
	for j, f := range flips {
		if f < n/2-355 || f > n/2+355 {
			t.Errorf("bit %d flips in %d of %d keys, want about %d", j, f, n, n/2)
		}
	}
	// One flipped salt bit is enough.
	c := *a
	c[15] ^= 0x80
	if Key(a, tSite, tIPv4, tUA) == Key(&c, tSite, tIPv4, tUA) {
		t.Error("a salt differing in one bit gives the same key")
	}
}

func TestKeyNoAlloc(t *testing.T) {
	s := testSalt(0)
	long := bytes.Repeat([]byte("y"), 1000)
	var sink uint64
	if n := testing.AllocsPerRun(100, func() {
		sink += Key(s, tSite, tIPv4, tUA)
		sink += Key(s, tSite, tIPv6, long)
	}); n != 0 {
		t.Errorf("Key allocates %v times per call pair, want 0", n)
	}
	_ = sink
}

// Keys from Key count like random keys: 100,000 visitors (distinct
// addresses, a few user agents) estimate within 3 standard errors, and
// counting them again under the same salt changes nothing.
func TestKeyEstimate(t *testing.T) {
	s := testSalt(7)
	sk := NewSketch(SitePrecision)
	const n = 100_000
	uas := [][]byte{tUA, []byte("Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X)"), nil}
	for i := range n {
		client := []byte("10." + strconv.Itoa(i>>16) + "." + strconv.Itoa(i>>8&255) + "." + strconv.Itoa(i&255))
		sk.Add(Key(s, tSite, client, uas[i%3]))
	}
	before := slices.Clone(sk.R)
	for i := range n {
		client := []byte("10." + strconv.Itoa(i>>16) + "." + strconv.Itoa(i>>8&255) + "." + strconv.Itoa(i&255))
		sk.Add(Key(s, tSite, client, uas[i%3]))
	}
	if !slices.Equal(before, sk.R) {
		t.Error("the same visitors counted again changed the registers")
	}
	rel := (sk.Estimate() - n) / n
	if math.Abs(rel) > 3*StdError(SitePrecision) {
		t.Errorf("100,000 visitors estimated with error %+.2f%%", 100*rel)
	}
	t.Logf("100,000 visitors through Key at p=12: error %+.2f%%", 100*rel)
}

// KeyOf's short path frames exactly as Key does.
func TestKeyOfMatchesKey(t *testing.T) {
	var s Salt
	copy(s[:], "0123456789abcdef")
	for _, site := range []string{"", "a", "www.example.com", strings.Repeat("s", 40), strings.Repeat("s", 60)} {
		for _, client := range []string{"", "203.0.113.7", "2001:db8::1", strings.Repeat("c", 48)} {
			for _, d := range []uint64{0, 1, 0xfedcba9876543210} {
				var b [8]byte
				binary.LittleEndian.PutUint64(b[:], d)
				if got, want := KeyOf(&s, []byte(site), []byte(client), d), Key(&s, []byte(site), []byte(client), b[:]); got != want {
					t.Errorf("KeyOf(%q, %q, %x) = %x, Key gives %x", site, client, d, got, want)
				}
			}
		}
	}
}
