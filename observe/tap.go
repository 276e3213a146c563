package observe

import (
	"cmp"
	"context"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// maxAttrLen bounds each attribute value a Problem keeps.
const maxAttrLen = 300

// contentKeys are attribute names (the last part of a group-qualified
// key) a Tap never keeps: they could carry what logtally read from a file
// (a line, its prefix), which may be anything the daemon can read. No
// WARN record should carry one (the aggregator logs a malformed line's
// reason, file and offset, and its first bytes only at debug level); this
// is the second lock, since /status is readable by any local user.
var contentKeys = map[string]bool{"line": true, "prefix": true, "data": true}

// maxComponents bounds the components a Tap keeps a Problem for.
const maxComponents = 32

// Problem is the last warning or error a component logged.
type Problem struct {
	Time      time.Time `json:"time"`
	Level     string    `json:"level"`
	Component string    `json:"component"`
	Message   string    `json:"message"`
	// Attrs are the record's attributes (group-qualified keys, values cut
	// at 300 bytes), "component" and "instance" left out, and those named
	// "line", "prefix" or "data" dropped (they could hold file contents).
	Attrs map[string]string `json:"attrs,omitempty"`
}

// Tap is a slog.Handler that hands every record on to another handler and
// keeps, per component (the "component" attribute; "logtally" without
// one), the last record at WARN or above, for /status. It keeps those
// even when the handler it wraps is set to a higher level.
type Tap struct {
	next   slog.Handler
	attrs  []slog.Attr // from WithAttrs, keys group-qualified
	prefix string      // open groups, "a.b."
	kept   *kept
}

type kept struct {
	mu   sync.Mutex
	last map[string]Problem
}

// NewTap returns a Tap in front of next.
func NewTap(next slog.Handler) *Tap {
	return &Tap{next: next, kept: &kept{last: map[string]Problem{}}}
}

// Enabled implements slog.Handler.
func (t *Tap) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn || t.next.Enabled(ctx, l)
}

// Handle implements slog.Handler.
func (t *Tap) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		t.keep(r)
	}
	if !t.next.Enabled(ctx, r.Level) {
		return nil
	}
	return t.next.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (t *Tap) WithAttrs(as []slog.Attr) slog.Handler {
	c := *t
	c.next = t.next.WithAttrs(as)
	c.attrs = slices.Clip(t.attrs)
	for _, a := range as {
		c.attrs = append(c.attrs, slog.Attr{Key: t.prefix + a.Key, Value: a.Value})
	}
	return &c
}

// WithGroup implements slog.Handler.
func (t *Tap) WithGroup(name string) slog.Handler {
	if name == "" {
		return t
	}
	c := *t
	c.next = t.next.WithGroup(name)
	c.prefix = t.prefix + name + "."
	return &c
}

// Problems returns the kept records, newest first.
func (t *Tap) Problems() []Problem {
	t.kept.mu.Lock()
	defer t.kept.mu.Unlock()
	out := slices.Collect(maps.Values(t.kept.last))
	slices.SortFunc(out, func(a, b Problem) int { return cmp.Or(b.Time.Compare(a.Time), cmp.Compare(a.Component, b.Component)) })
	return out
}

func (t *Tap) keep(r slog.Record) {
	p := Problem{Time: r.Time.UTC(), Level: r.Level.String(), Message: r.Message, Attrs: map[string]string{}}
	var add func(prefix string, a slog.Attr)
	add = func(prefix string, a slog.Attr) {
		v := a.Value.Resolve()
		if v.Kind() == slog.KindGroup {
			if a.Key != "" {
				prefix += a.Key + "."
			}
			for _, g := range v.Group() {
				add(prefix, g)
			}
			return
		}
		switch key := prefix + a.Key; key {
		case "component":
			p.Component = v.String()
		case "instance", "":
		default:
			if contentKeys[key[strings.LastIndexByte(key, '.')+1:]] {
				return
			}
			s := v.String()
			if len(s) > maxAttrLen {
				s = s[:maxAttrLen] + "..."
			}
			p.Attrs[key] = s
		}
	}
	for _, a := range t.attrs {
		add("", a)
	}
	r.Attrs(func(a slog.Attr) bool {
		add(t.prefix, a)
		return true
	})
	p.Component = cmp.Or(p.Component, "logtally")
	if len(p.Attrs) == 0 {
		p.Attrs = nil
	}
	t.kept.mu.Lock()
	defer t.kept.mu.Unlock()
	if _, ok := t.kept.last[p.Component]; ok || len(t.kept.last) < maxComponents {
		t.kept.last[p.Component] = p
	}
}
