// Unit tests of the dashboard's modules without the DOM (format.js,
// hash.js, model.js), run in headless Chromium by TestModules with the
// time zone set to Europe/Paris (CET, UTC+1; CEST, UTC+2 from the last
// Sunday of March, 2026-03-29 01:00 UTC). Each expected value is worked
// out from the rule the module states, not read off the code's output.
//
// The results go to body[data-results] (JSON: [{name, err}], err "" for
// a pass) and body[data-done] = "1".

import {
  TZ, isNum, fmtTime, fmtClock, toLocalInput, fromLocalInput, formatMeasure, measure,
  visitorsValue, getter, allUnmeasured, NONE,
} from '../format.js';
import { parseHash, toHash, resolveRange } from '../hash.js';
import { delta, classRows, notes, chartColumns, subtitle, pagesCount, sourcesState } from '../model.js';

const results = [];

function test(name, fn) {
  try {
    fn();
    results.push({ name, err: '' });
  } catch (e) {
    results.push({ name, err: String((e && e.stack) || e) });
  }
}

function eq(got, want, what) {
  const g = JSON.stringify(got);
  const w = JSON.stringify(want);
  if (g !== w) throw new Error(`${what}: got ${g}, want ${w}`);
}

// has checks the keys of want in got.
function has(got, want, what) {
  for (const k of Object.keys(want)) eq(got && got[k], want[k], `${what}.${k}`);
}

const H = 3600e3;
const D = 24 * H;

// ---- format.js -------------------------------------------------------------

test('the zone is the one set (the other tests depend on it)', () => {
  eq(TZ, 'Europe/Paris', 'TZ');
});

test('fmtTime writes an instant in the browser zone, winter and summer', () => {
  eq(fmtTime(Date.UTC(2026, 0, 15, 13, 5)), '2026-01-15 14:05', 'CET');
  eq(fmtTime(Date.UTC(2026, 6, 15, 13, 5, 9), true), '2026-07-15 15:05:09', 'CEST with seconds');
  eq(fmtClock(Date.UTC(2026, 6, 15, 13, 5, 9)), '15:05:09', 'fmtClock');
  eq(fmtTime(Date.UTC(2025, 11, 31, 23, 30)), '2026-01-01 00:30', 'the local date, not the UTC one');
});

test('datetime-local inputs are wall times in the browser zone', () => {
  eq(toLocalInput(Date.UTC(2026, 0, 15, 13, 5)), '2026-01-15T14:05', 'toLocalInput');
  eq(fromLocalInput('2026-01-15T14:05'), Date.UTC(2026, 0, 15, 13, 5), 'fromLocalInput CET');
  eq(fromLocalInput('2026-03-29T03:30'), Date.UTC(2026, 2, 29, 1, 30), 'fromLocalInput just after the DST change');
  eq(Number.isNaN(fromLocalInput('')), true, 'empty input');
});

test('counts are written in full with thousands separators', () => {
  has(formatMeasure('views', 1234567), { text: '1,234,567', value: '1234567', title: '' }, 'views');
  has(formatMeasure('4xx', 0), { text: '0', value: '0' }, '4xx');
});

test('bytes: 1000-based units, three significant digits, the exact count in the title', () => {
  has(formatMeasure('bytes', 999), { text: '999 B', value: '999' }, '999');
  has(formatMeasure('bytes', 12345), { text: '12.3 KB', title: '12,345 bytes' }, '12345');
  has(formatMeasure('bytes', 100000), { text: '100 KB' }, '100000');
  has(formatMeasure('bytes', 1500000), { text: '1.50 MB' }, '1500000');
  has(formatMeasure('bytes', 2e9), { text: '2.00 GB' }, '2e9');
  has(formatMeasure('bytes', 3.21e15), { text: '3.21 PB' }, '3.21e15');
});

test('bytes: a value that rounds to 1000 of a unit is shown in the next', () => {
  has(formatMeasure('bytes', 999499), { text: '999 KB' }, '999499');
  has(formatMeasure('bytes', 999500), { text: '1.00 MB' }, '999500');
  has(formatMeasure('bytes', 999999), { text: '1.00 MB', title: '999,999 bytes' }, '999999');
  has(formatMeasure('bytes', 99960), { text: '100 KB' }, '99960');
  has(formatMeasure('bytes', 9999), { text: '10.0 KB' }, '9999');
  has(formatMeasure('bytes', 1.5e18), { text: '1500 PB' }, 'beyond the last unit');
});

