// logtally dashboard: one read-only page over the JSON API (api/sites,
// api/view; see the dashboard package). Vanilla JS, no build step.
//
// Rules this file keeps:
//   - Every string from the API (site, page, notes, errors) comes from the
//     logs: it is inserted with textContent, never as HTML.
//   - No inline script or style, no eval: the server's
//     Content-Security-Policy forbids them. Styles are set through the
//     CSSOM (el.style.width) or classes only.
//   - URLs are relative (api/view, not /api/view): the page may be served
//     at / or at /dashboard/.
//   - The URL hash holds the whole state (#site=…&range=7d or
//     &from=MS&to=MS, plus &page=…), so a link reproduces a view.
//
// Hooks for tests (the browser test reads the page through them):
//   body[data-renders]   incremented after each successful render
//   body[data-view]      the canonical hash that render showed
//   body[data-error]     the last failed fetch's message (removed on success)
//   [data-total=K], [data-prev=K], [data-delta=K]   the totals cards, K in
//                        views people bots visitors 4xx 5xx error_rate
//                        rt_avg rt_max bytes
//   [data-class=C]       bot classes' counts, C in people search ai tool
//                        other suspect, and unclassified when some views
//                        were counted before the measures (people is then
//                        totals.people minus those)
//   #pages tr[data-page=P] td[data-measure=K]   the top pages
//   #series-data tr[data-time=MS] td[data-measure=K]   the series
// Every value element has data-value: the API's number, "" when the
// measure is not recorded or not logged.
'use strict';

