// logtally dashboard: one read-only page over the JSON API (api/sites,
// api/view; see the dashboard package). Vanilla JS, no build step.
//
// Rules every module keeps:
//   - Every string from the API (site, page, notes, errors) comes from the
//     logs: it is inserted with textContent, never as HTML.
//   - A page name is shown only as the API shows it (pages[].shown,
//     page_shown: query.Shown, with bidirectional controls and invisible
//     characters escaped), never as the API names it (page, for links and
//     requests) nor as the URL hash holds it.
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
//   #sources-section[data-state]   where traffic comes from: shown, off
//                        (not counted), empty, note, page or none
//   table.src[data-dim=D] tr[data-source=V] td[data-measure=K]   its
//                        tables, D a dimension (channel referrer country
//                        asn browser os device crawler), V a value as the
//                        API names it, K views or share (in %)
// Every value element has data-value: the API's number, "" when the
// measure is not recorded or not logged.
//
// The modules: state.js (the shared state), dom.js, format.js (numbers,
// times, the "not recorded" rules), hash.js (the URL hash), model.js
// (what a view shows, without the DOM: deltas, classes, notes, the
// chart's columns), chart.js (uPlot and the sparklines), header.js,
// cards.js (totals), panels.js (classes, pages, series, notes), sources.js
// (where traffic comes from), render.js
// (a view, errors), and this one: fetching, the refresh loop and the
// events. format.js, hash.js and model.js touch no DOM: testdata/jstest
// tests them in a browser (TestModules).

import { app } from './state.js';
import { $, $$ } from './dom.js';
import { TZ, isNum, fromLocalInput } from './format.js';
import { parseHash, toHash, resolveRange } from './hash.js';
import { chartWidth, chartHeight } from './chart.js';
import { fillSites, syncControls, setStatus, setBusy } from './header.js';
import { buildCards } from './cards.js';
import { render, renderError, renderNoSites } from './render.js';

const SITES_EVERY_MS = 60e3; // re-read api/sites (new sites) about this often

// navigate shows a state: through the hash (hashchange renders), or at
// once when the hash is already that (a range button clicked again).
function navigate(st) {
  const h = toHash(st);
  if (location.hash === h) refresh(true);
  else location.hash = h;
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
  // Relative ranges end at the server's now: the buckets are kept by its
  // clock, and a browser's may be off by minutes.
  if (isNum(d.now)) app.skewMs = d.now - app.sitesAt;
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
    const { from, to } = resolveRange(cur, app.skewMs);
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
    $('#title-page').textContent = ''; // the hash's page unshown until the API shows it
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
