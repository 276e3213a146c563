package parser

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/logtally/logtally/botclass"
	"github.com/logtally/logtally/dims"
	"github.com/logtally/logtally/visitor"
)

// Hit is one parsed request. Its slices point into the line, into the
// Parser's scratch space or into the Parser's configuration; they are valid
// until the next Parse call on the same Parser and must not be modified.
// Copy what you keep.
type Hit struct {
	// Site is the configured site name, or the host from the line
	// (lowercase, port removed, mapped through the aliases).
	Site []byte
	// Page is the request path without query or fragment (unless
	// page.keep_query keeps some parameters), after the page rules: never
	// empty, starts with '/', valid UTF-8, at most MaxPageLen bytes.
	Page []byte
	// Time is the request time in Unix seconds (UTC).
	Time int64
	// Status is the HTTP status, 100..599.
	Status int
	// Method is the request method as logged, an HTTP token; "-" for
	// formats that do not log it.
	Method []byte
	// Bytes is the response size the line logs ($body_bytes_sent, or $bytes_sent; %b/%O; a JSON field); 0 for "-" or when the format has none.
	Bytes uint64
	// RT is the response time in microseconds, or -1 when the line logs none.
	RT int64
	// Bot is the user agent's class (botclass.Person when the format logs no user agent).
	Bot botclass.Class
	// Client is the client address as logged (%h, $remote_addr, the JSON or regex field), nil when the format has none. It points into the line (valid until the next Parse), bounded to maxClientLen bytes.
	// With Config.Client ClientForwardedFor it is the leftmost address of the X-Forwarded-For list, else the remote address. Nil too when the line logs "-", nothing, or more than maxClientLen bytes; a JSON value with escapes is decoded into the Parser's scratch space.
	Client []byte
	// UADigest is visitor.UADigest(UA), 0 when UA is nil: the user
	// agent's part of the visitor key, cached with its bot class.
	UADigest uint64
	// UA is the user agent as logged (the bytes the bot class was decided on: at most maxUALen), nil when the format has none.
	UA []byte
	// Dims are the hit's values in each dimension (package dims), with
	// Config.Dims: dims.Unknown where the line or the format lacks what
	// the dimension is read from; without, all "".
	Dims dims.Values
	// Referer is the referer as logged ("-" as it is), at most
	// MaxRefererLen bytes; nil unless Config.Referer (or Config.Dims) is
	// set, and when the line has none. It points into the line (or, for json, the Parser's
	// scratch space): valid until the next Parse. Nothing of it is kept
	// by the Parser.
	Referer []byte
	// FromHost is set when Site is the host the line names (Site
	// SiteFromLine) and no alias mapped it: a site Config.MaxSites
	// bounds. Parse does not apply the bound (it depends on the order of
	// the lines): the aggregator does, in line order (package aggregate).
	FromHost bool
}

// MaxRefererLen bounds Hit.Referer: a longer referer is cut (its host,
// the part a referrer is counted by, is at its start).
const MaxRefererLen = 2048

type formatKind uint8

const (
	kindCLF formatKind = iota
	kindVhost
	kindNginx
	kindJSON
	kindRegex
)

// Parser turns access-log lines into hits. A line's hit depends on the
// Parser's configuration and the line alone, never on the lines before
// (its caches change no answer): two Parsers of one Config give every
// line the same hit. It keeps scratch space, so one Parser must not be
// used by several goroutines at once; make one per goroutine (they are
// cheap).
type Parser struct {
	cfg          Config // what New made it from (Config)
	kind         formatKind
	site         []byte
	siteFromLine bool
	aliases      map[string][]byte
	maxPageLen   int
	logEsc       bool // undo Apache/nginx escapes in paths
	scratch      []byte
	hostBuf      []byte

	ngx *nginxFormat
	js  *jsonFormat
	rx  *regexFormat

	rules  *pageRules
	filter filters
	// bots classifies user agents; nil when the format logs none.
	bots   *botclass.Cache
	recent *recentUAs // in front of bots
	// hitsOnly makes the CLF formats skip the size and (with bots nil)
	// the user agent, as before the measures: set only by the benchmark
	// that compares the measures with hits alone.
	hitsOnly bool
	// xff makes Hit.Client the leftmost address of fields.xff when there
	// is one (Config.Client ClientForwardedFor).
	xff bool
	// ref makes Parse read the referer into Hit.Referer (Config.Referer,
	// or Config.Dims with a format that logs it).
	ref bool
	// dims gives Hit.Dims (Config.Dims); nil without.
	dims *dimsState
	// span bounds the hits' times (Config.Since, Until).
	span   timeSpan
	f      fields
	counts Counts
	// times caches the last timestamp's minute (CLF and nginx
	// $time_local).
	times timeCache
	// lastHost caches siteOf for the host of the line before.
	lastHost lastHost
}

