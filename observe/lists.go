package observe

import (
	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/geo"
	"github.com/logtally/logtally/referrer"
)

// List is a pinned data list built into logtally: what it is for and its
// upstream lists' versions (each one's name, commit and commit date, as
// its package describes them).
type List struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Lists returns the pinned data lists built in, in a fixed order: the
// bot lists (botclass), the referrer lists (referrer), the hosting
// networks (geo). /status and logtally version show them.
func Lists() []List {
	return []List{
		{"bot lists", botclass.Version()},
		{"referrer lists", referrer.Version()},
		{"hosting networks", geo.HostingVersion()},
	}
}