test('error rate as a percentage, response times in ms', () => {
  has(formatMeasure('error_rate', 0.0123), { text: '1.23%', value: '0.0123' }, 'error_rate');
  has(formatMeasure('error_rate', 0), { text: '0.00%' }, 'error_rate 0');
  has(formatMeasure('rt_avg', 12.345), { text: '12.3 ms' }, 'rt_avg');
  has(formatMeasure('rt_max', 1250), { text: '1,250 ms' }, 'rt_max');
});

test('measure: "not recorded" when every view predates the measures, but for the views', () => {
  const get = getter({ views: 7, unmeasured: 7, '4xx': 0, bytes: 0 });
  has(measure('4xx', get), { text: 'not recorded', value: '', na: true }, '4xx');
  has(measure('bytes', get), { text: 'not recorded', na: true }, 'bytes');
  has(measure('views', get), { text: '7', value: '7' }, 'views');
  // Some views measured: the numbers stand.
  has(measure('4xx', getter({ views: 7, unmeasured: 3, '4xx': 2 })), { text: '2', value: '2' }, 'partly measured');
});

test('measure: a response time is "not logged" without rt_count, "–" without views', () => {
  has(measure('rt_avg', getter({ views: 5, rt_count: 0, rt_avg: 0 })), { text: 'not logged', na: true }, 'rt_avg, views');
  has(measure('rt_max', getter({ views: 5 })), { text: 'not logged', na: true }, 'rt_max, no rt_count');
  eq(measure('rt_avg', getter({ views: 0, rt_count: 0 })), NONE, 'rt_avg, no views');
  has(measure('rt_avg', getter({ views: 5, rt_count: 2, rt_avg: 40 })), { text: '40 ms', value: '40' }, 'rt_avg logged');
  eq(measure('bytes', getter({ views: 1 })), NONE, 'a measure missing');
  eq(measure('views', getter(null)), NONE, 'no record');
});

test('visitors: an estimate, rounded, with its error and what it is', () => {
  const v = visitorsValue({ value: 1234.6, error: 0.012, kind: 'visitors', label: '' }, false);
  has(v, { text: '1,235', value: '1234.6', err: '±1.2%', title: 'an estimate, ±1.2% (1 standard error)', kind: 'visitors' }, 'visitors');
  const sum = visitorsValue({ value: 10, kind: 'daily_sum', label: 'sum of 3 daily uniques' }, false);
  has(sum, { text: '10', err: '', title: 'sum of 3 daily uniques: an estimate; one person seen in two periods counts twice' }, 'a sum');
  has(visitorsValue(null, false), { text: 'not recorded', value: '', na: true, title: 'visitors are not recorded here' }, 'none');
  has(visitorsValue({ value: 3, kind: 'visitors' }, true), { text: 'not recorded', na: true }, 'every view unmeasured');
});

test('allUnmeasured and isNum', () => {
  eq(allUnmeasured({ views: 4, unmeasured: 4 }), true, '4 of 4');
  eq(allUnmeasured({ views: 4, unmeasured: 3 }), false, '3 of 4');
  eq(allUnmeasured({ views: 0, unmeasured: 0 }), false, 'none');
  eq(allUnmeasured(null), false, 'null');
  eq([isNum(0), isNum(NaN), isNum(Infinity), isNum('1'), isNum(null)], [true, false, false, false, false], 'isNum');
});

// ---- hash.js ---------------------------------------------------------------

test('parseHash: a relative range', () => {
  eq(parseHash('#site=a.test&range=7d'), { site: 'a.test', range: '7d', from: null, to: null, page: null }, '7d');
});

