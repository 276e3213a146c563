// The URL hash: the whole state of a view (#site=…&range=7d or
// &from=MS&to=MS, plus &page=…), read, written and resolved to instants.

// The relative ranges, in milliseconds, and how they read.
const RANGES = { '1h': 3600e3, '1d': 86400e3, '7d': 7 * 86400e3, '30d': 30 * 86400e3 };
export const RANGE_LABELS = {
  '1h': 'Last hour', '1d': 'Last 24 hours', '7d': 'Last 7 days', '30d': 'Last 30 days',
};

// parseHash reads "#site=…&range=…" or "…&from=MS&to=MS", and "&page=…".
// Values are percent-encoded (encodeURIComponent); a bad part is ignored.
export function parseHash(h) {
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
export function toHash(st) {
  let h = `#site=${encodeURIComponent(st.site)}`;
  h += st.range ? `&range=${st.range}` : `&from=${st.from}&to=${st.to}`;
  if (st.page) h += `&page=${encodeURIComponent(st.page)}`;
  return h;
}

// resolveRange gives the instants to ask: a relative range ends now, by
// the server's clock (the browser's, now, plus skewMs).
export function resolveRange(st, skewMs = 0, now = Date.now()) {
  if (st.range) {
    const to = now + skewMs;
    return { from: to - RANGES[st.range], to };
  }
  return { from: st.from, to: st.to };
}
