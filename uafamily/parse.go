package uafamily

import "bytes"

// tok is a product token or marker and the value it gives.
type tok[T any] struct {
	s string
	v T
}

func t[T any](s string, v T) tok[T] { return tok[T]{s, v} }

// browsers are the browser tokens in the order browsers identify: a
// browser built on Chromium sends Chrome/ and Safari/ after its own token,
// and apps with a built-in browser (Facebook, Instagram, WeChat...) add
// theirs, so the specific tokens come first and Chrome/ and Safari/ last.
var browsers = []tok[Browser]{
	// Apps and browsers we do not count apart, which also send Chrome/,
	// Firefox/ or Safari/: other, before those tokens are looked at.
	t("FBAN/", BrowserOther), t("FBAV/", BrowserOther), t("Instagram", BrowserOther),
	t("MicroMessenger/", BrowserOther), t(" Line/", BrowserOther), t("Snapchat", BrowserOther),
	t("Pinterest", BrowserOther), t("GSA/", BrowserOther), t("DuckDuckGo/", BrowserOther),
	t("Vivaldi/", BrowserOther), t("Whale/", BrowserOther), t("QQBrowser", BrowserOther),
	t("MiuiBrowser/", BrowserOther), t("HuaweiBrowser/", BrowserOther), t("HeyTapBrowser/", BrowserOther),
	t("Puffin/", BrowserOther), t("Silk/", BrowserOther), t("SeaMonkey/", BrowserOther),
	t("PaleMoon/", BrowserOther), t("Waterfox/", BrowserOther), t("Brave", BrowserOther),
	t("Electron/", BrowserOther), t("Iron/", BrowserOther), t("Coc Coc", BrowserOther),
	t("coc_coc_browser/", BrowserOther), t("Sleipnir", BrowserOther), t("Maxthon", BrowserOther),
	t("Outlook", BrowserOther), t("NetFront", BrowserOther), t("Dolphin", BrowserOther),

	t("Edg/", Edge), t("EdgA/", Edge), t("EdgiOS/", Edge), t("Edge/", Edge),
	t("OPR/", Opera), t("OPiOS/", Opera), t("OPT/", Opera), t("Opera", Opera),
	t("SamsungBrowser/", SamsungInternet),
	t("YaBrowser/", Yandex),
	t("UCBrowser", UCBrowser), t("UCWEB", UCBrowser), t("UBrowser/", UCBrowser),
	t("MSIE ", IE), t("Trident/", IE), t("IEMobile", IE),
	t("FxiOS/", Firefox), t("Firefox/", Firefox),
	t("CriOS/", Chrome), t("Chrome/", Chrome), t("Chromium/", Chrome),
}

// oses are the OS markers, most specific first: iPhones say "like Mac OS
// X", Android and webOS say Linux, Windows Phone says Windows.
var oses = []tok[OS]{
	t("Windows Phone", OSOther), t("Windows Mobile", OSOther), t("Windows CE", OSOther),
	t("iPad", IPadOS), t("iPhone", IOS), t("iPod", IOS), t("iPh OS", IOS),
	t("CrOS", ChromeOS),
	t("Tizen", OSOther), t("Web0S", OSOther), t("webOS", OSOther), t("hpwOS", OSOther), t("KAIOS", OSOther),
	t("KaiOS", OSOther), t("BlackBerry", OSOther), t("BB10", OSOther), t("Symbian", OSOther),
	t("HbbTV", OSOther), t("NetCast", OSOther), t("NETTV", OSOther), t("GoogleTV", OSOther),
	t("Google TV", OSOther), t("Kindle/", OSOther), t("FreeBSD", OSOther), t("OpenBSD", OSOther),
	t("Android", Android), t("Adr ", Android), t("Silk/", Android), t("Quest", Android),
	t("Windows", Windows),
	t("Macintosh", MacOS), t("Mac OS X", MacOS), t("Mac_PowerPC", MacOS),
	t("Linux", Linux), t("Ubuntu", Linux), t("Fedora", Linux),
	// Apple's network library, in the agents of apps: an iPhone's unless
	// it names a Mac's processor or model.
	t("(x86_64)", MacOS), t("(i386)", MacOS), t("(MacBook", MacOS), t("Darwin/", IOS),
}

