package uafamily

// Browser is a browser family. The zero value is BrowserOther.
type Browser uint8

// The browser families.
const (
	BrowserOther    Browser = iota // a browser, app or client none of the others
	Chrome                         // Chrome and Chromium on every platform (CriOS on iOS, Android WebView)
	Edge                           // Microsoft Edge (EdgeHTML and Chromium: Edge/, Edg/, EdgA/, EdgiOS/)
	Firefox                        // Firefox on every platform (FxiOS on iOS)
	Safari                         // Safari and iOS WebKit views (Version/ and Safari/, no other browser's token)
	Opera                          // Opera, Opera Mini and Opera Mobile (OPR/, OPiOS/, Opera)
	SamsungInternet                // Samsung Internet (SamsungBrowser/)
	Yandex                         // Yandex Browser (YaBrowser/)
	UCBrowser                      // UC Browser (UCBrowser/, UCWEB)
	IE                             // Internet Explorer (MSIE, Trident/, IEMobile)
	BrowserBot                     // a bot: set by the caller for any bot class, never by Parse
	NumBrowsers
)

var browserNames = [NumBrowsers]string{"other", "Chrome", "Edge", "Firefox", "Safari", "Opera", "Samsung Internet", "Yandex", "UC Browser", "IE", "(bot)"}

// String returns the family's name ("Chrome", "Samsung Internet",
// "other", "(bot)"...): a constant.
func (b Browser) String() string {
	if b < NumBrowsers {
		return browserNames[b]
	}
	return "other"
}

// OS is an operating-system family. The zero value is OSOther.
type OS uint8

// The OS families.
const (
	OSOther  OS = iota // any other (BSDs, KaiOS, Tizen, webOS, Windows Phone, BlackBerry, Symbian...) or none said
	Windows            // Windows (any version: see Caveats)
	MacOS              // macOS (and iPads in desktop mode: see Caveats)
	IOS                // iOS (iPhone, iPod)
	IPadOS             // an iPad that says so ("iPad; CPU OS ...")
	Android            // Android (not Android TV boxes' other OS names)
	Linux              // desktop Linux distributions
	ChromeOS           // ChromeOS (CrOS)
	OSBot              // a bot: set by the caller, never by Parse
	NumOSes
)

var osNames = [NumOSes]string{"other", "Windows", "macOS", "iOS", "iPadOS", "Android", "Linux", "ChromeOS", "(bot)"}

// String returns the family's name ("Windows", "macOS", "iOS"...): a
// constant.
func (o OS) String() string {
	if o < NumOSes {
		return osNames[o]
	}
	return "other"
}

// Device is a device type. The zero value is DeviceOther.
type Device uint8

// The device types.
const (
	DeviceOther Device = iota // TV, console, watch, set-top box, or not told
	Desktop                   // a desktop or laptop (Windows, macOS, Linux, ChromeOS without a mobile token)
	Mobile                    // a phone
	Tablet                    // a tablet
	DeviceBot                 // a bot: set by the caller, never by Parse
	NumDevices
)

var deviceNames = [NumDevices]string{"other", "desktop", "mobile", "tablet", "(bot)"}

// String returns the type's name ("desktop", "mobile", "tablet", "other",
// "(bot)"): a constant.
func (d Device) String() string {
	if d < NumDevices {
		return deviceNames[d]
	}
	return "other"
}

// Families are a user agent's browser family, OS family and device type.
// The zero value is other, other, other.
type Families struct {
	Browser Browser
	OS      OS
	Device  Device
}

// Bot is the families every bot gets, whatever its user agent says
// (Googlebot's smartphone agent claims Android and Chrome): (bot), (bot),
// (bot), so that each hit has one value in each dimension.
var Bot = Families{BrowserBot, OSBot, DeviceBot}
