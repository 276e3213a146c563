// What the page shows of an api/view answer, computed without the DOM:
// the change from the previous period, the bot classes' rows, the notes,
// the chart's columns and the subtitle. Values in, values out: the
// render modules write them into the page (and testdata/jstest tests
// them in a browser).

import { STEP_WORDS, nfInt, nfPct1, TZ, isNum, fmtTime, allUnmeasured } from './format.js';
import { RANGE_LABELS } from './hash.js';

// delta is the change from the previous period of a shown value, given
// the two data-values ("" when a measure is not shown): its text, its
// data-value (the change in %, "" when there is none), and its class
// (good or bad by which way a change is good news, good: 'up', 'down'
// or null; flat under 0.05%; "" otherwise).
export function delta(curRaw, oldRaw, good) {
  if (curRaw === '' || oldRaw === '') return { text: '', value: '', cls: '' };
  const cur = Number(curRaw);
  const old = Number(oldRaw);
  let dir = 0;
  let text;
  let value = '';
  if (old === 0) {
    text = cur === 0 ? '= 0%' : '▲ new';
    dir = cur === 0 ? 0 : 1;
  } else {
    const pct = ((cur - old) / Math.abs(old)) * 100;
    value = String(pct);
    dir = Math.abs(pct) < 0.05 ? 0 : Math.sign(pct);
    text = dir === 0 ? '= 0.0%' : `${dir > 0 ? '▲' : '▼'} ${nfPct1.format(Math.abs(pct))}%`;
  }
  let cls = '';
  if (dir !== 0 && good) cls = (dir > 0) === (good === 'up') ? 'good' : 'bad';
  if (dir === 0) cls = 'flat';
  return { text, value, cls };
}

// The bot classes: the data-class key, the totals key and the label.
const CLASSES = [
  { key: 'people', from: 'people', label: 'People', hint: 'no bot list names the user agent' },
  { key: 'search', from: 'bot_search', label: 'Search engines', hint: 'Googlebot, bingbot, YandexBot…' },
  { key: 'ai', from: 'bot_ai', label: 'AI crawlers', hint: 'GPTBot, ClaudeBot, PerplexityBot…' },
  { key: 'tool', from: 'bot_tool', label: 'Tools & monitors', hint: 'curl, python-requests, UptimeRobot…' },
  { key: 'other', from: 'bot_other', label: 'Other bots', hint: 'any other declared crawler' },
  { key: 'suspect', from: 'bot_suspect', label: 'Suspected bots', hint: 'declares nothing but looks automated' },
];

// classRows are the rows of traffic by class of totals: key, label,
// hint, v (the views, undefined when not given) and share (of the
// views, 0 when unknown). Views counted before the measures existed have
// no class: the API counts them as people; here they are taken from the
// people and get a row of their own (unclassified).
export function classRows(totals) {
  const views = totals.views || 0;
  const unmeasured = isNum(totals.unmeasured) ? totals.unmeasured : 0;
  const rows = CLASSES.map((c) => {
    let v = totals[c.from];
    if (c.key === 'people' && isNum(v)) v -= unmeasured;
    return { key: c.key, label: c.label, hint: c.hint, v };
  });
  if (unmeasured > 0) {
    rows.push({ key: 'unclassified', label: 'Not classified', hint: 'counted before the measures were recorded', v: unmeasured });
  }
  for (const r of rows) r.share = isNum(r.v) && views > 0 ? r.v / views : 0;
  return rows;
}

// notes are the notes of an api/view answer d (or null): the API's and
// the page's own (the rules of the API contract), each {text, cls};
// error: a failed fetch's message, first. The API may say what the page
// says too ("13532 views…" and "13,532 views…"): a note is left out when
// one alike (the same letters and digits) is listed.
export function notes(d, error) {
  const out = [];
  const norm = (t) => t.toLowerCase().replace(/[^a-z0-9]+/g, '');
  const add = (text, cls) => {
    if (text && !out.some((n) => norm(n.text) === norm(text))) out.push({ text, cls });
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
  return out;
}

// chartColumns are the chart's columns of d at times (n steps): views,
// people and the previous period's views at the same step index (null
// without a previous period); a series missing or of another length is
// n nulls. A step counted before the measures existed has no class: its
// people are not known (the API counts them as people), so the people
// line breaks there (null).
export function chartColumns(d, times) {
  const s = d.series || {};
  const n = times.length;
  const col = (arr) => (Array.isArray(arr) && arr.length === n ? arr : new Array(n).fill(null));
  const views = col(s.views);
  const un = col(s.unmeasured);
  const people = col(s.people).map((v, i) => (un[i] > 0 && un[i] >= views[i] ? null : v));
  const prevViews = d.previous && d.previous.series ? col(d.previous.series.views) : null;
  return { views, people, prevViews };
}

// subtitle says what state st shows of d: the range's name, its instants
// in the browser's zone, the step and the previous period.
export function subtitle(st, d) {
  const what = st.range ? RANGE_LABELS[st.range] : 'Custom range';
  const parts = [what];
  if (isNum(d.from) && isNum(d.to)) parts.push(`${fmtTime(d.from)} – ${fmtTime(d.to)}`);
  if (d.step) parts.push(`one point ${STEP_WORDS[d.step] || `per ${d.step}`}`);
  if (d.previous && isNum(d.previous.from)) parts.push(`compared with ${fmtTime(d.previous.from)} – ${fmtTime(d.previous.to)}`);
  return parts.join(' · ');
}

// pagesCount says how many top pages are listed of how many.
export function pagesCount(listed, total) {
  return listed ? `showing ${nfInt.format(listed)} of ${nfInt.format(total)} ${total === 1 ? 'page' : 'pages'}` : '';
}

// utcDay writes the UTC day holding ms (YYYY-MM-DD).
const utcDay = (ms) => new Date(ms).toISOString().slice(0, 10);

// sourcesState says what the panels of where traffic comes from show of
// s (api/view's sources; page: a page is shown, and the counts are per
// site): state is 'page', 'none', 'note', 'empty' (no views), 'off' (no
// view counted by any dimension) or 'shown'; text the one line shown
// instead of the tables; hint the whole UTC days read.
export function sourcesState(s, page) {
  if (page) return { state: 'page', text: '', hint: '' };
  if (!s || typeof s !== 'object') return { state: 'none', text: 'not available', hint: '' };
  if (s.note) return { state: 'note', text: String(s.note), hint: '' };
  const hint = isNum(s.from) && isNum(s.to) && s.from < s.to
    ? `views over whole UTC days, ${utcDay(s.from)} to ${utcDay(s.to - 1)}` : '';
  if (!(isNum(s.views) && s.views > 0)) return { state: 'empty', text: 'no views in these days', hint };
  if (!s.counted) {
    return {
      state: 'off', hint,
      text: 'Where traffic comes from is not counted for these days: the daemon counts it with [dimensions] enabled = true.',
    };
  }
  return { state: 'shown', text: '', hint };
}