// devices are the device markers, in order: TVs and consoles first (their
// agents also say Linux, Android or Windows), then tablets and phones,
// then the desktop systems.
var devices = []tok[Device]{
	t("SMART-TV", DeviceOther), t("SmartTV", DeviceOther), t("Smart TV", DeviceOther), t("HbbTV", DeviceOther),
	t("NetCast", DeviceOther), t("Web0S", DeviceOther), t("webOS.TV", DeviceOther), t("CrKey", DeviceOther),
	t("BRAVIA", DeviceOther), t("PlayStation", DeviceOther), t("Xbox", DeviceOther), t("Nintendo", DeviceOther),
	t("GoogleTV", DeviceOther), t("Android TV", DeviceOther), t("AppleTV", DeviceOther), t("Roku", DeviceOther),
	t("; AFT", DeviceOther), t("Inettv", DeviceOther), t("DTV", DeviceOther), t("watchOS", DeviceOther),
	t("iPad", Tablet), t("iPhone", Mobile), t("iPod", Mobile),
	t("Tablet PC", Desktop), t("Tablet", Tablet), t("Kindle", Tablet), t("Silk/", Tablet), t("PlayBook", Tablet),
	t("Mobi", Mobile), t("Windows Phone", Mobile), t("Opera Mini", Mobile), t("BlackBerry", Mobile),
	t("BB10", Mobile), t("Symbian", Mobile), t("KAIOS", Mobile), t("MIDP", Mobile), t("UP.Browser", Mobile),
	t("Android", Tablet), // Android without "Mobile": Chrome's rule for tablets
	t("Windows", Desktop), t("Macintosh", Desktop), t("CrOS ", Desktop), t("X11", Desktop), t("Linux", Desktop),
}

// Markers Parse needs besides the lists.
const (
	markVersion = "Version/"
	markSafari  = "Safari/"
	markWebKit  = "AppleWebKit/"
	markMobile  = "Mobile/"
)

// Lists, in the table's numbering.
const (
	listBrowser = iota
	listOS
	listDevice
	listMark
	nLists
)

// entry is one token of the table: its list, its rank in the list (the
// first found wins) and its value.
type entry struct {
	s    string
	list uint8
	rank uint8
	v    uint8
}

// table holds every token, by a hash of its first two bytes, so that
// Parse finds them all in one pass over the user agent looking at only
// the few tokens that start with the two bytes at each position.
type table struct {
	start   [nBuckets + 1]uint16 // the tokens of bucket b: entries[start[b]:start[b+1]]
	entries []entry
}

const nBuckets = 1 << 12

func bucket(b0, b1 byte) int { return (int(b0)*61 + int(b1)) & (nBuckets - 1) }

var tab = func() *table {
	var all []entry
	add := func(list int, i int, s string, v uint8) {
		if i > 254 || len(s) < 2 {
			panic("uafamily: a list over 255 tokens, or a token under 2 bytes")
		}
		all = append(all, entry{s, uint8(list), uint8(i), v})
	}
	for i, k := range browsers {
		add(listBrowser, i, k.s, uint8(k.v))
	}
	for i, k := range oses {
		add(listOS, i, k.s, uint8(k.v))
	}
	for i, k := range devices {
		add(listDevice, i, k.s, uint8(k.v))
	}
	for i, m := range []string{markVersion, markSafari, markWebKit, markMobile} {
		add(listMark, i, m, 0)
	}
	tb := &table{}
	for b := range nBuckets {
		tb.start[b] = uint16(len(tb.entries))
		for _, e := range all {
			if bucket(e.s[0], e.s[1]) == b {
				tb.entries = append(tb.entries, e)
			}
		}
	}
	tb.start[nBuckets] = uint16(len(tb.entries))
	return tb
}()

