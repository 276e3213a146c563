package bucket

// Tails: the documents that hold the cold pages of a site and period,
// one entry per page, so that a page seen a few times a day does not cost
// a bucket of its own (docs/buckets.md, "Hot and cold pages").

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/logtally/logtally/measure"
)

// A tail document is a bucket of its level whose page is a marker,
// "~<shard>" (TailPage): pages start with "/" or are "(other)", never
// "~", so its id, "<time>/<site>~<shard>", is no page's, and no other
// tail's (the shard is the digits after the last "~"). It has the
// level's shard-key fields, so it lives in the level's collection under
// its index, shard key, retention and expiry, and one find of a site's
// range returns its page buckets and its tails together.
//
//	minute  {_id: "YYYYMMDDhhmm/<site>~<w>", site, page: "~<w>", timestamp,
//	         pages: {<key>: <cell>}, applied}
//	daily   {_id: "YYYYMMDD/<site>~<k>", metadata: {date, site, page: "~<k>"},
//	         pages: {<key>: {"<hour>": <cell>}}, applied}
//	monthly {_id: "YYYYMM/<site>~<k>", metadata: {date, site, page: "~<k>"},
//	         pages: {<key>: {"<day>": <cell>}}, applied}
//
// <key> is the page as a field name (PageKey). A cell holds, at the
// level's measure grain (a minute, an hour, a day: what query reads at
// each step), the views ("v") and every measure not zero, by its short
// code (TailCode): {v: 3, "2": 3, b: 10240}. Counts are int32 while they
// fit, bytes and microseconds int64, as in the page buckets; only the
// counters that have counts are present.
//
// Every tail also holds size (FieldSize, NumberLong), after pages: an
// upper bound of the bytes its entries and its applied map hold. Each
// update adds to it what it may add to the document (Growth: its entries
// as if every one were new, and its guard's entry), and, when the writer
// bounds the tail (Limit), applies only while the sum stays within the
// bound (Update). A tail only grows: a tail refused an update for want
// of room refuses that update for good, which is what lets a writer send
// those entries elsewhere exactly once (a spill, below).
//
// A spill holds the entries of one batch of one writer that its tail
// could not take (full, or more than one update should carry): a tail
// document like the others, in the same collection with the same
// fields, whose marker is "~<shard>.<writer>.<batch>.<part>" (SpillPage)
// and which is inserted whole once and never updated. A reader takes a
// spill as it takes a tail (TailShard accepts both markers), so a page's
// counts are its bucket's plus its entries in its site's tails and
// spills.

// TailMarker starts the page field of a tail document (and of a plan).
const TailMarker = "~"

// FieldPages holds a tail's entries, one per page.
const FieldPages = "pages"

// FieldSize holds a tail's size: an upper bound of the bytes of its
// entries and applied map (see above).
const FieldSize = "size"

// TailPage returns the page field of shard's tail document: "~<shard>".
func TailPage(shard int) string { return TailMarker + strconv.Itoa(shard) }

