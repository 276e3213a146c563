// Package uapcore reads uap-core's test agents (uafamily/testdata/uap-core)
// and maps uap-core's families to uafamily's, for uafamily's accuracy
// tests and the comparison of implementations (uafamily/compare).
package uapcore

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/logtally/logtally/uafamily"
)

// Case is one test case of uap-core: a user agent and the family
// uap-core's regexes give it (browser, OS or device, by file), and for
// devices the brand.
type Case struct {
	UA, Family, Brand string
}

// Read reads a uap-core test file (gunzipped if its name ends in .gz).
// The files are the simple YAML uap-core writes: "- user_agent_string:"
// starts a case, "family:" and "brand:" follow; values are single-quoted
// (” for '), double-quoted (Go-like escapes) or plain.
func Read(path string) ([]Case, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		r = z
	}
	var cases []Case
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		key, val, ok := strings.Cut(strings.TrimPrefix(line, "- "), ":")
		if !ok {
			continue
		}
		v, err := yamlScalar(strings.TrimSpace(val))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		switch key {
		case "user_agent_string":
			cases = append(cases, Case{UA: v})
		case "family":
			cases[len(cases)-1].Family = v
		case "brand":
			cases[len(cases)-1].Brand = v
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cases, nil
}

func yamlScalar(s string) (string, error) {
	switch {
	case strings.HasPrefix(s, "'"):
		if len(s) < 2 || !strings.HasSuffix(s, "'") {
			return "", fmt.Errorf("unterminated quoted value")
		}
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'"), nil
	case strings.HasPrefix(s, `"`):
		return strconv.Unquote(s)
	}
	return s, nil
}

// Browser maps a uap-core browser family to ours.
func Browser(fam string) uafamily.Browser {
	switch fam {
	case "Chrome", "Chrome Mobile", "Chrome Mobile iOS", "Chrome Mobile WebView", "Chromium", "Chrome Frame":
		return uafamily.Chrome
	case "Edge", "Edge Mobile":
		return uafamily.Edge
	case "Safari", "Mobile Safari", "Mobile Safari UI/WKWebView":
		return uafamily.Safari
	case "Samsung Internet":
		return uafamily.SamsungInternet
	case "Yandex Browser":
		return uafamily.Yandex
	case "UC Browser":
		return uafamily.UCBrowser
	case "IE", "IE Mobile":
		return uafamily.IE
	}
	switch {
	case strings.HasPrefix(fam, "Firefox"):
		return uafamily.Firefox // Firefox Mobile, Firefox iOS, Firefox Beta, Firefox (Minefield)...
	case strings.HasPrefix(fam, "Opera"):
		return uafamily.Opera // Opera Mini, Opera Mobile, Opera Tablet...
	}
	return uafamily.BrowserOther
}

// OS maps a uap-core OS family to ours; iOS is IOS (an iPad's agent
// may say IPadOS: Sets scores that as right).
func OS(fam string) uafamily.OS {
	switch fam {
	case "Windows Phone", "Windows Mobile", "Windows CE":
		return uafamily.OSOther
	case "Mac OS X", "Mac OS":
		return uafamily.MacOS
	case "iOS":
		return uafamily.IOS
	case "Android":
		return uafamily.Android
	case "Chrome OS":
		return uafamily.ChromeOS
	case "Linux", "Ubuntu", "Kubuntu", "Fedora", "Debian", "Gentoo", "Mandriva", "Red Hat", "Slackware", "SUSE", "Mint", "CentOS", "Arch Linux":
		return uafamily.Linux
	}
	if strings.HasPrefix(fam, "Windows") {
		return uafamily.Windows // Windows, Windows 10, Windows XP, Windows RT...
	}
	return uafamily.OSOther
}

// Device maps a uap-core device family and brand to our type, when the
// family tells it (ok false: a phone or tablet model uap-core names
// without saying which, or "Other").
func Device(fam, brand string) (uafamily.Device, bool) {
	switch fam {
	case "iPhone", "iPod", "iPod touch", "Generic Smartphone", "Generic Feature Phone":
		return uafamily.Mobile, true
	case "iPad", "Generic Tablet", "Kindle":
		return uafamily.Tablet, true
	case "Mac":
		return uafamily.Desktop, true
	case "HbbTV", "NetCast.TV", "NetCast.Media", "Inettv", "Smart TV", "Apple TV", "Chromecast", "PlayStation 3", "PlayStation 4", "Xbox", "Xbox One", "Nintendo Wii", "Nintendo WiiU":
		return uafamily.DeviceOther, true
	case "Spider":
		return uafamily.DeviceBot, true
	}
	return 0, false
}
