package parser

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"regexp"
	"sync"

	"github.com/logtally/logtally/botclass"
)

// MaxBytes caps Hit.Bytes: a logged size above it (1 PiB, more than any
// response) counts as MaxBytes, so one garbage line cannot swamp a sum.
const MaxBytes = 1 << 50

// MaxRT caps Hit.RT, in microseconds: a response time above one day
// counts as one day. Long-lived connections (a proxied websocket) can
// log hours; more than a day is a broken clock or garbage, and the cap
// keeps one such line from dominating a sum or a maximum.
const MaxRT = 86_400_000_000

// NoRT is Hit.RT when the line logs no response time.
const NoRT = -1

// Time units of response-time fields: the power of ten that turns a
// value in the unit into microseconds.
var timeUnits = map[string]int{"s": 6, "ms": 3, "us": 0, "ns": -3}

// pow10 holds 10^0 .. 10^18.
var pow10 = func() (t [19]uint64) {
	t[0] = 1
	for i := 1; i < len(t); i++ {
		t[i] = t[i-1] * 10
	}
	return t
}()

// parseSize reads a response size: digits, capped at MaxBytes. ok is
// false for anything else ("-" included, which is 0 bytes).
func parseSize(b []byte) (n uint64, ok bool) {
	if len(b) == 0 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		if n <= MaxBytes {
			n = n*10 + uint64(c-'0')
		}
	}
	return min(n, MaxBytes), true
}

// sizeOf is the Bytes of a logged size outside CLF: digits, else 0 ("-",
// garbage, a negative number: the hit counts, its bytes do not).
func sizeOf(b []byte) uint64 {
	n, _ := parseSize(b)
	return n
}

// parseDuration reads an unsigned decimal number ("0.123", "12", "1.5e-3")
// in a unit that is 10^scale microseconds, and returns it in microseconds,
// truncated toward zero (digits below a microsecond are dropped) and
// capped at MaxRT. It uses integer arithmetic only and does not allocate.
// ok is false for an empty value, "-", a sign, or anything that is not
// such a number.
func parseDuration(b []byte, scale int) (int64, bool) {
	var m uint64 // significant digits, at most 18
	exp := scale // m * 10^exp microseconds
	digits, sig := 0, 0
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		digits++
		if m == 0 && b[i] == '0' {
			continue
		}
		if sig < 18 {
			m = m*10 + uint64(b[i]-'0')
			sig++
		} else {
			exp++ // a dropped integer digit
		}
	}
	if i < len(b) && b[i] == '.' {
		i++
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			digits++
			if m == 0 && b[i] == '0' {
				exp--
				continue
			}
			if sig < 18 {
				m = m*10 + uint64(b[i]-'0')
				sig++
				exp--
			}
		}
	}
	if digits == 0 {
		return 0, false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		neg := false
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			neg = b[i] == '-'
			i++
		}
		e, n := 0, 0
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			if e < 1000 {
				e = e*10 + int(b[i]-'0')
			}
			n++
		}
		if n == 0 {
			return 0, false
		}
		if neg {
			e = -e
		}
		exp += e
	}
	if i != len(b) {
		return 0, false
	}
	switch {
	case m == 0:
		return 0, true
	case exp < 0:
		if -exp >= len(pow10) {
			return 0, true
		}
		return min(int64(m/pow10[-exp]), MaxRT), true
	case exp >= len(pow10) || m > MaxRT/pow10[exp]:
		return MaxRT, true
	}
	return min(int64(m*pow10[exp]), MaxRT), true
}

// rtOf is the response time of one logged value, or NoRT.
func rtOf(b []byte, scale int) int64 {
	if rt, ok := parseDuration(b, scale); ok {
		return rt
	}
	return NoRT
}

// sumDurations reads nginx's $upstream_response_time: one value, or a
// list for several upstreams ("0.012, 0.030") and internal redirects
// ("0.012 : 0.030"), where "-" stands for an upstream that gave no
// response. It returns the sum of the values (capped at MaxRT), or NoRT
// when there is none or an element is not a number.
func sumDurations(b []byte, scale int) int64 {
	sum, any := int64(0), false
	for len(b) > 0 {
		i := 0
		for i < len(b) && b[i] != ',' && b[i] != ':' {
			i++
		}
		el := trimSpaces(b[:i])
		if i < len(b) {
			i++
		}
		b = b[i:]
		if len(el) == 1 && el[0] == '-' {
			continue
		}
		rt, ok := parseDuration(el, scale)
		if !ok {
			return NoRT
		}
		sum, any = min(sum+rt, MaxRT), true
	}
	if !any {
		return NoRT
	}
	return sum
}

