// The panels of where traffic comes from (api/view's sources): channels
// and referrers, countries, networks, browsers / systems / devices,
// crawlers. A table per dimension, its rows as the API gives them (the
// top values by views, then "(other)" and "(not counted)": they sum to
// the views), each value shown as the API shows it (shown: query.Shown),
// as text; a crawler the lists name with its purpose and operator beside
// it. Clicking a channel shows that channel's referrers in the
// referrers' table (the API's by_channel: a host's channel is a function
// of the host), until it is clicked again or "all channels" is; no other
// panel can be filtered (each dimension is counted on its own).

import { $, $$, el } from './dom.js';
import { nfInt, nfPct1, isNum } from './format.js';
import { sourcesState } from './model.js';

// The column title of each dimension's values.
const TITLES = {
  channel: 'Channel', referrer: 'Referrer', country: 'Country', asn: 'Network',
  browser: 'Browser', os: 'Operating system', device: 'Device', crawler: 'Crawler',
};

// The rows that are not a value: muted.
const EXTRA = new Set(['(other)', '(not counted)', '(unknown)']);

let regions = null;
function regionName(code) {
  if (!/^[A-Z]{2}$/.test(code)) return '';
  try {
    regions = regions || new Intl.DisplayNames(['en'], { type: 'region' });
    const n = regions.of(code);
    return n && n !== code ? n : '';
  } catch {
    return '';
  }
}

// crawlerFacts is a crawler's purpose and operator as the API shows them
// ("ai-training · OpenAI"), '' for a value the lists do not name.
function crawlerFacts(v) {
  const purpose = typeof v.purpose === 'string' ? v.purpose : '';
  const operator = typeof v.operator === 'string' ? v.operator : '';
  return [purpose, operator].filter((x) => x).join(' · ');
}

// picked is the channel whose referrers the referrers' table shows ('':
// all); lastArgs the arguments of the last renderSources, to render
// again on a click.
let picked = '';
let lastArgs = null;

function pick(channel) {
  picked = picked === channel ? '' : channel;
  if (lastArgs) renderSources(...lastArgs);
}

// table makes t's table: its values, or for the referrers with a channel
// picked that channel's (byChannel, a Map of channel to rows); the
// channels' values with referrers to show are buttons.
function table(t, byChannel) {
  const tb = el('table', 'src');
  tb.dataset.dim = t.dimension;
  let values = Array.isArray(t.values) ? t.values : [];
  if (t.dimension === 'referrer' && picked && byChannel.has(picked)) {
    values = byChannel.get(picked);
    tb.dataset.channel = picked;
    const cap = el('caption', 'src-filter');
    const all = el('button', 'src-all', 'all channels');
    all.type = 'button';
    all.addEventListener('click', () => pick(picked));
    cap.append(el('span', '', `${picked} only · `), all);
    tb.append(cap);
  }
  const head = el('tr');
  const th = (text, cls) => {
    const e = el('th', cls, text);
    e.scope = 'col';
    return e;
  };
  head.append(th(TITLES[t.dimension] || t.dimension, 'src-value'), th('Views', 'num'), th('Share', 'num src-share'));
  const thead = el('thead');
  thead.append(head);
  const body = el('tbody');
  for (const v of values) {
    const tr = el('tr', EXTRA.has(v.value) ? 'src-extra' : '');
    tr.dataset.source = typeof v.value === 'string' ? v.value : '';
    const shown = typeof v.shown === 'string' ? v.shown : '';
    const name = el('td', 'src-value');
    name.title = shown;
    if (t.dimension === 'channel' && byChannel.has(v.value)) {
      const b = el('button', 'src-pick', shown);
      b.type = 'button';
      b.title = `show the referrers of ${shown}`;
      b.setAttribute('aria-pressed', String(picked === v.value));
      b.addEventListener('click', () => pick(v.value));
      name.append(b);
    } else {
      name.textContent = shown;
    }
    if (t.dimension === 'country') {
      const full = regionName(shown);
      if (full) name.append(' ', el('small', 'src-name', full));
    }
    if (t.dimension === 'crawler') {
      const facts = crawlerFacts(v);
      if (facts) {
        name.append(' ', el('small', 'src-name src-crawler', facts));
        name.title = `${shown} (${facts})`;
      }
    }
    const views = el('td', 'num');
    views.dataset.measure = 'views';
    views.dataset.value = isNum(v.views) ? String(v.views) : '';
    views.textContent = isNum(v.views) ? nfInt.format(v.views) : '–';
    const share = el('td', 'num src-share');
    share.dataset.measure = 'share';
    share.dataset.value = isNum(v.share) ? String(v.share) : '';
    const bar = el('span', 'src-bar');
    const fill = el('span', 'src-fill');
    fill.style.width = `${Math.min(100, Math.max(0, isNum(v.share) ? v.share : 0)).toFixed(2)}%`; // CSSOM: allowed by the CSP
    bar.append(fill);
    share.append(bar, el('span', 'src-pct', isNum(v.share) ? `${nfPct1.format(v.share)}%` : ''));
    tr.append(name, views, share);
    body.append(tr);
  }
  if (!values.length) {
    const tr = el('tr', 'empty-row');
    const td = el('td', 'empty', 'no views');
    td.colSpan = 3;
    tr.append(td);
    body.append(tr);
  }
  tb.append(thead, body);
  return tb;
}

