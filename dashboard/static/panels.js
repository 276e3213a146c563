// The panels below the cards: traffic by bot class, the top pages, the
// series as a table, and the notes.

import { $, el, setValue } from './dom.js';
import { nfPct1, isNum, fmtTime, NONE, formatMeasure, measure, visitorsValue, getter, allUnmeasured } from './format.js';
import { toHash } from './hash.js';
import { classRows, notes, pagesCount } from './model.js';
import { sparkline } from './chart.js';

// The pages table's measure columns and the series table's, in order.
const PAGE_MEASURES = ['views', 'people', 'bots', '4xx', '5xx', 'error_rate', 'rt_avg', 'rt_max', 'bytes', 'visitors'];
const SERIES_MEASURES = ['views', 'people', 'bots', '4xx', '5xx', 'rt_avg', 'bytes'];

// ---- bot classes -------------------------------------------------------------

export function renderClasses(totals, empty) {
  const box = $('#classes');
  if (empty) {
    box.replaceChildren(el('p', 'empty', 'no views in this range'));
    return;
  }
  // Views counted before the measures existed get a row of their own.
  const list = el('div', 'classes');
  for (const r of classRows(totals)) {
    const row = el('div', `cls-row cls-${r.key}`);
    const name = el('span', 'cls-name', r.label);
    name.title = r.hint;
    const bar = el('span', 'cls-bar');
    const fill = el('span', 'cls-fill');
    fill.style.width = `${(r.share * 100).toFixed(2)}%`; // CSSOM: allowed by the CSP
    bar.append(fill);
    const count = el('span', 'cls-count');
    count.dataset.class = r.key;
    setValue(count, isNum(r.v) ? formatMeasure('views', r.v) : NONE);
    const pct = el('span', 'cls-share', isNum(r.v) ? `${nfPct1.format(r.share * 100)}%` : '');
    pct.dataset.share = r.key;
    pct.dataset.value = isNum(r.v) ? String(r.share) : '';
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
  $('#pages-count').textContent = pagesCount(pages.length, total);
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

// renderNotes lists the notes of d (model.js: notes); error: a failed
// fetch's message, first.
export function renderNotes(d, error) {
  const list = notes(d, error);
  const ul = $('#notes');
  ul.replaceChildren(...list.map((n) => el('li', n.cls || '', n.text)));
  $('#notes-panel').hidden = list.length === 0;
}