test('parseHash and toHash: a custom range and a page with & and = round-trip', () => {
  const h = '#site=a.test&from=1000&to=2000&page=%2Fa%26b%3Dc';
  const st = parseHash(h);
  eq(st, { site: 'a.test', range: null, from: 1000, to: 2000, page: '/a&b=c' }, 'parsed');
  eq(toHash(st), h, 'written back');
  eq(toHash({ site: 'a&b', range: '1h', page: null }), '#site=a%26b&range=1h', 'a site with &');
  eq(parseHash(toHash({ site: 'a&b', range: '1h' })).site, 'a&b', 'and back');
});

test('parseHash: bad parts are ignored, the default range is the last 24 hours', () => {
  has(parseHash('#site=a.test&from=2000&to=1000'), { range: '1d', from: null, to: null }, 'from after to');
  has(parseHash('#site=a.test&range=7d&from=1&to=2'), { range: '7d', from: null, to: null }, 'range and from/to: the range');
  has(parseHash('#range=2d'), { site: null, range: '1d' }, 'unknown range');
  has(parseHash('#site=%E0%A4%A&page=%ZZ&range=1h'), { site: null, page: null, range: '1h' }, 'bad percent-encoding');
  has(parseHash('#site=x&from=12345678901234567&to=99999999999999999'), { range: '1d', from: null }, '17 digits');
  has(parseHash('#site=x&from=-5&to=7'), { range: null, from: -5, to: 7 }, 'negative from');
  has(parseHash(''), { site: null, range: '1d' }, 'empty');
});

test('resolveRange: a relative range ends at the server now (browser now plus skew)', () => {
  const now = Date.UTC(2026, 5, 1, 12);
  eq(resolveRange({ range: '1h' }, 0, now), { from: now - H, to: now }, '1h, no skew');
  const skew = 5 * 60e3; // the server's clock 5 minutes ahead
  eq(resolveRange({ range: '1h' }, skew, now), { from: now + skew - H, to: now + skew }, '1h, server ahead');
  eq(resolveRange({ range: '30d' }, -90e3, now), { from: now - 90e3 - 30 * D, to: now - 90e3 }, '30d, server behind');
  eq(resolveRange({ range: '7d' }, 0, now).to - resolveRange({ range: '7d' }, 0, now).from, 7 * D, '7d');
  eq(resolveRange({ range: null, from: 1, to: 2 }, 1e6, now), { from: 1, to: 2 }, 'a custom range does not move');
});

test('resolveRange: now defaults to the browser clock', () => {
  const before = Date.now();
  const r = resolveRange({ range: '1d' }, 1000);
  const after = Date.now();
  if (!(r.to >= before + 1000 && r.to <= after + 1000)) throw new Error(`to ${r.to} not in [${before + 1000}, ${after + 1000}]`);
  eq(r.to - r.from, D, 'length');
});

// ---- model.js --------------------------------------------------------------

test('delta: the change in %, coloured by which way is good news', () => {
  has(delta('150', '100', 'up'), { text: '▲ 50.0%', value: '50', cls: 'good' }, 'up, good');
  has(delta('50', '100', 'down'), { text: '▼ 50.0%', value: '-50', cls: 'good' }, 'down, good');
  has(delta('110', '100', 'down'), { text: '▲ 10.0%', cls: 'bad' }, 'up, bad');
  has(delta('1', '3', 'up'), { text: '▼ 66.7%', cls: 'bad' }, 'a third, rounded');
  has(delta('3', '1', null), { text: '▲ 200.0%', cls: '' }, 'neither good nor bad');
  has(delta('-1', '-2', 'up'), { text: '▲ 50.0%', cls: 'good' }, 'from a negative');
});

test('delta: from zero, flat, and nothing to compare', () => {
  eq(delta('5', '0', 'up'), { text: '▲ new', value: '', cls: 'good' }, 'from 0');
  eq(delta('0', '0', 'down'), { text: '= 0%', value: '', cls: 'flat' }, '0 and 0');
  has(delta('100000', '100001', 'up'), { text: '= 0.0%', cls: 'flat' }, 'under 0.05%');
  has(delta('1001', '1000', 'up'), { text: '▲ 0.1%', cls: 'good' }, '0.1%');
  eq(delta('', '5', 'up'), { text: '', value: '', cls: '' }, 'current not shown');
  eq(delta('5', '', 'up'), { text: '', value: '', cls: '' }, 'previous not shown');
});

