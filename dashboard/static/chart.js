// The charts: the main chart of the series (uPlot, the global of
// vendor/uPlot.iife.min.js, a classic script run before the modules) and
// the pages' sparklines (canvas).

import { app } from './state.js';
import { $, el } from './dom.js';
import { STEP_WORDS, nfInt, isNum, fmtTime } from './format.js';
import { chartColumns } from './model.js';

// cssVar reads a colour of the theme (app.css :root) for the canvas.
const cssVar = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

export function chartWidth() {
  return Math.max(200, $('#chart').clientWidth);
}
export function chartHeight() {
  return window.innerWidth < 900 ? 220 : 280;
}

// renderChart draws views and people per step, and the previous period's
// views (dashed) at the same step index.
export function renderChart(d, times, empty) {
  const box = $('#chart');
  $('#chart-title').textContent = d.page ? 'Views of this page' : 'Views';
  $('#chart-hint').textContent = d.step ? STEP_WORDS[d.step] || `per ${d.step}` : '';
  $('#chart-empty').hidden = !empty;
  $('#chart-empty').textContent = 'no views in this range';
  box.hidden = empty;
  if (empty || typeof uPlot === 'undefined') {
    destroyChart();
    return;
  }
  const { views, people, prevViews } = chartColumns(d, times);
  const data = [times.map((t) => t / 1000), views, people];
  if (prevViews) data.push(prevViews);

  // Rebuild when the shape changes (series, theme); else just set data.
  const key = `${prevViews ? 'p' : ''}|${document.documentElement.dataset.theme || ''}|${d.step}`;
  if (app.chart && app.chartKey === key) {
    app.chart.setData(data);
    return;
  }
  destroyChart();
  const fmtVal = (u, v) => (v == null ? '–' : nfInt.format(v));
  const axis = {
    stroke: cssVar('--muted'),
    grid: { stroke: cssVar('--grid'), width: 1 },
    ticks: { stroke: cssVar('--grid'), width: 1 },
    font: '11px system-ui, sans-serif',
  };
  const series = [
    { value: (u, v) => (v == null ? '–' : fmtTime(v * 1000)) },
    {
      label: 'Views', stroke: cssVar('--c-views'), fill: cssVar('--c-views-fill'), width: 2,
      value: fmtVal, points: { show: false },
    },
    {
      label: 'People', stroke: cssVar('--c-people'), width: 1.5,
      value: fmtVal, points: { show: false },
    },
  ];
  if (prevViews) {
    series.push({
      label: 'Views, previous period', stroke: cssVar('--c-prev'), width: 1.5, dash: [5, 4],
      value: fmtVal, points: { show: false },
    });
  }
  const opts = {
    width: chartWidth(),
    height: chartHeight(),
    series,
    scales: { x: { time: true }, y: { range: (u, min, max) => [0, max > 0 ? max * 1.08 : 1] } },
    axes: [
      { ...axis },
      {
        ...axis,
        values: (u, vals) => vals.map((v) => nfInt.format(v)),
        // Wide enough for the longest label ("1,500,000").
        size: (u, vals) => 14 + 7 * Math.max(1, ...(vals || []).map((v) => String(v).length)),
      },
    ],
    cursor: { y: false, points: { size: 6 } },
    legend: { live: true },
  };
  app.chart = new uPlot(opts, data, box);
  app.chartKey = key;
}

export function destroyChart() {
  if (app.chart) {
    app.chart.destroy();
    app.chart = null;
    app.chartKey = '';
  }
}

// sparkline draws a page's views per step on a small canvas: a filled
// line scaled to the page's own maximum.
export function sparkline(values) {
  const w = 110;
  const h = 22;
  const dpr = window.devicePixelRatio || 1;
  const c = el('canvas', 'spark');
  c.width = Math.round(w * dpr);
  c.height = Math.round(h * dpr);
  const v = Array.isArray(values) ? values.map((x) => (isNum(x) ? x : 0)) : [];
  c.setAttribute('role', 'img');
  c.setAttribute('aria-label', v.length ? `views per step, at most ${nfInt.format(Math.max(...v))}` : 'no data');
  if (v.length < 1) return c;
  const ctx = c.getContext('2d');
  ctx.scale(dpr, dpr);
  const max = Math.max(1, ...v);
  const x = (i) => (v.length === 1 ? w / 2 : 1 + (i * (w - 2)) / (v.length - 1));
  const y = (n) => h - 1.5 - (n / max) * (h - 3);
  ctx.beginPath();
  v.forEach((n, i) => (i ? ctx.lineTo(x(i), y(n)) : ctx.moveTo(x(i), y(n))));
  ctx.strokeStyle = cssVar('--c-views');
  ctx.lineWidth = 1.25;
  ctx.lineJoin = 'round';
  ctx.stroke();
  ctx.lineTo(x(v.length - 1), h);
  ctx.lineTo(x(0), h);
  ctx.closePath();
  ctx.fillStyle = cssVar('--c-views-fill');
  ctx.fill();
  return c;
}
