// Formatting: numbers, times and bytes, and how a measure is shown (the
// "not recorded" and "not logged" rules of the API contract).

export const STEP_WORDS = { minute: 'per minute', hour: 'per hour', day: 'per day (UTC days)', month: 'per month (UTC months)' };

export const nfInt = new Intl.NumberFormat('en-US');
const nf1 = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });
export const nfPct1 = new Intl.NumberFormat('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 });
const nfPct2 = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
export const TZ = Intl.DateTimeFormat().resolvedOptions().timeZone || 'local time';

export const isNum = (v) => typeof v === 'number' && Number.isFinite(v);
const pad2 = (n) => String(n).padStart(2, '0');

// fmtTime writes an instant in the browser's zone: "2025-11-25 14:00".
export function fmtTime(ms, seconds) {
  const d = new Date(ms);
  let s = `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} ${pad2(d.getHours())}:${pad2(d.getMinutes())}`;
  if (seconds) s += `:${pad2(d.getSeconds())}`;
  return s;
}
export function fmtClock(ms) {
  const d = new Date(ms);
  return `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
}
// toLocalInput writes an instant for <input type="datetime-local">.
export function toLocalInput(ms) {
  return fmtTime(ms).replace(' ', 'T');
}
// fromLocalInput reads one (a wall time in the browser's zone).
export function fromLocalInput(s) {
  if (!s) return NaN;
  return new Date(s).getTime(); // "YYYY-MM-DDTHH:mm" is read as local time
}

// humanBytes: 1000-based units, three significant digits. A value moves
// to the next unit when it rounds to 1000 of its own (999,999 bytes are
// "1.00 MB", not "1000 KB"); past the last unit it is written whole.
function humanBytes(n) {
  const units = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
  if (Math.abs(n) < 1000) return `${nfInt.format(n)} B`;
  let i = 0;
  let v = n;
  while (i < units.length - 1 && Math.abs(Number(v.toPrecision(3))) >= 1000) {
    v /= 1000;
    i++;
  }
  return `${Math.abs(v) >= 1000 ? v.toFixed(0) : v.toPrecision(3)} ${units[i]}`;
}

// ---- measures: value, text and the "not recorded" rules ----------------

// A shown value: text, the raw number for data-value ("" when there is
// none), a title, and na when it stands for a missing measure.
export const NONE = { text: '–', value: '', title: '', na: true };
const NOT_RECORDED = {
  text: 'not recorded', value: '', na: true,
  title: 'counted before the measures were recorded: only the views are known',
};
const NOT_LOGGED = {
  text: 'not logged', value: '', na: true,
  title: 'the log format has no response time',
};

// formatMeasure formats a known number of measure key.
export function formatMeasure(key, v) {
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
export function measure(key, get) {
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
export function visitorsValue(vis, unmeasuredAll) {
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

export const getter = (o) => (k) => (o ? o[k] : undefined);
export const allUnmeasured = (o) => !!o && isNum(o.unmeasured) && o.unmeasured > 0 && o.unmeasured >= o.views;
