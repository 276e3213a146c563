// Rendering a view: every part of the page from one api/view answer, and
// the error and no-sites states.

import { app } from './state.js';
import { $, $$, el, setValue } from './dom.js';
import { fmtClock, NONE } from './format.js';
import { syncControls, syncRangeInputs, setStatus, renderHeading } from './header.js';
import { renderTotals } from './cards.js';
import { renderChart, destroyChart } from './chart.js';
import { renderClasses, renderPages, renderSeries, renderNotes } from './panels.js';
import { renderSources, clearSources } from './sources.js';

export function render(st, hash, d) {
  const totals = d.totals || {};
  const prev = d.previous || null;
  const times = Array.isArray(d.times) ? d.times : [];
  const empty = !(totals.views > 0);

  app.lastData = d;
  app.shownState = st;
  app.shownHash = hash;
  // A relative range moves with time: so do its inputs, unless being edited.
  if (st.range && !app.editing) syncRangeInputs(st);
  app.shownAt = Date.now();
  document.body.classList.toggle('page-view', !!st.page);
  document.body.classList.toggle('empty-view', empty);
  document.body.classList.remove('failed');

  renderHeading(st, d);
  renderTotals(totals, d.visitors, prev);
  renderChart(d, times, empty);
  renderClasses(totals, empty);
  renderPages(st, d, empty);
  renderSources(st, d);
  renderSeries(d, times);
  renderNotes(d, null);

  setStatus(`updated ${fmtClock(app.shownAt)}`, 'ok');
  delete document.body.dataset.error;
  document.body.dataset.view = hash;
  document.body.dataset.renders = String(++app.renders);
}

// ---- error and empty states ------------------------------------------------------

// renderError shows a failed fetch. A failed refresh of the view shown
// keeps its numbers (marked stale); a failed new view clears them.
export function renderError(hash, message) {
  const stale = app.shownHash === hash;
  setStatus(stale ? `error: ${message} (showing ${fmtClock(app.shownAt)})` : `error: ${message}`, 'error');
  document.body.dataset.error = message;
  document.body.classList.add('failed');
  if (stale) {
    renderNotes(app.lastData, message);
    return;
  }
  app.shownHash = null;
  app.lastData = null;
  const st = app.state;
  if (st && st.site) {
    $('#title-site').textContent = st.site;
    $('#title-page').textContent = ''; // the hash's page: not shown as the API would
    $('#back').hidden = !st.page;
  }
  $('#subtitle').textContent = 'could not be loaded';
  clearPanels('could not be loaded');
  renderNotes(null, message);
}

export function renderNoSites() {
  app.shownHash = null;
  syncControls(app.state);
  $('#title-site').textContent = 'No sites yet';
  $('#title-page').textContent = '';
  $('#subtitle').textContent = 'logtally has not counted a view yet: sites appear here once their first views are flushed.';
  clearPanels('no sites yet');
  renderNotes(null, null);
  setStatus(`updated ${fmtClock(Date.now())}`, 'ok');
  delete document.body.dataset.error;
  document.body.dataset.view = '';
  document.body.dataset.renders = String(++app.renders);
}

// clearPanels empties every panel with a message (no stale numbers).
function clearPanels(msg) {
  for (const e of $$('[data-total], [data-prev]')) {
    setValue(e, NONE);
    e.classList.remove('skeleton');
  }
  for (const e of $$('[data-delta]')) e.textContent = '';
  for (const e of $$('.card-sub')) e.textContent = '';
  destroyChart();
  $('#chart').hidden = true;
  const ce = $('#chart-empty');
  ce.textContent = msg;
  ce.hidden = false;
  $('#classes').replaceChildren(el('p', 'empty', msg));
  const tr = el('tr', 'empty-row');
  const td = el('td', 'empty', msg);
  td.colSpan = 13;
  tr.append(td);
  $('#pages tbody').replaceChildren(tr);
  $('#pages-count').textContent = '';
  $('#pages-panel').hidden = !!(app.state && app.state.page);
  $('#series-data tbody').replaceChildren();
  clearSources(msg);
}
