package dims

// Dim is a dimension of where a site's traffic comes from. The set is
// closed; stored codes never change (Code).
type Dim uint8

// The dimensions, in a fixed order.
const (
	Referrer Dim = iota // the referrer's host (package referrer)
	Channel             // the referrer's channel: search, social, ai... (package referrer)
	Country             // the client address's country (package geo)
	ASN                 // the client address's network (package geo)
	Browser             // the user agent's browser family (package uafamily)
	OS                  // the user agent's operating system family (package uafamily)
	Device              // the user agent's device type (package uafamily)
	Crawler             // a bot's crawler by name (package botclass)
	N                   // the number of dimensions
)

// Values are a hit's value in each dimension.
type Values [N]string

// Set reports whether v holds a hit's values: a parser counting the
// dimensions sets each one (Unknown where it has none), one that does not
// leaves them all "".
func (v *Values) Set() bool { return v[0] != "" }

// Other is the value of the hits whose value was past a dimension's bound
// (Counter); Unknown the value of a hit with none ("": no referrer field,
// no country database...).
const (
	Other   = "(other)"
	Unknown = "(unknown)"
)

var (
	names = [N]string{"referrer", "channel", "country", "asn", "browser", "os", "device", "crawler"}
	codes = [N]string{"ref", "ch", "cc", "as", "br", "os", "dev", "bot"}
)

// String returns the dimension's name ("referrer", "channel", ...), as
// logtally query -by takes it; "dims(n)" outside the set.
func (d Dim) String() string {
	if d < N {
		return names[d]
	}
	return "dims(" + string(rune('0'+d%10)) + ")"
}

// Code returns the dimension's short field name in stored documents
// ("ref", "ch", ...).
func (d Dim) Code() string {
	if d < N {
		return codes[d]
	}
	return ""
}

// Parse returns the dimension named s (String's names).
func Parse(s string) (Dim, bool) {
	for d, n := range names {
		if n == s {
			return Dim(d), true
		}
	}
	return 0, false
}

// Limits are the values kept per site, day and dimension (Counter).
type Limits [N]int

// DefaultLimits keep the open dimensions' first DefaultValues values a
// site day (its referrer hosts, networks and crawlers), every country
// (250), and the closed sets whole (channels, browser, OS and device
// families).
var DefaultLimits = LimitsFor(DefaultValues)

// DefaultValues is the values of each open dimension a site day keeps by
// default.
const DefaultValues = 100

// LimitsFor returns the limits that keep values values of each open
// dimension (referrer, ASN, crawler) a site day, and the others'
// (countries, the closed sets) whole; DefaultLimits' when values <= 0.
func LimitsFor(values int) Limits {
	if values <= 0 {
		values = DefaultValues
	}
	return Limits{Referrer: values, Channel: 32, Country: 300, ASN: values, Browser: 32, OS: 32, Device: 32, Crawler: values}
}

// NoLimits keep every value by name: none is counted as Other (a
// verification's count of the files, compared with what every host kept).
var NoLimits = func() (l Limits) {
	for d := range l {
		l[d] = 1 << 30
	}
	return l
}()