// timeSpan bounds the hits' times: since <= time < until, in Unix
// seconds (Config.Since, Until; the whole int64 range when not set).
type timeSpan struct {
	since, until int64
}

// fields are what a format reader takes from a line.
type fields struct {
	time   int64
	status int
	method []byte
	path   []byte // target reduced to its path (starts with '/'), query kept, escaped as logged
	host   []byte
	ua     []byte // nil when the line has no user agent
	ref    []byte // the referer; read only with Config.Referer, nil when the line has none
	client []byte // the remote address as logged; nil when the format or line has none
	xff    []byte // the X-Forwarded-For list, read with Config.Client ClientForwardedFor only
	bytes  uint64
	rt     int64
}

var dash = []byte("-")

// New returns a Parser for cfg, or an error if cfg is invalid: every
// problem found, each a *ConfigError, joined.
func New(cfg Config) (*Parser, error) {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &ConfigError{Field: field, Problem: fmt.Sprintf(format, args...)})
	}
	p := &Parser{cfg: cfg, site: []byte(cfg.Site), maxPageLen: cfg.MaxPageLen, logEsc: true}
	needHost := cfg.Site == SiteFromLine
	p.siteFromLine = needHost
	hasUA, hasMethod, hasRef := false, true, false
	p.ref = cfg.Referer || cfg.Dims != nil
	switch cfg.Client {
	case "", ClientRemoteAddr:
	case ClientForwardedFor:
		p.xff = true
	default:
		bad("client", "%q: must be %q or %q", cfg.Client, ClientRemoteAddr, ClientForwardedFor)
	}
	switch cfg.Format {
	case "combined":
		p.kind, hasUA, hasRef = kindCLF, true, true
	case "common":
		p.kind = kindCLF
		if needHost {
			bad("site", "%q: format common has no host; name the site", cfg.Site)
		}
	case "vhost_combined":
		p.kind, hasUA, hasRef = kindVhost, true, true
	case "nginx":
		p.kind = kindNginx
		n, err := compileNginx(cfg.LogFormat, p.xff, p.ref)
		if err != nil {
			bad("log_format", "%v", err)
			break
		}
		p.ngx = n
		hasUA, hasMethod, hasRef = n.hasUA, n.hasMethod, n.hasRef
		if needHost && n.hostVar == 0 {
			bad("site", "%q: log_format has no $host, $http_host or $server_name", cfg.Site)
		}
		if p.xff && !n.hasXFF {
			bad("client", "%q: log_format has no $http_x_forwarded_for", cfg.Client)
		}
	case "json":
		p.kind, p.logEsc = kindJSON, false
		j, err := newJSONFormat(cfg.JSON, cfg.TimeLayout, p.xff, p.ref)
		if err != nil {
			errs = append(errs, err)
			break
		}
		p.js, hasUA, hasRef = j, true, true
	case "regex":
		p.kind = kindRegex
		r, err := compileRegex(cfg.Regex, cfg.TimeLayout)
		if err != nil {
			errs = append(errs, err)
			break
		}
		p.rx = r
		hasUA, hasMethod, hasRef = r.ua >= 0, r.method >= 0 || r.request >= 0, r.ref >= 0
		if needHost && r.site < 0 {
			bad("site", "%q: regex has no (?P<site>...) group", cfg.Site)
		}
	case "":
		bad("format", "must not be empty (want one of %s)", strings.Join(Formats, ", "))
	default:
		bad("format", "%q: unknown log format (want one of %s)", cfg.Format, strings.Join(Formats, ", "))
	}
	if p.xff && cfg.Format != "nginx" && cfg.Format != "json" && cfg.Format != "" {
		bad("client", "%q: format %s logs no X-Forwarded-For (only nginx with $http_x_forwarded_for and json read it; a regex names the address to use in (?P<client>...))", cfg.Client, cfg.Format)
	}
	if !p.xff && cfg.Format == "json" && cfg.JSON.ForwardedFor != "" {
		bad("json.forwarded_for", "only with client = %q", ClientForwardedFor)
	}
	if cfg.Referer && !hasRef && (cfg.Format == "common" || p.ngx != nil || p.rx != nil) { // (the others log it, or failed)
		bad("referer", "format %s logs no referer (combined, vhost_combined, json, nginx with $http_referer and regex with (?P<referer>...) do)", cfg.Format)
	}
	if cfg.Format != "nginx" && cfg.LogFormat != "" {
		bad("log_format", "only for format nginx")
	}
	if cfg.Format != "regex" && cfg.Regex != "" {
		bad("regex", "only for format regex")
	}
	if cfg.Format != "regex" && cfg.Format != "json" && cfg.TimeLayout != "" {
		bad("time_layout", "only for formats json and regex")
	}
	if cfg.Site == "" {
		bad("site", "must not be empty")
	} else if !needHost && strings.ContainsAny(cfg.Site, "{}") {
		bad("site", "%q: write %q to take the site from the line", cfg.Site, SiteFromLine)
	} else if !needHost && (strings.ContainsAny(cfg.Site, "/\x00") || !utf8.ValidString(cfg.Site)) {
		bad("site", "%q: must be valid UTF-8 without '/' (bucket ids are <time>/<site><page>)", cfg.Site)
	}
	if cfg.MaxSites < 0 {
		bad("max_sites", "%d: must not be negative", cfg.MaxSites)
	}
	if needHost && len(cfg.SiteAliases) > 0 {
		p.aliases = make(map[string][]byte, len(cfg.SiteAliases))
		for k, v := range cfg.SiteAliases {
			p.aliases[strings.ToLower(k)] = []byte(v)
		}
	}
	switch {
	case p.maxPageLen == 0:
		p.maxPageLen = DefaultMaxPageLen
	case p.maxPageLen < MinMaxPageLen:
		bad("page.max_length", "%d: must be at least %d", cfg.MaxPageLen, MinMaxPageLen)
	}
	if cfg.Page.MaxPagesPerMinute < 0 {
		bad("page.max_pages_per_minute", "%d: must not be negative", cfg.Page.MaxPagesPerMinute)
	}
	rules, rerrs := newPageRules(cfg.Page)
	errs = append(errs, rerrs...)
	p.rules = rules
	f, ferrs := newFilters(cfg.Filter, hasUA, hasMethod)
	errs = append(errs, ferrs...)
	p.filter = f
	var botRules *botclass.Rules
	if len(cfg.Bots) > 0 && !hasUA {
		bad("bots", "the format does not log the user agent")
	} else if hasUA {
		var berrs []error
		botRules, berrs = newBotRules(cfg.Bots)
		errs = append(errs, berrs...)
	}
	p.span.since, p.span.until = math.MinInt64, math.MaxInt64
	if !cfg.Since.IsZero() {
		p.span.since = cfg.Since.Unix()
	}
	if !cfg.Until.IsZero() {
		p.span.until = cfg.Until.Unix()
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	p.scratch = make([]byte, 0, p.maxPageLen)
	p.hostBuf = make([]byte, 0, maxHostLen)
	if needHost {
		p.lastHost.host = make([]byte, 0, maxHostLen)
	}
	if p.rules != nil {
		n := max(4096, 4*p.maxPageLen)
		p.rules.work = make([]byte, 0, n)
		p.rules.final = make([]byte, 0, n)
	}
	if len(p.filter.agents) > 0 {
		p.filter.uaBuf = make([]byte, 0, maxUALen)
	}
	if botRules != nil {
		p.bots = botclass.NewCacheDigest(botRules, 0, visitor.UADigest)
		if cfg.Dims == nil {
			p.bots.SkipFamilies() // only the dimensions read them
		}
		p.recent = new(recentUAs)
	}
	if cfg.Dims != nil {
		p.dims = newDims(cfg.Dims, &cfg, hasRef, hasUA)
	}
	return p, nil
}

