package uafamily

import "bytes"

// tok is a product token or marker and the value it gives.
type tok[T any] struct {
	s []byte
	v T
}

func t[T any](s string, v T) tok[T] { return tok[T]{[]byte(s), v} }

// first returns the value of the first token of toks found in ua.
func first[T any](ua []byte, toks []tok[T]) (T, bool) {
	for _, k := range toks {
		if bytes.Contains(ua, k.s) {
			return k.v, true
		}
	}
	var zero T
	return zero, false
}

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

var (
	version   = []byte("Version/")
	safari    = []byte("Safari/")
	appleWK   = []byte("AppleWebKit/")
	mobileTok = []byte("Mobile/")
)

// Parse returns the browser, OS and device families ua declares (the user
// agent as logged, without quotes). It allocates nothing. It never returns
// the (bot) values: the caller gives Bot to the agents botclass names.
func Parse(ua []byte) Families {
	var f Families
	os, _ := first(ua, oses)
	f.OS = os
	f.Device, _ = first(ua, devices)
	if b, ok := first(ua, browsers); ok {
		if (b == Chrome || b == Firefox || b == IE) && !plain(ua) {
			b = BrowserOther
		}
		f.Browser = b
		return f
	}
	// Safari: Version/ and Safari/ and none of the tokens above, on an
	// Apple system (Android's old stock browser, BlackBerry's and others
	// send the same).
	if (os == MacOS || os == IOS || os == IPadOS) && bytes.Contains(ua, safari) && bytes.Contains(ua, version) && plain(ua) {
		f.Browser = Safari
		return f
	}
	// An iOS app's WebKit view: AppleWebKit/ and Mobile/, no Safari/.
	if (os == IOS || os == IPadOS) && bytes.Contains(ua, appleWK) && bytes.Contains(ua, mobileTok) && plain(ua) {
		f.Browser = Safari
	}
	return f
}

// plain reports whether ua's words outside comments ("(...)", "[...]")
// are all the products Chrome, Firefox, Safari and Internet Explorer send
// (Mozilla/, AppleWebKit/, "like Gecko", Version/, Chrome/, Chromium/,
// CriOS/, Firefox/, FxiOS/, Mobile, Safari/, and Ubuntu/ of its builds): a browser built on one of them, an app's
// built-in browser or a crawler adds its own name ("... Safari/537.36
// OpenWave/93.4", "OculusBrowser/36.6 Chrome/130", "FBAV/..."), and is not
// that browser.
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
