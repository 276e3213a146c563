// Counting the hits by dimension (package dims) from loggen's lists, and
// comparing them with the site days' sources.

package bucketcheck

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/logtally/logtally/bucket"
	"github.com/logtally/logtally/dims"
	"github.com/logtally/logtally/internal/loggen"
)

// Dims are the hits by dimension value per site day: the site day's id
// (bucket.SiteID), then each dimension's values and their hits.
type Dims map[string]*[dims.N]map[string]int64

// day returns site day id's values, made on first use.
func (d Dims) day(id string) *[dims.N]map[string]int64 {
	day := d[id]
	if day == nil {
		day = new([dims.N]map[string]int64)
		for dm := range day {
			day[dm] = map[string]int64{}
		}
		d[id] = day
	}
	return day
}

// add counts a hit of site day id under v.
func (d Dims) add(id string, v *dims.Values) {
	day := d.day(id)
	for dm := range dims.N {
		day[dm][v[dm]]++
	}
}

// merge adds o's counts to d.
func (d Dims) merge(o Dims) {
	for id, od := range o {
		day := d.day(id)
		for dm := range dims.N {
			for val, n := range od[dm] {
				day[dm][val] += n
			}
		}
	}
}

// unlisted is the value of a line whose kind of field (agent, referrer,
// client) is in none of loggen's lists: no daemon gives it, and
// CompareDims names the kind.
func unlisted(kind string) string { return unlistedPrefix + kind + ")" }

const unlistedPrefix = "(in no list of loggen: "

// fieldsOfDims are what a line says of its dimensions, as logged: nil
// for a field the line does not have (a common line's referer and agent).
type fieldsOfDims struct {
	client, ref, ua *string
}

// dimValues returns the values of a line of site in each dimension, from
// loggen's lists only: the referer's row of Referrers (ReferrerOf, the
// site's own host for a Self row), the client's network (NetworkOf; an
// address in none: unknown country and network), the agent's row of
// Agents. A line without a referer or agent (common) has them unknown; a
// field in no list, or a client that is no address, gets unlisted(kind).
func dimValues(site string, f fieldsOfDims) dims.Values {
	var v dims.Values
	for dm := range v {
		v[dm] = dims.Unknown
	}
	if f.ref != nil {
		if r, ok := loggen.ReferrerOf(*f.ref, site); ok {
			v[dims.Referrer], v[dims.Channel] = r.Host, r.Channel
		} else {
			v[dims.Referrer], v[dims.Channel] = unlisted("referrer"), unlisted("referrer")
		}
	}
	if f.client != nil {
		if a, err := netip.ParseAddr(*f.client); err != nil {
			v[dims.Country], v[dims.ASN] = unlisted("client"), unlisted("client")
		} else if n, ok := loggen.NetworkOf(a); ok {
			if n.Country != "" {
				v[dims.Country] = n.Country
			}
			if n.ASN != 0 {
				v[dims.ASN] = "AS" + strconv.FormatUint(uint64(n.ASN), 10) + " " + n.Org
			}
		}
	}
	if f.ua != nil {
		if a, ok := loggen.AgentOf(*f.ua); ok {
			v[dims.Browser], v[dims.OS], v[dims.Device], v[dims.Crawler] = a.Browser, a.OS, a.Device, a.Crawler
		} else {
			for _, dm := range []dims.Dim{dims.Browser, dims.OS, dims.Device, dims.Crawler} {
				v[dm] = unlisted("agent")
			}
		}
	}
	return v
}

// ReadDims reads the counts by dimension of every site day in db's site
// collection (default name) with bucket.SiteSources. A site day without
// any is there with no values.
func ReadDims(t testing.TB, db *mongo.Database) Dims {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cur, err := db.Collection(bucket.DefaultSiteCollection).Find(ctx, bson.D{})
	if err != nil {
		t.Fatalf("read %s: %v", bucket.DefaultSiteCollection, err)
	}
	var raws []bson.Raw
	if err := cur.All(ctx, &raws); err != nil {
		t.Fatalf("read %s: %v", bucket.DefaultSiteCollection, err)
	}
	d := Dims{}
	for _, raw := range raws {
		id, ok := raw.Lookup(bucket.FieldID).StringValueOK()
		if !ok {
			t.Fatalf("read %s: a document without a string id", bucket.DefaultSiteCollection)
		}
		src, err := bucket.SiteSources(raw)
		if err != nil {
			t.Fatalf("read %s: %s: %v", bucket.DefaultSiteCollection, id, err)
		}
		d[id] = &src
	}
	return d
}

// DimsResult is the outcome of CompareDims: per dimension, the hits
// missing from values (lost) and the hits too many (duplicated), summed
// over every value of every site day. A hit counted under a wrong value
// is one of each.
type DimsResult struct {
	Lost, Dup [dims.N]int64
	// Days and Values are the site days and the values (of every
	// dimension) compared.
	Days, Values int
}

// Exact reports whether every value of every dimension was exact.
func (r DimsResult) Exact() bool { return r.Lost == [dims.N]int64{} && r.Dup == [dims.N]int64{} }

// String formats the result for a test log.
func (r DimsResult) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d values of %d site days: ", r.Values, r.Days)
	for dm := range dims.N {
		if dm > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s lost %d duplicated %d", dims.Dim(dm), r.Lost[dm], r.Dup[dm])
	}
	return b.String()
}

// CompareDims reports (t.Errorf) every value of every dimension of every
// site day whose hits in got differ from want's, and the lines of want
// whose agent, referrer or client is in none of loggen's lists (whose
// values bucketcheck cannot know: named by their kind, never their
// content), and returns the hits lost and duplicated per dimension.
func CompareDims(t testing.TB, want, got Dims) DimsResult {
	t.Helper()
	var r DimsResult
	ids := slices.Sorted(maps.Keys(want))
	for id := range got {
		if want[id] == nil {
			ids = append(ids, id)
		}
	}
	empty := new([dims.N]map[string]int64)
	r.Days = len(ids)
	for _, id := range ids {
		w, g := want[id], got[id]
		if w == nil {
			w = empty
		}
		if g == nil {
			g = empty
		}
		for dm := range dims.N {
			for _, v := range slices.Sorted(maps.Keys(w[dm])) {
				if kind, ok := strings.CutPrefix(v, unlistedPrefix); ok {
					t.Errorf("site day %s: %d lines whose %s is in no list of loggen: their %s cannot be counted from the files",
						id, w[dm][v], strings.TrimSuffix(kind, ")"), dims.Dim(dm))
				}
			}
			vals := maps.Clone(w[dm])
			if vals == nil {
				vals = map[string]int64{}
			}
			maps.Copy(vals, g[dm])
			r.Values += len(vals)
			for _, v := range slices.Sorted(maps.Keys(vals)) {
				wn, gn := w[dm][v], g[dm][v]
				switch {
				case gn < wn:
					r.Lost[dm] += wn - gn
				case gn > wn:
					r.Dup[dm] += gn - wn
				default:
					continue
				}
				t.Errorf("site day %s: %s %q = %d, want %d", id, dims.Dim(dm), v, gn, wn)
			}
		}
	}
	return r
}
