package referrer

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"

	"github.com/logtally/logtally/internal/pinned"
)

// The embedded lists: see data/VERSIONS and doc.go.
var (
	//go:embed data/ai.txt
	aiList string
	//go:embed data/email.txt
	emailList string
	//go:embed data/search.txt
	searchList string
	//go:embed data/social.txt
	socialList string
	//go:embed data/searchengine-and-social-list/hosts.txt
	upstreamHosts string
	//go:embed data/referrer-spam-list/spammers.txt
	spamHosts string
	//go:embed data/VERSIONS
	versions string
)

// entry is what the lists say of one normalised host.
type entry struct {
	host string  // the normalised host: the map's key, returned as Result.Host
	ch   Channel // Direct: no channel list names it
	spam bool    // the spam list names it
}

// tables are the embedded lists, compiled.
type tables struct {
	// exact holds every listed host, normalised (an app as
	// "android-app://package").
	exact map[string]entry
	// anyTLD holds the lists' "name.{}" entries by name (without the
	// top-level domain): google.{} matches google.de and google.co.uk.
	anyTLD map[string]Channel
	// Counts, for the tests: lines read per list, upstream lines skipped
	// (with a path or a placeholder inside) and hosts shadowed by an
	// earlier list.
	nOwn     [NumChannels]int
	nUp      [NumChannels]int
	nSpam    int
	skipped  []string
	shadowed []string
}

// ownLists are our lists, in the order they win.
var ownLists = []struct {
	file, text string
	ch         Channel
}{
	{"data/ai.txt", aiList, AI},
	{"data/email.txt", emailList, Email},
	{"data/search.txt", searchList, Search},
	{"data/social.txt", socialList, Social},
}

// upstreamOrder is the order the upstream channels win in when a host is
// in more than one of its files. Matomo's search list names sites
// searched through a query parameter: ChatGPT, Perplexity and You.com
// (also in its AI list) and facebook.com (also in its social list).
var upstreamOrder = []Channel{AI, Social, Search}

var embedded = sync.OnceValues(compileTables)

// defaultTables are the embedded lists; they parse (TestEmbeddedData).
var defaultTables = sync.OnceValue(func() *tables {
	t, err := embedded()
	if err != nil {
		panic(fmt.Sprintf("referrer: the embedded lists: %v", err)) // TestEmbeddedData
	}
	return t
})

// normalise returns the normalised form of a list's host (written as a
// referrer's host is: www. folded, lower-cased), or false.
func normalise(h string) (string, kind, bool) {
	var buf [keyMax]byte
	ref := h
	if !strings.HasPrefix(h, appPrefix) {
		ref = "http://" + h
	}
	s, e, k := parseHost([]byte(ref), &buf)
	// A plain host: no path, userinfo, escape or port (an IPv6
	// address's colons inside its brackets).
	plain := strings.TrimSuffix(h, ".")
	if strings.HasPrefix(plain, "[") && strings.HasSuffix(plain, "]") {
		plain = plain[1 : len(plain)-1]
		plain = strings.ReplaceAll(plain, ":", "")
	}
	if k == kindInvalid || k != kindApp && strings.ContainsAny(plain, "/?#@:%[]") {
		return "", kindInvalid, false
	}
	return string(buf[s:e]), k, true
}

func compileTables() (*tables, error) {
	t := &tables{exact: map[string]entry{}, anyTLD: map[string]Channel{}}
	for _, o := range ownLists {
		hosts, err := pinned.OwnList(o.file, o.text)
		if err != nil {
			return nil, err
		}
		for i, h := range hosts {
			where := fmt.Sprintf("%s: entry %d", o.file, i+1)
			if skip, err := t.add(h, o.ch, where); err != nil || skip {
				return nil, fmt.Errorf("%s: not a host, name.{} or android-app://package", where)
			}
			t.nOwn[o.ch]++
		}
	}

	// Upstream: host TAB channel.
	type up struct {
		host string
		ch   Channel
		line int
	}
	var ups []up
	for i, line := range strings.Split(strings.TrimSuffix(upstreamHosts, "\n"), "\n") {
		h, c, ok := strings.Cut(line, "\t")
		ch, okc := ParseChannel(c)
		if !ok || !okc || h == "" || (ch != Search && ch != Social && ch != AI) {
			return nil, fmt.Errorf("data/searchengine-and-social-list/hosts.txt:%d: want a host, a TAB and search, social or ai", i+1)
		}
		ups = append(ups, up{h, ch, i + 1})
		t.nUp[ch]++
	}
	for _, ch := range upstreamOrder {
		for _, u := range ups {
			if u.ch != ch {
				continue
			}
			where := fmt.Sprintf("data/searchengine-and-social-list/hosts.txt:%d", u.line)
			skip, err := t.add(u.host, ch, where)
			if err != nil {
				return nil, err
			}
			if skip {
				t.skipped = append(t.skipped, where+": "+u.host)
			}
		}
	}

	for i, h := range strings.Split(strings.TrimSuffix(spamHosts, "\n"), "\n") {
		key, k, ok := normalise(h)
		if !ok || k != kindName {
			return nil, fmt.Errorf("data/referrer-spam-list/spammers.txt:%d: not a host", i+1)
		}
		t.nSpam++
		e := t.exact[key]
		e.host, e.spam = key, true
		t.exact[key] = e
	}
	return t, nil
}

// add puts a channel list's entry in the tables: a host (its subdomains
// match too; "{}.name" is name), "name.{}" (name under any top-level
// domain) or android-app://package. An entry already there keeps its
// channel (shadowed records a different one). It returns skip for an
// entry it cannot use: with a path, or a "{}" elsewhere.
func (t *tables) add(h string, ch Channel, where string) (skip bool, err error) {
	h = strings.TrimPrefix(h, "{}.") // {}.bing.com: bing.com's subdomains match anyway
	if !strings.HasPrefix(h, appPrefix) && strings.Contains(h, "/") || strings.Contains(strings.TrimSuffix(h, ".{}"), "{}") {
		return true, nil
	}
	if base, ok := strings.CutSuffix(h, ".{}"); ok {
		key, k, ok := normalise(base)
		if !ok || k != kindName {
			return false, fmt.Errorf("%s: not a host", where)
		}
		key = strings.TrimPrefix(key, "www.") // www.zapmetasearch.{}: a single label left
		if was, dup := t.anyTLD[key]; dup {
			if was != ch {
				t.shadowed = append(t.shadowed, where+": "+key+".{} is already "+was.String())
			}
			return false, nil
		}
		t.anyTLD[key] = ch
		return false, nil
	}
	key, _, ok := normalise(h)
	if !ok {
		return false, fmt.Errorf("%s: not a host", where)
	}
	if e, ok := t.exact[key]; ok && e.ch != Direct {
		if e.ch != ch {
			t.shadowed = append(t.shadowed, where+": "+key+" is already "+e.ch.String())
		}
		return false, nil
	}
	t.exact[key] = entry{host: key, ch: ch}
	return false, nil
}

// Version returns the upstream lists' names, commits and dates, from
// data/VERSIONS (pinned.Version): logtally version prints it.
func Version() string { return pinned.Version(versions) }
