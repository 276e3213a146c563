// The header and heading: the site list, the range's controls, the
// status line, and the title and subtitle of the view shown.

import { app } from './state.js';
import { $, $$, el } from './dom.js';
import { toLocalInput } from './format.js';
import { toHash, resolveRange } from './hash.js';
import { subtitle } from './model.js';

export function fillSites() {
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
export function syncControls(st) {
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
export function syncRangeInputs(st) {
  const { from, to } = resolveRange(st, app.skewMs);
  $('#from').value = toLocalInput(from);
  $('#to').value = toLocalInput(to);
  app.editing = false;
}

export function setStatus(text, cls) {
  const s = $('#status');
  s.textContent = text;
  s.title = text; // the whole text when it is cut
  s.className = cls || '';
}

// setBusy marks a fetch under way; dim: another view is being loaded
// (the one shown is dimmed until it comes).
export function setBusy(busy, dim) {
  $('#status').classList.toggle('busy', busy);
  document.body.classList.toggle('loading', !!dim);
}

export function renderHeading(st, d) {
  const site = d.site || st.site;
  $('#title-site').textContent = site;
  const page = st.page && typeof d.page_shown === 'string' ? d.page_shown : '';
  $('#title-page').textContent = page;
  document.title = page ? `${page} · ${site} · logtally` : `${site} · logtally`;
  const back = $('#back');
  back.hidden = !st.page;
  $('#back-site').textContent = site;
  back.href = toHash({ ...st, page: null });

  $('#subtitle').textContent = subtitle(st, d);
}