(() => {
  // ---- constants ---------------------------------------------------------

  // The relative ranges, in milliseconds, and how they read.
  const RANGES = { '1h': 3600e3, '1d': 86400e3, '7d': 7 * 86400e3, '30d': 30 * 86400e3 };
  const RANGE_LABELS = {
    '1h': 'Last hour', '1d': 'Last 24 hours', '7d': 'Last 7 days', '30d': 'Last 30 days',
  };
  const STEP_WORDS = { minute: 'per minute', hour: 'per hour', day: 'per day (UTC days)', month: 'per month (UTC months)' };

  // The totals cards. good: which way a change is good news (colours the
  // delta), or null when neither.
  const CARDS = [
    { key: 'views', label: 'Views', good: 'up' },
    { key: 'people', label: 'People', good: 'up', hint: 'views minus bots' },
    { key: 'bots', label: 'Bots', good: null, hint: 'views from declared or suspected bots' },
    { key: 'visitors', label: 'Visitors', good: 'up', hint: 'unique visitors, an estimate' },
    { key: '4xx', label: '4xx', good: 'down', hint: 'client errors' },
    { key: '5xx', label: '5xx', good: 'down', hint: 'server errors' },
    { key: 'error_rate', label: 'Error rate', good: 'down', hint: '(4xx + 5xx) / views' },
    { key: 'rt_avg', label: 'Avg response', good: 'down', hint: 'average response time' },
    { key: 'rt_max', label: 'Max response', good: 'down', hint: 'maximum response time' },
    { key: 'bytes', label: 'Bytes', good: null, hint: 'bytes sent (1 KB = 1,000 bytes)' },
  ];

  // The bot classes: the data-class key, the totals key and the label.
  const CLASSES = [
    { key: 'people', from: 'people', label: 'People', hint: 'no bot list names the user agent' },
    { key: 'search', from: 'bot_search', label: 'Search engines', hint: 'Googlebot, bingbot, YandexBot…' },
    { key: 'ai', from: 'bot_ai', label: 'AI crawlers', hint: 'GPTBot, ClaudeBot, PerplexityBot…' },
    { key: 'tool', from: 'bot_tool', label: 'Tools & monitors', hint: 'curl, python-requests, UptimeRobot…' },
    { key: 'other', from: 'bot_other', label: 'Other bots', hint: 'any other declared crawler' },
    { key: 'suspect', from: 'bot_suspect', label: 'Suspected bots', hint: 'declares nothing but looks automated' },
  ];

  // The pages table's measure columns and the series table's, in order.
  const PAGE_MEASURES = ['views', 'people', 'bots', '4xx', '5xx', 'error_rate', 'rt_avg', 'rt_max', 'bytes', 'visitors'];
  const SERIES_MEASURES = ['views', 'people', 'bots', '4xx', '5xx', 'rt_avg', 'bytes'];

  const SITES_EVERY_MS = 60e3; // re-read api/sites (new sites) about this often

  const nfInt = new Intl.NumberFormat('en-US');
  const nf1 = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });
  const nfPct1 = new Intl.NumberFormat('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 });
  const nfPct2 = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  const TZ = Intl.DateTimeFormat().resolvedOptions().timeZone || 'local time';

  // ---- state -------------------------------------------------------------

  const app = {
    sites: null,        // the site names, from api/sites (null: not read yet)
    refreshSeconds: 10,
    sitesAt: 0,         // when api/sites was last read (Date.now())
    state: null,        // the state asked (from the hash)
    hash: '',           // its canonical hash
    seq: 0,             // request sequence: a response of an older one is dropped
    inFlight: null,     // the AbortController of the fetch under way
    timer: 0,           // the next refresh
    missed: false,      // a refresh fell while the page was hidden
    shownHash: null,    // the hash the page shows now (null: nothing)
    shownState: null,   // and its state
    editing: false,     // the custom range's inputs were edited, not applied
    shownAt: 0,         // when it was fetched
    renders: 0,
    chart: null,        // the uPlot instance
    chartKey: '',       // what the chart was built for (rebuilt when it changes)
    lastData: null,
  };

  // ---- small helpers -----------------------------------------------------

  const $ = (sel, root = document) => root.querySelector(sel);
  const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

  // el makes an element with a class and text (text as textContent).
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  }

  const isNum = (v) => typeof v === 'number' && Number.isFinite(v);
  const pad2 = (n) => String(n).padStart(2, '0');

  // fmtTime writes an instant in the browser's zone: "2025-11-25 14:00".
  function fmtTime(ms, seconds) {
    const d = new Date(ms);
    let s = `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} ${pad2(d.getHours())}:${pad2(d.getMinutes())}`;
    if (seconds) s += `:${pad2(d.getSeconds())}`;
    return s;
  }
  function fmtClock(ms) {
    const d = new Date(ms);
    return `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
  }
  // toLocalInput writes an instant for <input type="datetime-local">.
  function toLocalInput(ms) {
    return fmtTime(ms).replace(' ', 'T');
  }
  // fromLocalInput reads one (a wall time in the browser's zone).
  function fromLocalInput(s) {
    if (!s) return NaN;
    return new Date(s).getTime(); // "YYYY-MM-DDTHH:mm" is read as local time
  }

  // humanBytes: 1000-based units, three significant digits.
  function humanBytes(n) {
    const units = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
    let i = 0;
    let v = n;
    while (Math.abs(v) >= 1000 && i < units.length - 1) {
      v /= 1000;
      i++;
    }
    if (i === 0) return `${nfInt.format(n)} B`;
    const digits = Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2;
    return `${v.toFixed(digits)} ${units[i]}`;
  }

  // ---- measures: value, text and the "not recorded" rules ----------------

  // A shown value: text, the raw number for data-value ("" when there is
  // none), a title, and na when it stands for a missing measure.
  const NONE = { text: '–', value: '', title: '', na: true };
  const NOT_RECORDED = {
    text: 'not recorded', value: '', na: true,
    title: 'counted before the measures were recorded: only the views are known',
  };
  const NOT_LOGGED = {
    text: 'not logged', value: '', na: true,
    title: 'the log format has no response time',
  };

  // formatMeasure formats a known number of measure key.
  function formatMeasure(key, v) {
    switch (key) {
      case 'error_rate':
        return { text: `${nfPct2.format(v * 100)}%`, value: String(v), title: '' };
      case 'rt_avg':
      case 'rt_max':
        return { text: `${nf1.format(v)} ms`, value: String(v), title: '' };
      case 'bytes':
        return { text: humanBytes(v), value: String(v), title: `${nfInt.format(v)} bytes` };
      default:
        return { text: nfInt.format(v), value: String(v), title: '' };
    }
  }

  // measure returns how to show measure key of a record read through get
  // (get(k) gives the record's number for k: totals, a page, one step).
  // A record whose every view was counted before the measures existed
  // (unmeasured == views > 0) shows "not recorded" but for its views; a
  // response time is "not logged" when no hit logged one (rt_count == 0).
  function measure(key, get) {
    const views = get('views');
    const unmeasured = get('unmeasured');
    if (key !== 'views' && isNum(unmeasured) && unmeasured > 0 && unmeasured >= views) return NOT_RECORDED;
    if (key === 'rt_avg' || key === 'rt_max') {
      const n = get('rt_count');
      if (!(isNum(n) && n > 0)) return isNum(views) && views > 0 ? NOT_LOGGED : NONE;
    }
    const v = get(key);
    return isNum(v) ? formatMeasure(key, v) : NONE;
  }

  // visitorsValue shows a visitors object of the API (or null).
  function visitorsValue(vis, unmeasuredAll) {
    if (unmeasuredAll) return NOT_RECORDED;
    if (!vis || !isNum(vis.value)) {
      return { text: 'not recorded', value: '', na: true, title: 'visitors are not recorded here' };
    }
    const err = isNum(vis.error) ? `±${nfPct1.format(vis.error * 100)}%` : '';
    let title = `an estimate${err ? `, ${err} (1 standard error)` : ''}`;
    // The server words what the value is (unique visitors, or a sum of
    // daily or monthly uniques, over whole UTC days or months).
    if (vis.label) title = `${vis.label}: ${title}`;
    if (vis.kind !== 'visitors') title += '; one person seen in two periods counts twice';
    return { text: nfInt.format(Math.round(vis.value)), value: String(vis.value), title, err, kind: vis.kind || 'visitors', label: vis.label || '' };
  }

  // setValue writes a shown value into an element with its data-value.
  function setValue(e, m) {
    e.textContent = m.text;
    e.dataset.value = m.value;
    if (m.title) e.title = m.title;
    else e.removeAttribute('title');
    e.classList.toggle('na', !!m.na);
  }

  const getter = (o) => (k) => (o ? o[k] : undefined);
  const allUnmeasured = (o) => !!o && isNum(o.unmeasured) && o.unmeasured > 0 && o.unmeasured >= o.views;

  // ---- the URL hash --------------------------------------------------------

  // parseHash reads "#site=…&range=…" or "…&from=MS&to=MS", and "&page=…".
  // Values are percent-encoded (encodeURIComponent); a bad part is ignored.
  function parseHash(h) {
    const st = { site: null, range: null, from: null, to: null, page: null };
    for (const part of h.replace(/^#/, '').split('&')) {
      const i = part.indexOf('=');
      if (i <= 0) continue;
      const k = part.slice(0, i);
      let v;
      try {
        v = decodeURIComponent(part.slice(i + 1));
      } catch {
        continue;
      }
      if (k === 'site' && v) st.site = v;
      else if (k === 'page' && v) st.page = v;
      else if (k === 'range' && Object.prototype.hasOwnProperty.call(RANGES, v)) st.range = v;
      else if ((k === 'from' || k === 'to') && /^-?\d{1,16}$/.test(v)) st[k] = Number(v);
    }
    const custom = st.from !== null && st.to !== null && st.from < st.to;
    if (st.range || !custom) {
      st.from = null;
      st.to = null;
      if (!st.range) st.range = '1d';
    }
    return st;
  }

  // toHash writes a state as its canonical hash.
  function toHash(st) {
    let h = `#site=${encodeURIComponent(st.site)}`;
    h += st.range ? `&range=${st.range}` : `&from=${st.from}&to=${st.to}`;
    if (st.page) h += `&page=${encodeURIComponent(st.page)}`;
    return h;
  }

  // navigate shows a state: through the hash (hashchange renders), or at
  // once when the hash is already that (a range button clicked again).
  function navigate(st) {
    const h = toHash(st);
    if (location.hash === h) refresh(true);
    else location.hash = h;
  }

  // resolveRange gives the instants to ask: a relative range ends now.
  function resolveRange(st) {
    if (st.range) {
      const to = Date.now();
      return { from: to - RANGES[st.range], to };
    }
    return { from: st.from, to: st.to };
  }

  // ---- fetching ------------------------------------------------------------

  // getJSON fetches a JSON document; an HTTP error throws the API's
  // {"error": "..."} text.
  async function getJSON(url, signal) {
    let res;
    try {
      res = await fetch(url, { signal, cache: 'no-store', headers: { Accept: 'application/json' } });
    } catch (e) {
      if (e.name === 'AbortError') throw e;
      throw new Error(`cannot reach the server (${e.message})`);
    }
    const text = await res.text();
    let body = null;
    try {
      body = JSON.parse(text);
    } catch {
      body = null;
    }
    if (!res.ok) {
      if (body && typeof body.error === 'string' && body.error) throw new Error(body.error);
      throw new Error(`${url.split('?')[0]}: HTTP ${res.status} ${res.statusText}`.trim());
    }
    if (body === null || typeof body !== 'object') throw new Error(`${url.split('?')[0]}: the answer is not JSON`);
    return body;
  }

  async function loadSites(signal) {
    const d = await getJSON('api/sites', signal);
    app.sites = Array.isArray(d.sites) ? d.sites.filter((s) => typeof s === 'string') : [];
    if (isNum(d.refresh_seconds) && d.refresh_seconds > 0) app.refreshSeconds = Math.max(1, d.refresh_seconds);
    app.sitesAt = Date.now();
    fillSites();
  }

  // refresh fetches the view of app.state and renders it. nav: a user's
  // action (aborts the fetch under way); otherwise the timer's refresh,
  // skipped when a fetch is under way. Never two fetches at once, and a
  // response to an older request is dropped.
  async function refresh(nav) {
    clearTimeout(app.timer);
    if (app.inFlight) {
      if (!nav) {
        schedule();
        return;
      }
      app.inFlight.abort();
    }
    const ctrl = new AbortController();
    app.inFlight = ctrl;
    const seq = ++app.seq;
    let hash = app.hash;
    const other = nav && (!hash || hash !== app.shownHash);
    setBusy(true, other && app.shownHash !== null);
    if (other) setStatus('loading…', 'busy');
    try {
      if (!app.sites || !app.sites.length || Date.now() - app.sitesAt > SITES_EVERY_MS) await loadSites(ctrl.signal);
      if (seq !== app.seq) return;
      const st = app.state;
      if (!st.site && app.sites.length) adopt({ ...st, site: app.sites[0] });
      if (!app.state.site) {
        renderNoSites();
        return;
      }
      hash = app.hash;
      const cur = app.state;
      const { from, to } = resolveRange(cur);
      const q = new URLSearchParams({ site: cur.site, from: String(from), to: String(to) });
      if (cur.page) q.set('page', cur.page);
      const data = await getJSON(`api/view?${q}`, ctrl.signal);
      if (seq !== app.seq) return; // a newer request was made meanwhile
      render(cur, hash, data);
    } catch (e) {
      if (seq !== app.seq || e.name === 'AbortError') return;
      renderError(hash, e.message || String(e));
    } finally {
      if (seq === app.seq) {
        app.inFlight = null;
        setBusy(false, false);
        schedule();
      }
    }
  }

  // schedule plans the next refresh; a page hidden meanwhile skips it and
  // refreshes when it is shown again.
  function schedule() {
    clearTimeout(app.timer);
    app.timer = setTimeout(() => {
      if (document.hidden) app.missed = true;
      else refresh(false);
    }, app.refreshSeconds * 1000);
  }

  // ---- the header ----------------------------------------------------------

  function fillSites() {
    const sel = $('#site');
    const want = app.state && app.state.site;
    const names = app.sites.slice();
    if (want && !names.includes(want)) names.push(want); // a site from a link, not (yet) listed
    const have = $$('option', sel).map((o) => o.value);
    if (have.length !== names.length || have.some((v, i) => v !== names[i])) {
      sel.replaceChildren(...names.map((s) => {
        const o = el('option', null, s);
        o.value = s;
        return o;
      }));
    }
    if (want) sel.value = want;
    sel.disabled = names.length === 0;
  }

  // syncControls shows the state in the header's controls.
  function syncControls(st) {
    if (app.sites) fillSites();
    for (const b of $$('[data-range]')) {
      const on = b.dataset.range === st.range;
      b.classList.toggle('active', on);
      b.setAttribute('aria-pressed', String(on));
    }
    syncRangeInputs(st);
    $('#apply').classList.toggle('active', !st.range);
  }

  // syncRangeInputs shows the range asked in the custom range's inputs.
  function syncRangeInputs(st) {
    const { from, to } = resolveRange(st);
    $('#from').value = toLocalInput(from);
    $('#to').value = toLocalInput(to);
    app.editing = false;
  }

  function setStatus(text, cls) {
    const s = $('#status');
    s.textContent = text;
    s.title = text; // the whole text when it is cut
    s.className = cls || '';
  }

  // setBusy marks a fetch under way; dim: another view is being loaded
  // (the one shown is dimmed until it comes).
  function setBusy(busy, dim) {
    $('#status').classList.toggle('busy', busy);
    document.body.classList.toggle('loading', !!dim);
  }

  // ---- rendering -----------------------------------------------------------

  function render(st, hash, d) {
    const totals = d.totals || {};
    const prev = d.previous || null;
    const times = Array.isArray(d.times) ? d.times : [];
    const empty = !(totals.views > 0);

    app.lastData = d;
    app.shownState = st;
    app.shownHash = hash;
    // A relative range moves with time: so do its inputs, unless being edited.
    if (st.range && !app.editing) syncRangeInputs(st);
    app.shownAt = Date.now();
    document.body.classList.toggle('page-view', !!st.page);
    document.body.classList.toggle('empty-view', empty);
    document.body.classList.remove('failed');

    renderHeading(st, d);
    renderTotals(totals, d.visitors, prev);
    renderChart(d, times, empty);
    renderClasses(totals, empty);
    renderPages(st, d, empty);
    renderSeries(d, times);
    renderNotes(d, null);

    setStatus(`updated ${fmtClock(app.shownAt)}`, 'ok');
    delete document.body.dataset.error;
    document.body.dataset.view = hash;
    document.body.dataset.renders = String(++app.renders);
  }

  function renderHeading(st, d) {
    const site = d.site || st.site;
    $('#title-site').textContent = site;
    $('#title-page').textContent = st.page ? st.page : '';
    document.title = st.page ? `${st.page} · ${site} · logtally` : `${site} · logtally`;
    const back = $('#back');
    back.hidden = !st.page;
    $('#back-site').textContent = site;
    back.href = toHash({ ...st, page: null });

    const what = st.range ? RANGE_LABELS[st.range] : 'Custom range';
    const parts = [what];
    if (isNum(d.from) && isNum(d.to)) parts.push(`${fmtTime(d.from)} – ${fmtTime(d.to)}`);
    if (d.step) parts.push(`one point ${STEP_WORDS[d.step] || `per ${d.step}`}`);
    if (d.previous && isNum(d.previous.from)) parts.push(`compared with ${fmtTime(d.previous.from)} – ${fmtTime(d.previous.to)}`);
    $('#subtitle').textContent = parts.join(' · ');
  }

  // buildCards makes the totals cards once (their values come later).
  function buildCards() {
    const box = $('#totals');
    for (const c of CARDS) {
      const card = el('div', 'card');
      card.dataset.card = c.key;
      const label = el('div', 'card-label', c.label);
      if (c.hint) label.title = c.hint;
      const value = el('div', 'card-value skeleton', '');
      value.dataset.total = c.key;
      value.dataset.value = '';
      const cmp = el('div', 'card-cmp');
      const delta = el('span', 'delta');
      delta.dataset.delta = c.key;
      const prevWrap = el('span', 'card-prev', 'prev ');
      const prev = el('span', 'prev-value', '');
      prev.dataset.prev = c.key;
      prev.dataset.value = '';
      prevWrap.append(prev);
      cmp.append(delta, prevWrap);
      card.append(label, value, cmp);
      if (c.key === 'visitors' || c.key === 'people') {
        const sub = el('div', 'card-sub');
        sub.id = `${c.key}-info`;
        card.append(sub);
      }
      box.append(card);
    }
  }

  function renderTotals(totals, vis, prev) {
    const ptot = prev ? prev.totals || {} : null;
    const curAll = allUnmeasured(totals);
    const prevAll = allUnmeasured(ptot);
    for (const c of CARDS) {
      const vEl = $(`[data-total="${c.key}"]`);
      const pEl = $(`[data-prev="${c.key}"]`);
      const dEl = $(`[data-delta="${c.key}"]`);
      vEl.classList.remove('skeleton');
      let cur;
      let old;
      if (c.key === 'visitors') {
        cur = visitorsValue(vis, curAll);
        old = prev ? visitorsValue(prev.visitors, prevAll) : NONE;
        vEl.dataset.kind = vis && vis.kind ? vis.kind : '';
        const info = $('#visitors-info');
        const bits = [];
        if (cur.err) bits.push(cur.err);
        if (cur.kind && cur.kind !== 'visitors' && cur.label) bits.push(cur.label);
        info.textContent = bits.join(' · ');
        info.title = cur.title || '';
      } else {
        cur = measure(c.key, getter(totals));
        old = prev ? measure(c.key, getter(ptot)) : NONE;
      }
      if (c.key === 'people') {
        // Views counted before the measures existed have no class and are
        // counted as people: say how many when some of the range's are.
        const un = isNum(totals.unmeasured) && !curAll ? totals.unmeasured : 0;
        const info = $('#people-info');
        info.textContent = un > 0 ? `incl. ${nfInt.format(un)} not classified` : '';
        info.title = un > 0 ? 'views counted before the measures were recorded count as people' : '';
      }
      setValue(vEl, cur);
      setValue(pEl, old);
      if (!prev) pEl.title = 'no previous period';
      renderDelta(dEl, cur.value, old.value, c.good);
    }
  }

  // renderDelta writes the change from the previous period in %.
  function renderDelta(e, curRaw, oldRaw, good) {
    e.className = 'delta';
    e.dataset.value = '';
    if (curRaw === '' || oldRaw === '') {
      e.textContent = '';
      return;
    }
    const cur = Number(curRaw);
    const old = Number(oldRaw);
    let dir = 0;
    if (old === 0) {
      e.textContent = cur === 0 ? '= 0%' : '▲ new';
      dir = cur === 0 ? 0 : 1;
    } else {
      const pct = ((cur - old) / Math.abs(old)) * 100;
      e.dataset.value = String(pct);
      dir = Math.abs(pct) < 0.05 ? 0 : Math.sign(pct);
      e.textContent = dir === 0 ? '= 0.0%' : `${dir > 0 ? '▲' : '▼'} ${nfPct1.format(Math.abs(pct))}%`;
    }
    if (dir !== 0 && good) e.classList.add((dir > 0) === (good === 'up') ? 'good' : 'bad');
    if (dir === 0) e.classList.add('flat');
  }

  // ---- the main chart (uPlot) ------------------------------------------------

  // cssVar reads a colour of the theme (app.css :root) for the canvas.
  const cssVar = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

  function chartWidth() {
    return Math.max(200, $('#chart').clientWidth);
  }
  function chartHeight() {
    return window.innerWidth < 900 ? 220 : 280;
  }

  // renderChart draws views and people per step, and the previous period's
  // views (dashed) at the same step index.
  function renderChart(d, times, empty) {
    const box = $('#chart');
    $('#chart-title').textContent = d.page ? 'Views of this page' : 'Views';
    $('#chart-hint').textContent = d.step ? STEP_WORDS[d.step] || `per ${d.step}` : '';
    $('#chart-empty').hidden = !empty;
    $('#chart-empty').textContent = 'no views in this range';
    box.hidden = empty;
    if (empty || typeof uPlot === 'undefined') {
      destroyChart();
      return;
    }
    const s = d.series || {};
    const n = times.length;
    const col = (arr) => (Array.isArray(arr) && arr.length === n ? arr : new Array(n).fill(null));
    const views = col(s.views);
    // A step counted before the measures existed has no class: its people
    // are not known (the API counts them as people), so the line breaks.
    const un = col(s.unmeasured);
    const people = col(s.people).map((v, i) => (un[i] > 0 && un[i] >= views[i] ? null : v));
    const prevViews = d.previous && d.previous.series ? col(d.previous.series.views) : null;
    const data = [times.map((t) => t / 1000), views, people];
    if (prevViews) data.push(prevViews);

    // Rebuild when the shape changes (series, theme); else just set data.
    const key = `${prevViews ? 'p' : ''}|${document.documentElement.dataset.theme || ''}|${d.step}`;
    if (app.chart && app.chartKey === key) {
      app.chart.setData(data);
      return;
    }
    destroyChart();
    const fmtVal = (u, v) => (v == null ? '–' : nfInt.format(v));
    const axis = {
      stroke: cssVar('--muted'),
      grid: { stroke: cssVar('--grid'), width: 1 },
      ticks: { stroke: cssVar('--grid'), width: 1 },
      font: '11px system-ui, sans-serif',
    };
    const series = [
      { value: (u, v) => (v == null ? '–' : fmtTime(v * 1000)) },
      {
        label: 'Views', stroke: cssVar('--c-views'), fill: cssVar('--c-views-fill'), width: 2,
        value: fmtVal, points: { show: false },
      },
      {
        label: 'People', stroke: cssVar('--c-people'), width: 1.5,
        value: fmtVal, points: { show: false },
      },
    ];
    if (prevViews) {
      series.push({
        label: 'Views, previous period', stroke: cssVar('--c-prev'), width: 1.5, dash: [5, 4],
        value: fmtVal, points: { show: false },
      });
    }
    const opts = {
      width: chartWidth(),
      height: chartHeight(),
      series,
      scales: { x: { time: true }, y: { range: (u, min, max) => [0, max > 0 ? max * 1.08 : 1] } },
      axes: [
        { ...axis },
        {
          ...axis,
          values: (u, vals) => vals.map((v) => nfInt.format(v)),
          // Wide enough for the longest label ("1,500,000").
          size: (u, vals) => 14 + 7 * Math.max(1, ...(vals || []).map((v) => String(v).length)),
        },
      ],
      cursor: { y: false, points: { size: 6 } },
      legend: { live: true },
    };
    app.chart = new uPlot(opts, data, box);
    app.chartKey = key;
  }

  function destroyChart() {
    if (app.chart) {
      app.chart.destroy();
      app.chart = null;
      app.chartKey = '';
    }
  }

  // ---- bot classes -------------------------------------------------------------

  function renderClasses(totals, empty) {
    const box = $('#classes');
    const views = totals.views || 0;
    if (empty) {
      box.replaceChildren(el('p', 'empty', 'no views in this range'));
      return;
    }
    // Views counted before the measures existed have no class: the API
    // counts them as people; here they get a row of their own.
    const unmeasured = isNum(totals.unmeasured) ? totals.unmeasured : 0;
    const rows = CLASSES.map((c) => {
      let v = totals[c.from];
      if (c.key === 'people' && isNum(v)) v -= unmeasured;
      return { ...c, v };
    });
    if (unmeasured > 0) {
      rows.push({ key: 'unclassified', label: 'Not classified', hint: 'counted before the measures were recorded', v: unmeasured });
    }
    const list = el('div', 'classes');
    for (const r of rows) {
      const row = el('div', `cls-row cls-${r.key}`);
      const name = el('span', 'cls-name', r.label);
      name.title = r.hint;
      const bar = el('span', 'cls-bar');
      const fill = el('span', 'cls-fill');
      const share = isNum(r.v) && views > 0 ? r.v / views : 0;
      fill.style.width = `${(share * 100).toFixed(2)}%`; // CSSOM: allowed by the CSP
      bar.append(fill);
      const count = el('span', 'cls-count');
      count.dataset.class = r.key;
      setValue(count, isNum(r.v) ? formatMeasure('views', r.v) : NONE);
      const pct = el('span', 'cls-share', isNum(r.v) ? `${nfPct1.format(share * 100)}%` : '');
      pct.dataset.share = r.key;
      pct.dataset.value = isNum(r.v) ? String(share) : '';
      row.append(name, bar, count, pct);
      list.append(row);
    }
    box.replaceChildren(list);
  }

  // ---- top pages -----------------------------------------------------------------

  function renderPages(st, d, empty) {
    const panel = $('#pages-panel');
    panel.hidden = !!st.page;
    if (st.page) return;
    const body = $('#pages tbody');
    const pages = Array.isArray(d.pages) ? d.pages : [];
    const total = isNum(d.pages_total) ? d.pages_total : pages.length;
    $('#pages-count').textContent = pages.length
      ? `showing ${nfInt.format(pages.length)} of ${nfInt.format(total)} ${total === 1 ? 'page' : 'pages'}`
      : '';
    if (!pages.length) {
      const tr = el('tr', 'empty-row');
      const td = el('td', 'empty', empty ? 'no views in this range' : 'no pages');
      td.colSpan = 13;
      tr.append(td);
      body.replaceChildren(tr);
      return;
    }
    const rows = pages.map((p, i) => {
      const tr = el('tr');
      tr.dataset.page = p.page;
      tr.append(el('td', 'num rank', String(i + 1)));
      const name = el('td', 'page-col');
      const a = el('a', 'page-link', p.page);
      a.href = toHash({ ...st, page: p.page });
      a.title = p.page;
      name.append(a);
      tr.append(name);
      const get = getter(p);
      const all = allUnmeasured(p);
      for (const k of PAGE_MEASURES) {
        const td = el('td', 'num');
        td.dataset.measure = k;
        const m = k === 'visitors' ? visitorsValue(p.visitors, all) : measure(k, get);
        setValue(td, m);
        if (k === 'visitors' && m.err) td.append(' ', el('small', 'err', m.err));
        tr.append(td);
      }
      const sp = el('td', 'spark-col');
      sp.append(sparkline(p.spark));
      tr.append(sp);
      return tr;
    });
    body.replaceChildren(...rows);
  }

  // sparkline draws a page's views per step on a small canvas: a filled
  // line scaled to the page's own maximum.
  function sparkline(values) {
    const w = 110;
    const h = 22;
    const dpr = window.devicePixelRatio || 1;
    const c = el('canvas', 'spark');
    c.width = Math.round(w * dpr);
    c.height = Math.round(h * dpr);
    const v = Array.isArray(values) ? values.map((x) => (isNum(x) ? x : 0)) : [];
    c.setAttribute('role', 'img');
    c.setAttribute('aria-label', v.length ? `views per step, at most ${nfInt.format(Math.max(...v))}` : 'no data');
    if (v.length < 1) return c;
    const ctx = c.getContext('2d');
    ctx.scale(dpr, dpr);
    const max = Math.max(1, ...v);
    const x = (i) => (v.length === 1 ? w / 2 : 1 + (i * (w - 2)) / (v.length - 1));
    const y = (n) => h - 1.5 - (n / max) * (h - 3);
    ctx.beginPath();
    v.forEach((n, i) => (i ? ctx.lineTo(x(i), y(n)) : ctx.moveTo(x(i), y(n))));
    ctx.strokeStyle = cssVar('--c-views');
    ctx.lineWidth = 1.25;
    ctx.lineJoin = 'round';
    ctx.stroke();
    ctx.lineTo(x(v.length - 1), h);
    ctx.lineTo(x(0), h);
    ctx.closePath();
    ctx.fillStyle = cssVar('--c-views-fill');
    ctx.fill();
    return c;
  }

  // ---- the series as a table -------------------------------------------------------

  function renderSeries(d, times) {
    const s = d.series || {};
    const rows = times.map((t, i) => {
      const tr = el('tr');
      tr.dataset.time = String(t);
      const th = el('th', 'time', fmtTime(t));
      th.scope = 'row';
      tr.append(th);
      const get = (k) => (Array.isArray(s[k]) ? s[k][i] : undefined);
      for (const k of SERIES_MEASURES) {
        const td = el('td', 'num');
        td.dataset.measure = k;
        setValue(td, measure(k, get));
        tr.append(td);
      }
      return tr;
    });
    $('#series-data tbody').replaceChildren(...rows);
  }

  // ---- notes -------------------------------------------------------------------------

  // renderNotes lists the API's notes and the page's own (the rules of the
  // API contract); error: a failed fetch's message, first.
  function renderNotes(d, error) {
    const notes = [];
    // The API may say what the page says too ("13532 views…" and
    // "13,532 views…"): a note is left out when one alike is listed.
    const norm = (t) => t.toLowerCase().replace(/[^a-z0-9]+/g, '');
    const add = (text, cls) => {
      if (text && !notes.some((n) => norm(n.text) === norm(text))) notes.push({ text, cls });
    };
    if (error) add(error, 'error');
    if (d) {
      const t = d.totals || {};
      if (allUnmeasured(t)) {
        add('Every view of this range was counted before the measures were recorded: only the views are known; status, bytes, response time, class and visitors are not recorded.', 'warn');
      } else if (isNum(t.unmeasured) && t.unmeasured > 0) {
        add(`${nfInt.format(t.unmeasured)} views of this range were counted before the measures were recorded: their status, bytes, response time and class are not known`, 'warn');
      }
      if (t.views > 0 && !allUnmeasured(t) && !(t.rt_count > 0)) {
        add('Response times are not logged: the log format of this site has no response time field.');
      }
      if (!d.previous && d.previous_note) add(`No previous period: ${d.previous_note}`);
      else if (d.previous_note) add(d.previous_note);
      for (const n of Array.isArray(d.notes) ? d.notes : []) if (typeof n === 'string') add(n);
      const vis = d.visitors;
      if (vis && vis.kind !== 'visitors') {
        add(`Visitors here are a ${vis.label}: one person seen in two periods counts twice.`);
      } else if (!vis && t.views > 0 && !allUnmeasured(t)) {
        add((d.page ? 'Visitors are not recorded for this page in this range' : 'Visitors are not recorded for this site in this range') +
          ': they are counted with [visitors] enabled, from the hits of people with a client address, for lines read before their day\'s salt is deleted (old logs replayed later have none).');
      }
      if ((d.step === 'day' || d.step === 'month') && Array.isArray(d.times)) {
        // The local wall times the UTC days start at (two across a DST change).
        const starts = [...new Set(d.times.map((t) => fmtTime(t).slice(11)))];
        if (starts.some((s) => s !== '00:00')) {
          const unit = d.step === 'day' ? 'Days are UTC days' : 'Months are UTC months';
          const each = d.step === 'day' ? 'each one starts at' : 'each one starts on its first day at';
          add(`${unit}, as the buckets are: in ${TZ} ${each} ${starts.join(' or ')}.`);
        }
      }
    }
    const ul = $('#notes');
    ul.replaceChildren(...notes.map((n) => el('li', n.cls || '', n.text)));
    $('#notes-panel').hidden = notes.length === 0;
  }

  // ---- error and empty states ------------------------------------------------------

  // renderError shows a failed fetch. A failed refresh of the view shown
  // keeps its numbers (marked stale); a failed new view clears them.
  function renderError(hash, message) {
    const stale = app.shownHash === hash;
    setStatus(stale ? `error: ${message} (showing ${fmtClock(app.shownAt)})` : `error: ${message}`, 'error');
    document.body.dataset.error = message;
    document.body.classList.add('failed');
    if (stale) {
      renderNotes(app.lastData, message);
      return;
    }
    app.shownHash = null;
    app.lastData = null;
    const st = app.state;
    if (st && st.site) {
      $('#title-site').textContent = st.site;
      $('#title-page').textContent = st.page || '';
      $('#back').hidden = !st.page;
    }
    $('#subtitle').textContent = 'could not be loaded';
    clearPanels('could not be loaded');
    renderNotes(null, message);
  }

  function renderNoSites() {
    app.shownHash = null;
    syncControls(app.state);
    $('#title-site').textContent = 'No sites yet';
    $('#title-page').textContent = '';
    $('#subtitle').textContent = 'logtally has not counted a view yet: sites appear here once their first views are flushed.';
    clearPanels('no sites yet');
    renderNotes(null, null);
    setStatus(`updated ${fmtClock(Date.now())}`, 'ok');
    delete document.body.dataset.error;
    document.body.dataset.view = '';
    document.body.dataset.renders = String(++app.renders);
  }

  // clearPanels empties every panel with a message (no stale numbers).
  function clearPanels(msg) {
    for (const e of $$('[data-total], [data-prev]')) {
      setValue(e, NONE);
      e.classList.remove('skeleton');
    }
    for (const e of $$('[data-delta]')) e.textContent = '';
    for (const e of $$('.card-sub')) e.textContent = '';
    destroyChart();
    $('#chart').hidden = true;
    const ce = $('#chart-empty');
    ce.textContent = msg;
    ce.hidden = false;
    $('#classes').replaceChildren(el('p', 'empty', msg));
    const tr = el('tr', 'empty-row');
    const td = el('td', 'empty', msg);
    td.colSpan = 13;
    tr.append(td);
    $('#pages tbody').replaceChildren(tr);
    $('#pages-count').textContent = '';
    $('#pages-panel').hidden = !!(app.state && app.state.page);
    $('#series-data tbody').replaceChildren();
  }

  // ---- events ---------------------------------------------------------------------

  // onHash reads the state from the hash (defaults: the first site, the last
  // 24 hours), writes the canonical hash back and loads it.
  function onHash() {
    const st = parseHash(location.hash);
    if (!st.site && app.sites && app.sites.length) st.site = app.sites[0];
    app.state = st;
    app.hash = '';
    if (st.site) adopt(st);
    if (app.shownHash === null && st.site) {
      // Nothing shown yet (first load, or after an error): name what loads.
      $('#title-site').textContent = st.site;
      $('#title-page').textContent = st.page || '';
      $('#subtitle').textContent = 'loading…';
    }
    refresh(true);
  }

  // adopt makes st the state asked, writes its canonical hash in the URL
  // (without a hashchange) and shows it in the controls.
  function adopt(st) {
    app.state = st;
    app.hash = toHash(st);
    if (location.hash !== app.hash) history.replaceState(null, '', app.hash);
    syncControls(st);
  }

  function wire() {
    $('#tz').textContent = TZ;
    $('#site').addEventListener('change', (e) => {
      navigate({ ...app.state, site: e.target.value, page: null });
    });
    for (const b of $$('[data-range]')) {
      b.addEventListener('click', () => {
        navigate({ ...app.state, range: b.dataset.range, from: null, to: null });
      });
    }
    const apply = () => {
      const from = fromLocalInput($('#from').value);
      const to = fromLocalInput($('#to').value);
      if (!isNum(from) || !isNum(to) || from >= to) {
        setStatus('custom range: give a start before its end', 'error');
        return;
      }
      navigate({ ...app.state, range: null, from, to });
    };
    $('#apply').addEventListener('click', apply);
    for (const id of ['#from', '#to']) {
      $(id).addEventListener('keydown', (e) => {
        if (e.key === 'Enter') apply();
      });
      $(id).addEventListener('input', () => {
        app.editing = true; // the refresh leaves the inputs alone
      });
    }
    window.addEventListener('hashchange', onHash);
    document.addEventListener('visibilitychange', () => {
      if (!document.hidden && app.missed) {
        app.missed = false;
        refresh(false);
      }
    });
    // The chart follows its panel's width.
    let resizeTimer = 0;
    new ResizeObserver(() => {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(() => {
        if (app.chart) app.chart.setSize({ width: chartWidth(), height: chartHeight() });
      }, 50);
    }).observe($('#chart-panel'));
    // The canvas colours follow a change of the system's theme.
    const dark = window.matchMedia('(prefers-color-scheme: dark)');
    const theme = () => {
      document.documentElement.dataset.theme = dark.matches ? 'dark' : 'light';
    };
    theme();
    dark.addEventListener('change', () => {
      theme();
      if (app.lastData && app.shownState) render(app.shownState, app.shownHash, app.lastData);
    });
  }

  function start() {
    buildCards();
    wire();
    onHash();
  }

  start();
})();