// TailShard returns the shard a page field names and whether it is a
// tail's ("~" and decimal digits, no leading zero but "~0") or a
// spill's (a tail's, then "." and three non-empty fields of decimal or
// lower-case hex digits separated by ".": SpillPage).
func TailShard(page string) (int, bool) {
	digits, ok := strings.CutPrefix(page, TailMarker)
	if !ok {
		return 0, false
	}
	if i := strings.IndexByte(digits, '.'); i >= 0 {
		var spill string
		digits, spill = digits[:i], digits[i+1:]
		fields := strings.Split(spill, ".")
		if len(fields) != 3 {
			return 0, false
		}
		for _, f := range fields {
			if f == "" || strings.Trim(f, "0123456789abcdef") != "" {
				return 0, false
			}
		}
	}
	if digits == "" || len(digits) > 6 || (len(digits) > 1 && digits[0] == '0') {
		return 0, false
	}
	n := 0
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// IsMarker reports whether a bucket's page field is a marker (a tail's or
// a plan's) rather than a page.
func IsMarker(page string) bool { return strings.HasPrefix(page, TailMarker) }

// tailCodes are the short field names of a cell, by measure.
var tailCodes = [measure.N]string{
	measure.Views:       "v",
	measure.Status2xx:   "2",
	measure.Status3xx:   "3",
	measure.Status4xx:   "4",
	measure.Status5xx:   "5",
	measure.StatusOther: "o",
	measure.BotSearch:   "bs",
	measure.BotAI:       "ba",
	measure.BotTool:     "bt",
	measure.BotOther:    "bo",
	measure.BotSuspect:  "bq",
	measure.Bytes:       "b",
	measure.RTSum:       "rs",
	measure.RTCount:     "rn",
	measure.RTMax:       "rm",
}

// TailCode returns measure m's field name in a tail's cell.
func TailCode(m measure.Index) string { return tailCodes[m] }

var tailMeasures = func() map[string]measure.Index {
	out := map[string]measure.Index{}
	for m, c := range tailCodes {
		out[c] = measure.Index(m)
	}
	return out
}()

// PageKey returns page as a field name: '%' as "%25", '.' as "%2E", '$'
// as "%24" and NUL as "%00" (a field name holds no NUL, and '.' and a
// leading '$' mean something in an update's path). It is one to one:
// PageOfKey inverts it.
func PageKey(page string) string {
	if !strings.ContainsAny(page, "%.$\x00") {
		return page
	}
	var b strings.Builder
	b.Grow(len(page) + 8)
	for i := 0; i < len(page); i++ {
		switch c := page[i]; c {
		case '%':
			b.WriteString("%25")
		case '.':
			b.WriteString("%2E")
		case '$':
			b.WriteString("%24")
		case 0:
			b.WriteString("%00")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// errPageKey is a tail entry's key that PageKey does not make.
var errPageKey = errors.New("not a page key")

// PageOfKey returns the page a tail entry's key names (PageKey's
// inverse).
func PageOfKey(key string) (string, error) {
	if !strings.Contains(key, "%") {
		return key, nil
	}
	var b strings.Builder
	b.Grow(len(key))
	for i := 0; i < len(key); i++ {
		if key[i] != '%' {
			b.WriteByte(key[i])
			continue
		}
		if i+2 >= len(key) {
			return "", fmt.Errorf("%w: %q", errPageKey, key)
		}
		switch key[i+1 : i+3] {
		case "25":
			b.WriteByte('%')
		case "2E":
			b.WriteByte('.')
		case "24":
			b.WriteByte('$')
		case "00":
			b.WriteByte(0)
		default:
			return "", fmt.Errorf("%w: %q", errPageKey, key)
		}
		i += 2
	}
	return b.String(), nil
}

// Tail is one tail document's share of a batch: its cold pages' cells.
type Tail struct {
	Level Level
	ID    string
	Site  string
	Shard int
	// Page is the document's marker: TailPage(Shard), or a spill's
	// (SpillPage).
	Page string
	// Limit, when not 0, bounds the document's size (FieldSize): Update
	// applies only where the size, with the update's Growth, stays
	// within it.
	Limit int64
	// Start and End bound the tail's period (Unix seconds, UTC).
	Start, End int64
	// Total is the views added, all pages together.
	Total   int64
	entries []tailEntry
	index   map[string]int // page → entries index
}

// tailEntry is one page's cells, by ascending slot.
type tailEntry struct {
	key   string // PageKey
	cells []slotMeasures
}

// NewTail returns the empty l tail of site and shard whose period holds
// sec.
func NewTail(l Level, site string, shard int, sec int64) Tail {
	t := Tail{Level: l, Site: site, Shard: shard, Page: TailPage(shard)}
	t.Start, t.End = l.Bounds(sec)
	t.ID = l.ID(t.Start, site, t.Page)
	return t
}

// Add adds the hits of v of page at sec, which lies in t's period. A
// page's hits arrive in time order.
func (t *Tail) Add(page string, sec int64, v *measure.Vector) {
	i, ok := t.index[page]
	if !ok {
		if t.index == nil {
			t.index = map[string]int{}
		}
		i = len(t.entries)
		t.index[page] = i
		t.entries = append(t.entries, tailEntry{key: PageKey(page)})
	}
	e := &t.entries[i]
	e.cells = bumpMeasures(e.cells, measureSlots[t.Level].measureIndex(sec-t.Start), v)
	t.Total += int64(v[measure.Views])
}

// Pages returns the number of pages t holds.
func (t *Tail) Pages() int { return len(t.entries) }

// cellPath returns the dotted path of code in slot of the entry key.
func (t *Tail) cellPath(key string, slot int, code string) string {
	if measureSlots[t.Level] == Whole {
		return FieldPages + "." + key + "." + code
	}
	return FieldPages + "." + key + "." + strconv.Itoa(slot) + "." + code
}

// Inc returns t's $inc document: every entry's cells, the views first.
func (t *Tail) Inc() bson.D {
	var inc bson.D
	for _, e := range t.entries {
		for _, c := range e.cells {
			for m := measure.Views; m < measure.N; m++ {
				if c.v[m] == 0 || m.IsMax() {
					continue
				}
				inc = append(inc, bson.E{Key: t.cellPath(e.key, c.slot, tailCodes[m]), Value: measureValue(m, c.v[m], true)})
			}
		}
	}
	return inc
}

// Max returns t's $max document (the maxima), nil when they are all 0.
func (t *Tail) Max() bson.D {
	var mx bson.D
	for _, e := range t.entries {
		for _, c := range e.cells {
			for m := measure.Views; m < measure.N; m++ {
				if c.v[m] != 0 && m.IsMax() {
					mx = append(mx, bson.E{Key: t.cellPath(e.key, c.slot, tailCodes[m]), Value: int64(c.v[m])})
				}
			}
		}
	}
	return mx
}

// AppendKey appends t's _id and shard-key fields (Level.AppendKey).
func (t *Tail) AppendKey(f bson.D) bson.D {
	return t.Level.AppendKey(f, t.ID, t.Site, t.Page, t.Start)
}

// Update returns the guarded update of t for the batch of guard g: one
// update per tail and batch (the guard is the document's), applied
// unless the document took that batch from that writer already, and,
// with a Limit, only while the document's size with the update's Growth
// stays within it: {<key>, <guard>, size: {$lte: Limit - Growth}}. It
// adds Growth to the size.
func (t *Tail) Update(g Guard) (filter, update bson.D) {
	filter = g.filter(t.AppendKey(make(bson.D, 0, 6)))
	growth := t.Growth(g)
	if t.Limit > 0 {
		filter = append(filter, bson.E{Key: FieldSize, Value: bson.D{{Key: "$lte", Value: t.Limit - growth}}})
	}
	inc := append(t.Inc(), bson.E{Key: FieldSize, Value: growth})
	return filter, guardedUpdate(inc, t.Max(), g)
}

// Zero returns t's empty document: its keys, no entry, size 0, no guard.
func (t *Tail) Zero() bson.D {
	doc := markerDoc(t.Level, t.ID, t.Site, t.Page, t.Start)
	return append(doc, bson.E{Key: FieldPages, Value: bson.D{}}, bson.E{Key: FieldSize, Value: int64(0)}, bson.E{Key: FieldApplied, Value: bson.D{}})
}

// PeriodEnd returns the end of t's period (Unix seconds).
func (t *Tail) PeriodEnd() int64 { return t.End }

// DocID returns t's _id.
func (t *Tail) DocID() string { return t.ID }

// markerDoc is the start of a tail's or a plan's document: its _id and
// the level's site, page and date fields.
func markerDoc(l Level, id, site, page string, start int64) bson.D {
	date := bson.NewDateTimeFromTime(time.Unix(start, 0).UTC())
	doc := make(bson.D, 0, 8)
	doc = append(doc, bson.E{Key: FieldID, Value: id})
	if l == Minute {
		return append(doc,
			bson.E{Key: FieldSite, Value: site},
			bson.E{Key: FieldPage, Value: page},
			bson.E{Key: FieldTimestamp, Value: date})
	}
	return append(doc, bson.E{Key: FieldMetadata, Value: bson.D{
		{Key: FieldDate, Value: date}, {Key: FieldSite, Value: site}, {Key: FieldPage, Value: page}}})
}

// TailCell is one cell of a tail read back: a page's measures in one
// slot of the tail's period.
type TailCell struct {
	Page string
	// From and To bound the slot (Unix seconds).
	From, To int64
	V        measure.Vector
}

// DecodeTail calls f with every cell of the l tail document doc (read
// whole, or projected to some of its pages). Start is the tail's period
// start (Level.Start). A field of the wrong type is an error naming it.
func (l Level) DecodeTail(doc bson.Raw, f func(c *TailCell)) error {
	start, err := l.Start(doc)
	if err != nil {
		return err
	}
	_, end := l.Bounds(start)
	pages, err := doc.LookupErr(FieldPages)
	if err != nil {
		return nil // an empty projection
	}
	entries, ok := pages.DocumentOK()
	if !ok {
		return fmt.Errorf("%s: a %s, not a document", FieldPages, pages.Type)
	}
	elems, err := entries.Elements()
	if err != nil {
		return fmt.Errorf("%s: %w", FieldPages, err)
	}
	var c TailCell
	for _, e := range elems {
		page, err := PageOfKey(e.Key())
		if err != nil {
			return fmt.Errorf("%s: %w", FieldPages, err)
		}
		body, ok := e.Value().DocumentOK()
		if !ok {
			return fmt.Errorf("%s.%s: not a document", FieldPages, e.Key())
		}
		s := measureSlots[l]
		if s == Whole {
			c = TailCell{Page: page, From: start, To: end}
			if err := decodeCell(body, &c.V); err != nil {
				return fmt.Errorf("%s.%s: %w", FieldPages, e.Key(), err)
			}
			f(&c)
			continue
		}
		slots, err := body.Elements()
		if err != nil {
			return fmt.Errorf("%s.%s: %w", FieldPages, e.Key(), err)
		}
		for _, sl := range slots {
			from, to, ok := s.span(start, end, sl.Key())
			cell, isDoc := sl.Value().DocumentOK()
			if !ok || !isDoc {
				return fmt.Errorf("%s.%s.%s: not a slot of the period", FieldPages, e.Key(), sl.Key())
			}
			c = TailCell{Page: page, From: from, To: to}
			if err := decodeCell(cell, &c.V); err != nil {
				return fmt.Errorf("%s.%s.%s: %w", FieldPages, e.Key(), sl.Key(), err)
			}
			f(&c)
		}
	}
	return nil
}

// decodeCell reads a cell's counters into v.
func decodeCell(cell bson.Raw, v *measure.Vector) error {
	elems, err := cell.Elements()
	if err != nil {
		return err
	}
	for _, e := range elems {
		m, ok := tailMeasures[e.Key()]
		if !ok {
			return fmt.Errorf("%s: no such measure", e.Key())
		}
		var n int64
		switch val := e.Value(); val.Type {
		case bson.TypeInt32:
			n = int64(val.Int32())
		case bson.TypeInt64:
			n = val.Int64()
		default:
			return fmt.Errorf("%s: a %s, not an integer", e.Key(), val.Type)
		}
		if n < 0 {
			return fmt.Errorf("%s: negative", e.Key())
		}
		v[m] = uint64(n)
	}
	return nil
}

// TailCounter returns the page and what the counter at the dotted path
// (as Counters names it: "pages.<key>.<slot>.<code>", "pages.<key>.<code>"
// in a minute tail) counts in the l tail [start, end). ok is false for a
// path that is none of a tail's counters.
func (l Level) TailCounter(start, end int64, path string) (page string, c CounterInfo, ok bool) {
	rest, ok := strings.CutPrefix(path, FieldPages+".")
	if !ok {
		return "", c, false
	}
	key, rest, ok := strings.Cut(rest, ".")
	if !ok {
		return "", c, false
	}
	page, err := PageOfKey(key)
	if err != nil {
		return "", c, false
	}
	s := measureSlots[l]
	code := rest
	c.From, c.To = start, end
	if s != Whole {
		var slot string
		slot, code, ok = strings.Cut(rest, ".")
		if !ok {
			return "", c, false
		}
		if c.From, c.To, ok = s.span(start, end, slot); !ok {
			return "", c, false
		}
	}
	c.Measure, ok = tailMeasures[code]
	return page, c, ok
}