test('classRows: views before the measures leave the people for a row of their own', () => {
  const rows = classRows({ views: 100, people: 60, bot_search: 10, bot_ai: 5, bot_tool: 15, bot_other: 4, bot_suspect: 6, unmeasured: 20 });
  eq(rows.map((r) => r.key), ['people', 'search', 'ai', 'tool', 'other', 'suspect', 'unclassified'], 'keys');
  eq(rows.map((r) => r.v), [40, 10, 5, 15, 4, 6, 20], 'views');
  eq(rows.map((r) => r.share), [0.4, 0.1, 0.05, 0.15, 0.04, 0.06, 0.2], 'shares');
  eq(rows.reduce((a, r) => a + r.v, 0), 100, 'the rows add up to the views');
  eq(rows[0].label, 'People', 'label');
});

test('classRows: every view measured, a class missing, no views', () => {
  const rows = classRows({ views: 10, people: 7, bot_search: 3, bot_tool: 0, bot_other: 0, bot_suspect: 0, unmeasured: 0 });
  eq(rows.length, 6, 'no unclassified row');
  has(rows[0], { v: 7, share: 0.7 }, 'people');
  has(rows[2], { key: 'ai', share: 0 }, 'ai missing');
  eq(rows[2].v, undefined, 'ai missing: no number');
  eq(classRows({ views: 0, people: 0 }).map((r) => r.share), [0, 0, 0, 0, 0, 0], 'no views');
});

test('notes: a failed fetch first, then the page rules and the API notes, in order', () => {
  const d = {
    totals: { views: 10, rt_count: 0, unmeasured: 0 }, previous: null, previous_note: 'the range starts before the first bucket',
    notes: ['minute buckets are past their retention'], visitors: null, step: 'hour', times: [Date.UTC(2026, 0, 1)],
  };
  const n = notes(d, 'boom');
  eq(n.map((x) => x.cls || ''), ['error', '', '', '', ''], 'classes');
  eq(n[0].text, 'boom', 'error');
  eq(n[1].text, 'Response times are not logged: the log format of this site has no response time field.', 'rt');
  eq(n[2].text, 'No previous period: the range starts before the first bucket', 'previous');
  eq(n[3].text, 'minute buckets are past their retention', "the API's");
  eq(n[4].text.startsWith('Visitors are not recorded for this site in this range: '), true, `visitors: ${n[4].text}`);
  eq(notes({ ...d, page: '/a' }, null).at(-1).text.startsWith('Visitors are not recorded for this page in this range: '), true, 'a page');
  eq(notes(null, null), [], 'nothing');
});

test('notes: one alike of the API is left out ("1000 views" and "1,000 views")', () => {
  const page = '1,000 views of this range were counted before the measures were recorded: their status, bytes, response time and class are not known';
  const d = {
    totals: { views: 13532, unmeasured: 1000, rt_count: 5 }, previous: { series: {} }, previous_note: '',
    notes: [page.replace('1,000', '1000'), 'another'], visitors: { kind: 'visitors', value: 1 }, step: 'hour', times: [],
  };
  eq(notes(d, null), [{ text: page, cls: 'warn' }, { text: 'another', cls: undefined }], 'notes');
});

test('notes: every view before the measures: one warning, no rt or visitors note', () => {
  const n = notes({ totals: { views: 10, unmeasured: 10 }, visitors: null, step: 'hour', times: [] }, null);
  eq(n.length, 1, `notes: ${JSON.stringify(n)}`);
  eq(n[0].cls, 'warn', 'cls');
  eq(n[0].text.startsWith('Every view of this range was counted before the measures were recorded'), true, n[0].text);
});

test('notes: a sum of uniques says so; a previous period with a note keeps it as it is', () => {
  const d = {
    totals: { views: 5, rt_count: 5 }, previous: { totals: {} }, previous_note: 'the previous period is shorter',
    visitors: { kind: 'daily_sum', label: 'sum of 3 daily uniques', value: 4 }, step: 'hour', times: [],
  };
  eq(notes(d, null).map((x) => x.text), [
    'the previous period is shorter',
    'Visitors here are a sum of 3 daily uniques: one person seen in two periods counts twice.',
  ], 'notes');
});

