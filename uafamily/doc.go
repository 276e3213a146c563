// Package uafamily tells a user agent's browser family, OS family and
// device type (Parse), from the product tokens browsers send, looked for
// in a fixed order. The values are small closed sets whose names are
// constants (String): every hit gets one value in each dimension.
//
//   - Browser: Chrome, Edge, Firefox, Safari, Opera, Samsung Internet,
//     Yandex, UC Browser, IE, other; (bot) for bots.
//   - OS: Windows, macOS, iOS, iPadOS, Android, Linux, ChromeOS, other;
//     (bot) for bots.
//   - Device: desktop, mobile, tablet, other (TV, console, watch, or not
//     told); (bot) for bots.
//
// Parse never returns (bot): the caller gives Bot (the three (bot) values)
// to every agent botclass puts in a bot class (search, ai, tool, bot,
// suspect), whatever it claims (Googlebot's smartphone agent says Android
// and Chrome), so that the families count people and the parts of each
// dimension sum to the views.
//
// # Order
//
// A browser built on Chromium sends Chrome/ and Safari/ after its own
// token, and apps with a built-in browser add theirs, so Parse looks for
// the specific tokens first (parse.go, browsers): apps and browsers we do
// not count apart (Facebook's FBAN/FBAV, Instagram, WeChat, Vivaldi,
// Whale, QQ, MIUI, Huawei, Silk...: other), then Edg/ Edge/ EdgA/ EdgiOS/,
// OPR/ OPiOS/ Opera, SamsungBrowser/, YaBrowser/, UCBrowser UCWEB, MSIE
// Trident/ IEMobile, FxiOS/ Firefox/, CriOS/ Chrome/. Chrome, Firefox and
// IE are kept only when nothing outside the agent's comments names
// another product (plain: "... Safari/537.36 OpenWave/93.4" or
// "OculusBrowser/36 Chrome/130" is other). Safari needs Version/ and
// Safari/ on an Apple OS and no other token (or, on iOS, AppleWebKit/ and
// Mobile/ without Safari/: an app's WebKit view, which is also what Safari
// sends in apps). The OS markers go from specific to general (iPhones say
// "like Mac OS X", Android and webOS say Linux, Windows Phone says
// Windows); the device markers put TVs and consoles first, then iPad,
// iPhone, Tablet, Kindle, Mobi, and Android without "Mobile" is a tablet
// (Chrome's rule), Windows, Macintosh, CrOS, X11 and Linux a desktop.
//
// All tokens are found in one pass over the user agent (a table by the
// hash of their first two bytes); Parse allocates nothing.
//
// # Choice
//
// Three implementations were compared (uafamily/compare, a module of its
// own so that the libraries compared are not logtally's dependencies) on
// uap-core's test agents (testdata/uap-core: github.com/ua-parser/uap-core
// at the commit VERSIONS names, Apache 2.0; the uap-core families mapped to
// ours by internal/uapcore; declared bots left out) and on the 558
// distinct agents of testdata/apache_combined_real.log for the cost of a
// miss (per agent, and as a ratio to botclass's Classify, today's miss,
// measured in the same loop; ranges of runs on a quiet and on a loaded
// shared 2-core machine):
//
//	implementation                 browser  OS     device  ns/agent           × Classify   allocs/agent
//	uafamily (this table)          95.5%    92.2%  94.4%   600 (quiet)        1.2-1.5      0
//	medama-io/go-useragent v1.2.5  73.9%    49.0%  43.3%   640-740 (quiet)    1.4-1.7      0
//	ua-parser/uap-go (2026-05-29)  91.5%    98.9%  100%    1.6-2.6 ms (quiet) 1,370-3,700  38
//
// (Shares of 1,324 browser, 463 OS and 252 device agents; the device
// agents are those whose uap-core device family tells the type: iPhone,
// iPad, Kindle, TVs, generic phones and tablets.) uap-go is the reference
// (its regexes produce the labels) but costs 2 ms and 38 allocations per
// new agent: a client sending random user agents would make the parser
// spend 2 ms a line. medama-io is as cheap as this table but misses most
// of the long tail (it calls any WebKit agent Safari and most unknown
// systems other). This table is as cheap, allocates nothing and adds no
// dependency.
//
// # Caveats
//
//   - A client can send any user agent: the families say what it
//     declares.
//   - User-agent reduction: Chrome and Edge freeze the platform part, so
//     Windows 11 sends "Windows NT 10.0" and is counted as Windows (no
//     version is kept anyway), macOS's version is frozen at 10_15_7, and
//     Android's model is "K". Client Hints (Sec-CH-UA-*), which carry the
//     truth, are not in access logs.
//   - iPadOS 13 and later sends a Mac's user agent by default ("Macintosh;
//     Intel Mac OS X"): those iPads are counted as macOS desktop. IPadOS is
//     only the iPads that say iPad (older iPadOS, or desktop mode off).
//   - A tablet whose browser sends "Mobile" is counted as a phone; an
//     Android phone whose browser omits it as a tablet.
//   - uap-core's test agents are mostly the long tail (1,203 of the 1,324
//     browser agents are "other" here), and uap-core counts iOS apps'
//     WebKit views as Safari where the apps name themselves (other here):
//     the floors TestUAPCoreAccuracy sets are what this table reaches, not
//     a measure of real traffic. Android's old stock browser ("Version/4.0
//     ... Mobile Safari", no Chrome/) is other, as uap-core has it.
//   - The token lists are ours, in parse.go, edited by hand: a new browser
//     that sends only Chrome/ and Safari/ (Brave, Arc) is Chrome.
package uafamily
