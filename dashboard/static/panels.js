// The panels below the cards: traffic by bot class, the top pages, the
// series as a table, and the notes.

import { $, el, setValue } from './dom.js';
import { nfInt, nfPct1, TZ, isNum, fmtTime, NONE, formatMeasure, measure, visitorsValue, getter, allUnmeasured } from './format.js';
import { toHash } from './hash.js';
import { sparkline } from './chart.js';

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

// ---- bot classes -------------------------------------------------------------

export function renderClasses(totals, empty) {
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

export function renderPages(st, d, empty) {
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
    const shown = typeof p.shown === 'string' ? p.shown : '';
    const a = el('a', 'page-link', shown);
    a.href = toHash({ ...st, page: p.page });
    a.title = shown;
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

// ---- the series as a table -------------------------------------------------------

export function renderSeries(d, times) {
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
export function renderNotes(d, error) {
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
