package referrer

// Channel is the kind of place a hit came from. The set is closed: every
// hit gets exactly one of the NumChannels values.
type Channel uint8

// The channels, in a fixed order (stored values: never reorder, only
// append before NumChannels).
const (
	Direct   Channel = iota // no referrer: typed, bookmarked, an app or a mail client, or stripped
	Internal                // a page of the site itself (New's self names)
	Search                  // a search engine
	Social                  // a social network, messenger or forum
	Email                   // a webmail or a mail app
	AI                      // an AI assistant or AI search
	Referral                // any other site or app
	Spam                    // a referrer-spam host
	Other                   // not a URL logtally can take a host from ("(invalid)")
	NumChannels
)

var channelNames = [NumChannels]string{"direct", "internal", "search", "social", "email", "ai", "referral", "spam", "other"}

// String returns the channel's name ("direct", "search"...), or
// "channel(n)" for a value outside the set.
func (c Channel) String() string {
	if c < NumChannels {
		return channelNames[c]
	}
	return "channel(" + itoa(int(c)) + ")"
}

// ParseChannel returns the channel named s (as String writes it).
func ParseChannel(s string) (Channel, bool) {
	for c, n := range channelNames {
		if n == s {
			return Channel(c), true
		}
	}
	return 0, false
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