func trimSpaces(b []byte) []byte {
	for len(b) > 0 && b[0] == ' ' {
		b = b[1:]
	}
	for len(b) > 0 && b[len(b)-1] == ' ' {
		b = b[:len(b)-1]
	}
	return b
}

// defaultRules are the embedded lists without a source's own patterns,
// built once per process.
var defaultRules = sync.OnceValues(func() (*botclass.Rules, error) { return botclass.New(nil) })

// newBotRules returns the classification rules of a source: its own
// patterns (each checked here so every bad one is named) before the
// embedded lists.
func newBotRules(pats []botclass.Pattern) (*botclass.Rules, []error) {
	if len(pats) == 0 {
		r, err := defaultRules()
		if err != nil {
			return nil, []error{&ConfigError{Field: "bots", Problem: err.Error()}}
		}
		return r, nil
	}
	var errs []error
	for i, p := range pats {
		switch {
		case p.Class == botclass.Person:
			errs = append(errs, &ConfigError{Field: fmt.Sprintf("bots[%d].class", i),
				Problem: fmt.Sprintf("%q: must be search, ai, tool, bot or suspect (user agents no pattern names are people already)", p.Class)})
		case p.Class >= botclass.NumClasses:
			errs = append(errs, &ConfigError{Field: fmt.Sprintf("bots[%d].class", i),
				Problem: fmt.Sprintf("%v: unknown bot class (want search, ai, tool, bot or suspect)", p.Class)})
		}
		if p.Match == "" {
			errs = append(errs, &ConfigError{Field: fmt.Sprintf("bots[%d].match", i), Problem: "must not be empty"})
		} else if _, err := regexp.Compile("(?i)" + p.Match); err != nil {
			errs = append(errs, &ConfigError{Field: fmt.Sprintf("bots[%d].match", i), Problem: fmt.Sprintf("%q: %v", p.Match, err)})
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	r, err := botclass.New(pats)
	if err != nil {
		return nil, []error{&ConfigError{Field: "bots", Problem: err.Error()}}
	}
	return r, nil
}

// recentUAs remembers the class and digest of the user agents classified
// last, in a small table indexed by a few of their bytes, in front of the
// bot cache: a site's lines mostly come from a few dozen user agents, and
// a slot's compare with the line's user agent is cheaper than the cache's
// lookup, which hashes the whole user agent and probes a large map.
type recentUAs struct {
	slots [recentSlots]recentUA
	hits  uint64
}

// recentSlots is the number of slots of recentUAs: a power of two.
const recentSlots = 256

type recentUA struct {
	ua     []byte // grown to the longest user agent the slot held
	agent  botclass.Agent
	set    bool
	digest uint64
}

// slot returns the slot of ua: from its length and three 8-byte words
// (its last, middle and first quarter's), or its bytes when shorter than
// 16.
func (r *recentUAs) slot(ua []byte) *recentUA {
	n := len(ua)
	h := uint64(n)
	if n >= 16 {
		h ^= binary.LittleEndian.Uint64(ua[n-8:]) ^ binary.LittleEndian.Uint64(ua[n/2-4:])<<1 ^ binary.LittleEndian.Uint64(ua[n/4:])<<2
	} else {
		for _, c := range ua {
			h = h<<8 | uint64(c)
		}
	}
	h *= 0x9e3779b97f4a7c15
	return &r.slots[h>>(64-8)]
}

// classify returns the class of the user agent read from the line: Person
// when the line has none (the format or the line does not log it),
// otherwise the cached class of its first maxUALen bytes, as logged.
// It also returns the user agent's digest (visitor.UADigest), the part of
// the visitor key the user agent gives, cached with the class.
func (p *Parser) classify(ua []byte) (botclass.Agent, uint64) {
	if p.bots == nil || ua == nil {
		return noAgent, 0
	}
	ua = ua[:min(len(ua), maxUALen)]
	s := p.recent.slot(ua)
	if s.set && bytes.Equal(ua, s.ua) {
		p.recent.hits++
		return s.agent, s.digest
	}
	s.agent, s.digest = p.bots.LookupAgent(ua)
	s.set = true
	s.ua = append(s.ua[:0], ua...)
	return s.agent, s.digest
}

// noAgent is the agent of a line without a user agent: a person, every
// family unknown.
var noAgent = botclass.Agent{Class: botclass.Person}

// BotCacheStats returns how many user agents this Parser's classification
// cache answered (hits: those the table of recent user agents in front of
// it answered included)
// and how many it classified (misses); both 0 for a format without a user
// agent.
func (p *Parser) BotCacheStats() (hits, misses uint64) {
	if p.bots == nil {
		return 0, 0
	}
	hits, misses = p.bots.Stats()
	return hits + p.recent.hits, misses
}