test('notes: UTC days start at 01:00 or 02:00 in Paris across the DST change', () => {
  const base = { totals: { views: 5, rt_count: 5 }, previous: { totals: {} }, visitors: { kind: 'visitors', value: 1 } };
  const days = [Date.UTC(2026, 2, 28), Date.UTC(2026, 2, 29), Date.UTC(2026, 2, 30)];
  eq(notes({ ...base, step: 'day', times: days }, null).map((x) => x.text),
    ['Days are UTC days, as the buckets are: in Europe/Paris each one starts at 01:00 or 02:00.'], 'day');
  eq(notes({ ...base, step: 'month', times: [Date.UTC(2026, 0, 1), Date.UTC(2026, 1, 1)] }, null).map((x) => x.text),
    ['Months are UTC months, as the buckets are: in Europe/Paris each one starts on its first day at 01:00.'], 'month');
  eq(notes({ ...base, step: 'hour', times: days }, null), [], 'an hour step: no note');
});

test('chartColumns: the people line breaks where a step predates the measures', () => {
  const t = [0, H, 2 * H];
  const c = chartColumns({ series: { views: [10, 20, 30], people: [8, 20, 25], unmeasured: [0, 20, 5] }, previous: { series: { views: [1, 2] } } }, t);
  eq(c.views, [10, 20, 30], 'views');
  eq(c.people, [8, null, 25], 'people');
  eq(c.prevViews, [null, null, null], 'a previous series of another length');
  const p = chartColumns({ series: { views: [1, 2, 3] }, previous: { series: { views: [4, 5, 6] } } }, t);
  eq([p.people, p.prevViews], [[null, null, null], [4, 5, 6]], 'people missing; previous');
  eq(chartColumns({}, t), { views: [null, null, null], people: [null, null, null], prevViews: null }, 'no series, no previous');
});

test('subtitle: the range, its instants in the browser zone, the step and the previous period', () => {
  const d = { from: Date.UTC(2026, 0, 1), to: Date.UTC(2026, 0, 8), step: 'hour', previous: { from: Date.UTC(2025, 11, 25), to: Date.UTC(2026, 0, 1) } };
  eq(subtitle({ range: '7d' }, d),
    'Last 7 days · 2026-01-01 01:00 – 2026-01-08 01:00 · one point per hour · compared with 2025-12-25 01:00 – 2026-01-01 01:00', '7d');
  eq(subtitle({ range: null }, { from: Date.UTC(2026, 6, 1), to: Date.UTC(2026, 6, 31), step: 'day', previous: null }),
    'Custom range · 2026-07-01 02:00 – 2026-07-31 02:00 · one point per day (UTC days)', 'custom, summer');
  eq(subtitle({ range: '1h' }, { step: 'week' }), 'Last hour · one point per week', 'an unknown step, no instants');
});

test('pagesCount: how many top pages of how many', () => {
  eq(pagesCount(50, 1234), 'showing 50 of 1,234 pages', 'many');
  eq(pagesCount(1, 1), 'showing 1 of 1 page', 'one');
  eq(pagesCount(0, 0), '', 'none');
});

test('sourcesState: the tables, or one line saying why not', () => {
  const day = 24 * 3600e3;
  const from = Date.UTC(2026, 10, 23);
  const s = { from, to: from + 3 * day, views: 10, counted: true, dims: [] };
  eq(sourcesState(s, false), { state: 'shown', text: '', hint: 'views over whole UTC days, 2026-11-23 to 2026-11-25' }, 'shown');
  eq(sourcesState({ ...s, counted: false }, false).state, 'off', 'dimensions off');
  if (!sourcesState({ ...s, counted: false }, false).text.includes('[dimensions] enabled = true')) throw new Error('off: the line names the setting');
  eq(sourcesState({ ...s, views: 0, counted: false }, false).state, 'empty', 'no views');
  eq(sourcesState({ note: 'past retention' }, false), { state: 'note', text: 'past retention', hint: '' }, 'note');
  eq(sourcesState(s, true).state, 'page', 'a page');
  eq(sourcesState(null, false).state, 'none', 'none');
});

document.body.dataset.results = JSON.stringify(results);
document.body.dataset.done = '1';