// channelsOf returns the referrers' rows by channel of the dims' tables,
// as a Map (rows that are arrays only).
function channelsOf(dims) {
  const ref = dims.find((t) => t.dimension === 'referrer');
  const by = ref && ref.by_channel && typeof ref.by_channel === 'object' ? ref.by_channel : {};
  return new Map(Object.entries(by).filter(([, rows]) => Array.isArray(rows)));
}

// renderSources shows d.sources; st.page hides the panels (the counts are
// per site).
export function renderSources(st, d) {
  lastArgs = [st, d];
  const section = $('#sources-section');
  section.hidden = !!st.page;
  const s = d ? d.sources : null;
  const { state, text, hint } = sourcesState(s, !!st.page);
  section.dataset.state = state;
  $('#sources-hint').textContent = hint;
  const empty = $('#sources-empty');
  const grid = $('#sources');
  const attr = $('#sources-attribution');
  const lines = s && Array.isArray(s.attribution) ? s.attribution.filter((a) => typeof a === 'string') : [];
  attr.replaceChildren(...lines.map((a) => el('span', 'attr-line', a)));
  if (state !== 'shown') {
    empty.textContent = text;
    empty.hidden = false;
    grid.hidden = true;
    for (const box of $$('.src-tables', grid)) box.replaceChildren();
    attr.hidden = true;
    return;
  }
  empty.hidden = true;
  grid.hidden = false;
  const dims = Array.isArray(s.dims) ? s.dims : [];
  const byDim = new Map(dims.map((t) => [t.dimension, t]));
  const byChannel = channelsOf(dims);
  if (!byChannel.has(picked)) picked = ''; // a range without it
  for (const box of $$('.src-tables', grid)) {
    const tables = box.dataset.dims.split(' ').filter((k) => byDim.has(k)).map((k) => table(byDim.get(k), byChannel));
    box.replaceChildren(...tables);
  }
  attr.hidden = lines.length === 0;
}

// clearSources empties the panels with a message (no stale numbers).
export function clearSources(msg) {
  const section = $('#sources-section');
  section.dataset.state = 'none';
  $('#sources-hint').textContent = '';
  $('#sources-empty').textContent = msg;
  $('#sources-empty').hidden = false;
  $('#sources').hidden = true;
  for (const box of $$('.src-tables')) box.replaceChildren();
  $('#sources-attribution').hidden = true;
}
