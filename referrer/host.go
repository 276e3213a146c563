package referrer

// Limits of a host name (RFC 1035 and RFC 1123, as text without the
// trailing dot).
const (
	maxHost  = 253
	maxLabel = 63
	// maxIPv6 is the longest IPv6 address as text (an IPv4-mapped one
	// written in full).
	maxIPv6 = 45
)

// appPrefix is how an Android app sends its package name as a referrer
// (Intent.EXTRA_REFERRER): android-app://com.google.android.gm/.
const appPrefix = "android-app://"

// keyMax is the room a normalised host needs: an app's prefix and package.
const keyMax = len(appPrefix) + maxHost + 1

// kind is what a referrer's host is.
type kind uint8

const (
	kindInvalid kind = iota
	kindName         // a domain name (or a single label)
	kindIP           // an IPv4 or a bracketed IPv6 literal: no parent domains
	kindApp          // android-app://package
)

// parseHost writes the normalised host of ref into buf and returns it as
// buf[s:e] with its kind (kindInvalid: ref is not an http(s) or
// android-app URL with a valid host; s and e are then 0). It allocates
// nothing. See doc.go for the rules.
func parseHost(ref []byte, buf *[keyMax]byte) (s, e int, k kind) {
	// scheme ":" "//"
	i := 0
	for ; i < len(ref) && ref[i] != ':'; i++ {
		c := ref[i]
		if !(isAlpha(c) || i > 0 && (isDigit(c) || c == '+' || c == '-' || c == '.')) {
			return 0, 0, kindInvalid
		}
	}
	if i == 0 || i+3 > len(ref) || ref[i+1] != '/' || ref[i+2] != '/' {
		return 0, 0, kindInvalid
	}
	scheme, rest := ref[:i], ref[i+3:]
	if (i == 4 || i == 5) && string(ref[:4]) == "http" && (i == 4 || ref[4] == 's') {
		if e, k := fastHost(rest, buf); k == kindName {
			return foldWWW(buf[:e]), e, k
		} else if k == kindIP {
			return 0, e, k
		}
	}
	end := len(rest)
	for j, c := range rest {
		if c == '/' || c == '?' || c == '#' {
			end = j
			break
		}
	}
	auth := rest[:end]
	switch {
	case equalFold(scheme, "http"), equalFold(scheme, "https"):
		return webHost(auth, buf)
	case equalFold(scheme, "android-app"):
		return appHost(auth, buf)
	}
	return 0, 0, kindInvalid
}

// appHost normalises an Android package name: "android-app://" and the
// package, lower-cased (package names are letters, digits and "_" in
// dot-separated parts).
func appHost(pkg []byte, buf *[keyMax]byte) (int, int, kind) {
	if len(pkg) == 0 || len(pkg) > maxHost {
		return 0, 0, kindInvalid
	}
	n := copy(buf[:], appPrefix)
	label := 0
	for _, c := range pkg {
		c = lower(c)
		switch {
		case c == '.':
			if label == 0 {
				return 0, 0, kindInvalid
			}
			label = 0
		case isAlpha(c) || isDigit(c) || c == '_':
			label++
		default:
			return 0, 0, kindInvalid
		}
		buf[n] = c
		n++
	}
	if label == 0 {
		return 0, 0, kindInvalid
	}
	return 0, n, kindApp
}

// webHost normalises the host of an http(s) URL's authority: userinfo and
// port dropped, %-escapes decoded, lower-cased, one trailing dot dropped,
// a leading "www." folded.
func webHost(auth []byte, buf *[keyMax]byte) (int, int, kind) {
	for j := len(auth) - 1; j >= 0; j-- {
		if auth[j] == '@' {
			auth = auth[j+1:]
			break
		}
	}
	if len(auth) > 0 && auth[0] == '[' {
		return ipv6Host(auth, buf)
	}
	for j, c := range auth {
		if c == ':' {
			if !isPort(auth[j+1:]) {
				return 0, 0, kindInvalid
			}
			auth = auth[:j]
			break
		}
	}
	n := 0
	for j := 0; j < len(auth); j++ {
		c := auth[j]
		if c == '%' {
			if j+2 >= len(auth) || !isHex(auth[j+1]) || !isHex(auth[j+2]) {
				return 0, 0, kindInvalid
			}
			c = unhex(auth[j+1])<<4 | unhex(auth[j+2])
			j += 2
		}
		c = lower(c)
		if !isHostByte(c) || n > maxHost { // room for one trailing dot
			return 0, 0, kindInvalid
		}
		buf[n] = c
		n++
	}
	if n > 0 && buf[n-1] == '.' {
		n--
	}
	if n == 0 || n > maxHost {
		return 0, 0, kindInvalid
	}
	// Labels: none empty, none over 63 bytes; is the last all digits (an
	// IPv4 address: no top-level domain is)?
	label, digits := 0, true
	for _, c := range buf[:n] {
		if c == '.' {
			if label == 0 {
				return 0, 0, kindInvalid
			}
			label, digits = 0, true
			continue
		}
		label++
		digits = digits && isDigit(c)
		if label > maxLabel {
			return 0, 0, kindInvalid
		}
	}
	if label == 0 {
		return 0, 0, kindInvalid
	}
	if digits {
		return 0, n, kindIP
	}
	return foldWWW(buf[:n]), n, kindName
}

