// The totals cards: each measure over the range, the previous period's
// and the change between them.

import { $, el, setValue } from './dom.js';
import { nfInt, isNum, NONE, measure, visitorsValue, getter, allUnmeasured } from './format.js';
import { delta } from './model.js';

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

// buildCards makes the totals cards once (their values come later).
export function buildCards() {
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

export function renderTotals(totals, vis, prev) {
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
  const d = delta(curRaw, oldRaw, good);
  e.className = 'delta';
  e.dataset.value = d.value;
  e.textContent = d.text;
  if (d.cls) e.classList.add(d.cls);
}