// Config returns the configuration p was made from: a Parser made from it
// by New parses every line as p does.
func (p *Parser) Config() Config { return p.cfg }

// Counts returns how many lines Parse has seen with each outcome. Like
// Parse, it must not be called concurrently with Parse.
func (p *Parser) Counts() Counts { return p.counts }

// Parse parses one line, without its "\n" (a trailing "\n" and then "\r"
// are stripped if present). On OK it fills h; otherwise it sets h to the
// zero Hit and the Outcome says why. Parse never panics, whatever the
// bytes, and does not allocate for the combined, common, vhost_combined
// and nginx formats (rewrite rules that match do allocate, and so does
// classifying a user agent the Parser's bot cache does not hold yet).
func (p *Parser) Parse(line []byte, h *Hit) Outcome {
	o := p.parse(line, h)
	if o != OK {
		*h = Hit{}
	}
	p.counts[o]++
	return o
}

func (p *Parser) parse(line []byte, h *Hit) Outcome {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if isBlank(line) {
		return MalformedEmpty
	}
	f := &p.f
	*f = fields{rt: NoRT}
	var o Outcome
	switch p.kind {
	case kindCLF, kindVhost:
		o = p.readCLF(line, f)
	case kindNginx:
		o = p.ngx.read(line, f, &p.times)
	case kindJSON:
		o = p.js.read(line, f)
	case kindRegex:
		o = p.rx.read(line, f)
	}
	if o != OK {
		return o
	}
	return p.finish(f, h)
}