// hostTab maps a byte to itself lower-cased if a host name may hold it,
// '.' to '.', and any other to 0.
var hostTab = func() (t [256]byte) {
	for c := range 256 {
		if isHostByte(byte(c)) {
			t[c] = lower(byte(c))
		}
	}
	return t
}()

// fastHost is webHost for the common case, in one pass: a host of
// letters, digits, "-", "_" and dots, no userinfo, no escape, maybe a
// port, then the end or a "/", "?" or "#". It returns the host's end in
// buf (before folding www.) and kindName or kindIP, or kindInvalid when
// it cannot tell (webHost then decides, from the start).
func fastHost(rest []byte, buf *[keyMax]byte) (int, kind) {
	n, label, digits := 0, 0, true
	j := 0
	for ; j < len(rest); j++ {
		c := hostTab[rest[j]]
		if c == 0 {
			break
		}
		if c == '.' {
			if label == 0 {
				return 0, kindInvalid
			}
			label, digits = 0, true
		} else {
			label++
			digits = digits && isDigit(c)
		}
		if n > maxHost || label > maxLabel {
			return 0, kindInvalid
		}
		buf[n] = c
		n++
	}
	if j < len(rest) && rest[j] == ':' {
		p := j + 1
		for j = p; j < len(rest) && isDigit(rest[j]); j++ {
		}
		if j-p > 5 {
			return 0, kindInvalid
		}
	}
	if j < len(rest) && rest[j] != '/' && rest[j] != '?' && rest[j] != '#' {
		return 0, kindInvalid
	}
	if n > 0 && buf[n-1] == '.' {
		// The trailing dot: the label before it must be there.
		n--
		if n == 0 || buf[n-1] == '.' {
			return 0, kindInvalid
		}
		label, digits = 1, true
		for k := n - 1; k >= 0 && buf[k] != '.'; k-- {
			digits = digits && isDigit(buf[k])
		}
	}
	if n == 0 || n > maxHost || label == 0 {
		return 0, kindInvalid
	}
	if digits {
		return n, kindIP
	}
	return n, kindName
}

// foldWWW returns where the host h starts once a leading "www." is
// folded: 4 if h is "www." and a name with a dot (www.example.org is
// example.org; www.localhost stays), else 0.
func foldWWW(h []byte) int {
	if len(h) > 4 && string(h[:4]) == "www." {
		for _, c := range h[4:] {
			if c == '.' {
				return 4
			}
		}
	}
	return 0
}

// ipv6Host normalises "[address]" or "[address]:port": the brackets kept,
// hex digits lower-cased. Zones ("%25eth0") are refused.
func ipv6Host(auth []byte, buf *[keyMax]byte) (int, int, kind) {
	end := -1
	for j, c := range auth {
		if c == ']' {
			end = j
			break
		}
	}
	if end < 3 || end-1 > maxIPv6 {
		return 0, 0, kindInvalid
	}
	if tail := auth[end+1:]; len(tail) > 0 && (tail[0] != ':' || !isPort(tail[1:])) {
		return 0, 0, kindInvalid
	}
	colons := 0
	buf[0] = '['
	n := 1
	for _, c := range auth[1:end] {
		c = lower(c)
		switch {
		case c == ':':
			colons++
		case isDigit(c), c >= 'a' && c <= 'f', c == '.':
		default:
			return 0, 0, kindInvalid
		}
		buf[n] = c
		n++
	}
	if colons < 2 {
		return 0, 0, kindInvalid
	}
	buf[n] = ']'
	return 0, n + 1, kindIP
}

// isPort: empty or up to 5 digits.
func isPort(p []byte) bool {
	if len(p) > 5 {
		return false
	}
	for _, c := range p {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// isHostByte: the bytes a normalised host name may hold. "_" is not in
// the host-name syntax but is in DNS names some sites use.
func isHostByte(c byte) bool {
	return isAlpha(c) || isDigit(c) || c == '-' || c == '.' || c == '_'
}

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isHex(c byte) bool   { return isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'f' }

func unhex(c byte) byte {
	if isDigit(c) {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// equalFold reports whether b is s (lower case) in any ASCII case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		if lower(b[i]) != s[i] {
			return false
		}
	}
	return true
}
