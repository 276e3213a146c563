package botclass

import "github.com/logtally/logtally/uafamily"

// Agent is everything botclass tells of a user agent: its class, the
// crawler the lists name (for bots), and its browser, OS and device
// families (uafamily; the (bot) values for every class but Person). Its
// strings are the tables' own: an Agent costs no allocation.
type Agent struct {
	Class Class
	// Crawler is the named bot (see Crawler), in the lists' table (never
	// nil; do not modify): empty for people, "(other <class>)" for a bot
	// no list names. A pointer keeps Agent at 16 bytes.
	*Crawler
	uafamily.Families
}

// Agent returns everything botclass tells of ua (see Agent). It
// allocates nothing.
func (r *Rules) Agent(ua []byte) Agent {
	cl, id := r.classify(ua)
	return r.agent(cl, id, families(cl, ua))
}

// families are ua's families: the (bot) values for any bot class.
func families(cl Class, ua []byte) uafamily.Families {
	if cl != Person {
		return uafamily.Bot
	}
	return uafamily.Parse(ua)
}

func (r *Rules) agent(cl Class, id uint16, f uafamily.Families) Agent {
	return Agent{Class: cl, Crawler: &r.l.crawlers[id], Families: f}
}