// finish applies the site, the filters and the page rules to the fields
// read from a line.
func (p *Parser) finish(f *fields, h *Hit) Outcome {
	site := p.site
	aliased := true // a configured site
	if p.siteFromLine {
		s, a, ok := p.lastHost.siteOf(p, f.host)
		if !ok {
			return MalformedHost
		}
		site, aliased = s, a
	}
	if f.method == nil {
		f.method = dash
	}
	if o := p.filter.early(f); o != OK {
		return o
	}
	if f.time < p.span.since || f.time >= p.span.until {
		return FilteredWindow
	}
	if len(p.filter.exts) > 0 && p.filter.excludedExt(f.path) {
		return FilteredExtension
	}
	var page []byte
	if p.rules != nil {
		var o Outcome
		if page, o = p.rulePage(f.path); o != OK {
			return o
		}
	} else {
		page = p.page(f.path)
		if p.filter.excludedPath(page) {
			return FilteredPath
		}
	}
	h.Site = site
	h.FromHost = !aliased
	h.Page = page
	h.Time = f.time
	h.Status = f.status
	h.Method = f.method
	h.Bytes = f.bytes
	h.RT = f.rt
	agent, digest := p.classify(f.ua)
	h.Bot, h.UADigest = agent.Class, digest
	h.UA = nil // a line without one must not keep the line before's
	if p.bots != nil && f.ua != nil {
		h.UA = f.ua[:min(len(f.ua), maxUALen)]
	}
	h.Client = p.clientOf(f)
	if p.dims != nil {
		// A person's user agent from a hosting network is a suspected bot
		// (its crawler value says why).
		if p.dims.values(&h.Dims, site, f.ref, h.Client, f.ua != nil && p.bots != nil, agent) && h.Bot == botclass.Person && f.ua != nil && p.bots != nil {
			h.Bot = botclass.Suspect
		}
	} else if h.Dims.Set() {
		h.Dims = dims.Values{} // not the values another Parser gave the Hit
	}
	h.Referer = nil
	if p.ref && f.ref != nil {
		h.Referer = f.ref[:min(len(f.ref), MaxRefererLen)]
	}
	return OK
}