// Parse returns the browser, OS and device families ua declares (the user
// agent as logged, without quotes). It allocates nothing. It never returns
// the (bot) values: the caller gives Bot to the agents botclass names.
func Parse(ua []byte) Families {
	const none = 255
	best := [nLists]uint8{none, none, none}
	val := [nLists]uint8{}
	var marks uint8 // bit i: mark i seen
	for i := 0; i+1 < len(ua); i++ {
		b := bucket(ua[i], ua[i+1])
		for _, e := range tab.entries[tab.start[b]:tab.start[b+1]] {
			if len(ua)-i < len(e.s) || string(ua[i:i+len(e.s)]) != e.s {
				continue
			}
			if e.list == listMark {
				marks |= 1 << e.rank
			} else if e.rank < best[e.list] {
				best[e.list], val[e.list] = e.rank, e.v
			}
		}
	}
	f := Families{OS: OS(val[listOS]), Device: Device(val[listDevice])}
	if best[listBrowser] != none {
		b := Browser(val[listBrowser])
		if (b == Chrome || b == Firefox || b == IE) && !plain(ua) {
			b = BrowserOther
		}
		f.Browser = b
		return f
	}
	apple := f.OS == MacOS || f.OS == IOS || f.OS == IPadOS
	const version, safari, webkit, mobile = 1 << 0, 1 << 1, 1 << 2, 1 << 3
	switch {
	case !apple || !plain(ua):
	case marks&(version|safari) == version|safari:
		// Safari: Version/ and Safari/ and none of the tokens above, on
		// an Apple system (Android's old stock browser, BlackBerry's and
		// others send the same).
		f.Browser = Safari
	case f.OS != MacOS && marks&(webkit|mobile) == webkit|mobile:
		// An iOS app's WebKit view: AppleWebKit/ and Mobile/, no Safari/.
		f.Browser = Safari
	}
	return f
}

// plain reports whether ua's words outside comments ("(...)", "[...]")
// are all the products Chrome, Firefox, Safari and Internet Explorer send
// (Mozilla/, AppleWebKit/, "like Gecko", Version/, Chrome/, Chromium/,
// CriOS/, Firefox/, FxiOS/, Mobile, Safari/, and Ubuntu/ of Ubuntu's
// builds): a browser built on one of them, an app's built-in browser or a
// crawler adds its own name ("... Safari/537.36 OpenWave/93.4",
// "OculusBrowser/36.6 Chrome/130", "FBAV/..."), and is not that browser.
func plain(ua []byte) bool {
	depth := 0
	start := -1
	for i := 0; i <= len(ua); i++ {
		c := byte(' ')
		if i < len(ua) {
			c = ua[i]
		}
		switch {
		case c == '(' || c == '[':
			if start >= 0 && !plainWord(ua[start:i]) {
				return false
			}
			start = -1
			depth++
		case c == ')' || c == ']':
			if depth > 0 {
				depth--
			}
		case depth > 0:
		case c == ' ' || c == ',' || c == ';':
			if start >= 0 && !plainWord(ua[start:i]) {
				return false
			}
			start = -1
		default:
			if start < 0 {
				start = i
			}
		}
	}
	return true
}

// plainWord reports whether w, a word outside comments, is one of plain's.
func plainWord(w []byte) bool {
	if i := bytes.IndexByte(w, '/'); i >= 0 {
		w = w[:i]
	}
	switch string(w) {
	case "Mozilla", "AppleWebKit", "Gecko", "like", "Version", "Chrome", "Chromium", "CriOS", "Firefox", "FxiOS", "Mobile", "Safari", "Ubuntu":
		return true
	}
	return false
}
