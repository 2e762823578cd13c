// sweep.js — the Sweep view (#/sweep/ID?x=streams&logy=1): total time against one axis
// (streams, chunks, size, …) with one line per variant (and per value of any other axis),
// the spread of the reps as a band (a simulated point: its host-pace band, result.extra.host_pace),
// the model's prediction (result.predicted_ms) dashed,
// the machine's floor (result.floor_ms) dotted; then the speed-up over sequential (or over
// the series' first point where the sweep has no sequential run) and the efficiency.
// Log axes where the values span more than a few times. Click a point to open that run.
// While points are still queued or running the view polls and fills in. The head names the
// machine the points ran on, marked "sim" (or "sim of X", spec.sim_of) where simulated.

import { api } from './api.js';
import {
  h, hashFor, fmtMs, fmtPct, fmtNum, fmtSize, shortId, statusBadge, variantColor, totalMs, errorBox, hasPrediction, FINISHED,
  loadMachines, machineChip, machineName, simBadge, simName, runSource, twoGroups, hostPace,
} from './ui.js';

const NUMERIC_AXES = ['streams', 'chunks', 'size', 'kernel_iters', 'block_size', 'reps', 'warmup'];

// sim_of may be an axis (server/API.md): its values are machines, named as Runs names them
let simNames = {};
function fmtAxis(axis, v) {
  if (axis === 'size') return fmtSize(v);
  if (axis === 'sim_of') return v ? `sim of ${simNames[v] || shortId(v)}` : 'this machine';
  return String(v);
}

// The sweep's experiments as full objects. The sweep names each point with its status;
// a point is fetched when we have never seen its spec, or once when it is done (for its
// result). Finished points never change, so they are fetched at most once.
async function loadPoints(sweep, cache) {
  const list = (sweep.experiments || []).map((x) => (typeof x === 'string' ? { id: x } : x));
  const need = list.filter((x) => {
    const c = cache.get(x.id);
    if (c && FINISHED.has(c.status)) return false;
    if (!x.status) return true;
    if (x.status === 'done' && !x.result) return true;
    return !x.spec && !c;
  });
  for (let i = 0; i < need.length; i += 8) {
    const got = await Promise.all(need.slice(i, i + 8).map((x) => api.experiment(x.id)));
    for (const g of got) cache.set(g.id, g);
  }
  return list.map((x) => {
    const c = cache.get(x.id);
    if (c && (FINISHED.has(c.status) || !x.status)) return c;
    return x.spec ? x : { ...c, ...x, spec: c && c.spec };
  });
}

// The sweep's axes: as declared in its request where the server gives them back, else the
// spec fields that vary across the points, less those that follow from another axis
// (chunks defaults to streams: a streams sweep is not also a chunks sweep).
const AXIS_PREFERENCE = ['variant', 'streams', 'size', 'chunks'];
function sweepAxes(sweep, points) {
  const declared = sweep.axes || sweep.request?.axes || sweep.spec?.axes;
  if (declared && typeof declared === 'object' && Object.keys(declared).length) return Object.keys(declared);
  const specs = points.map((p) => p.spec).filter(Boolean);
  if (!specs.length) return [];
  const varying = Object.keys(specs[0]).filter((k) => k !== 'label'
    && new Set(specs.map((s) => JSON.stringify(s[k]))).size > 1);
  const rank = (k) => (AXIS_PREFERENCE.includes(k) ? AXIS_PREFERENCE.indexOf(k) : AXIS_PREFERENCE.length);
  varying.sort((a, b) => rank(a) - rank(b));
  const determinedBy = (f, g) => {
    const seen = new Map();
    for (const s of specs) {
      const gv = JSON.stringify(s[g]);
      const fv = JSON.stringify(s[f]);
      if (seen.has(gv) && seen.get(gv) !== fv) return false;
      seen.set(gv, fv);
    }
    return true;
  };
  const kept = [];
  for (const f of varying) if (!kept.some((g) => determinedBy(f, g))) kept.push(f);
  return kept;
}

function spanRatio(values) {
  const v = values.filter((x) => x > 0);
  return v.length ? Math.max(...v) / Math.min(...v) : 1;
}

export async function render(root, ctx) {
  const id = ctx.id;
  const cache = new Map();
  const machines = await loadMachines().catch(() => []);
  if (!ctx.alive()) return;
  const byMachine = Object.fromEntries(machines.map((m) => [m.id, m]));
  simNames = Object.fromEntries(machines.map((m) => [m.id, simName(m)]));
  const head = h('section', { class: 'page-head' });
  const body = h('div');
  root.append(head, body);
  const charts = [];
  const destroyCharts = () => {
    for (const c of charts.splice(0)) c.destroy();
  };
  ctx.onCleanup(destroyCharts);
  let timer = null;
  ctx.onCleanup(() => clearTimeout(timer));

  // draw what there is now; while points are still queued or running, poll and redraw
  // when a status changes
  let lastKey = '';
  const refresh = async () => {
    const sweep = await api.sweep(id);
    if (!ctx.alive()) return false;
    const points = await loadPoints(sweep, cache);
    if (!ctx.alive()) return false;
    const key = points.map((p) => `${p.id}:${p.status}`).join(',');
    if (key !== lastKey) {
      lastKey = key;
      destroyCharts();
      draw(sweep, points);
    }
    return !points.every((p) => FINISHED.has(p.status));
  };
  const poll = async () => {
    let again = true;
    try {
      again = await refresh();
    } catch (err) {
      if (ctx.alive()) body.append(errorBox(err));
    }
    if (again && ctx.alive()) timer = setTimeout(poll, 1000);
  };
  if (await refresh()) timer = setTimeout(poll, 1000);

  function draw(sweep, points) {
    const axes = sweepAxes(sweep, points);
    const numeric = axes.filter((a) => NUMERIC_AXES.includes(a));
    const x = ctx.params.get('x') && axes.includes(ctx.params.get('x')) ? ctx.params.get('x')
      : numeric[0] || axes.find((a) => a !== 'variant') || axes[0] || 'streams';
    const xNumeric = NUMERIC_AXES.includes(x);
    const others = axes.filter((a) => a !== x);
    const done = points.filter((p) => p.status === 'done' && p.result);
    const counts = {};
    for (const p of points) counts[p.status] = (counts[p.status] || 0) + 1;
    const variants = [...new Set(points.map((p) => p.spec?.variant).filter(Boolean))];
    // one marker per source (machine measured or simulated) among the points
    const bySource = new Map();
    for (const p of points.filter((q) => q.spec)) {
      const k = runSource(p, byMachine).key;
      if (!bySource.has(k)) bySource.set(k, p);
    }

    head.replaceChildren(
      h('h1', {}, `Sweep ${shortId(id)}`),
      h('p', { class: 'lede' }, `${points.length} points: `, axes.map((a, i) => [i ? ' × ' : '', h('b', {}, a)]),
        variants.length === 1 ? ` · ${variants[0]}` : '',
        points[0]?.spec ? ` · ${fmtSize(points[0].spec.size)} elements` : ''),
      h('div', { class: 'meta-line', id: 'sweep-machines' }, [...bySource.values()].map((p) => h('span', { class: 'source' },
        machineChip(p.machine_id, byMachine[p.machine_id] ? machineName(byMachine[p.machine_id]) : null), simBadge(p, byMachine)))),
      h('div', { class: 'meta-line' }, Object.entries(counts).map(([k, c]) => h('span', {}, statusBadge(k), ` ${c}`)),
        h('a', { href: hashFor('runs', null, { sweep: id }) }, 'as a table in Runs'),
        h('a', { href: api.exportUrl({ sweep: id }), download: `streamlab-sweep-${shortId(id)}.bundle.json` }, 'export bundle'),
        h('a', { href: hashFor('compare', null, { ids: done.map((p) => p.id).join(',') }) }, 'compare these')),
      // (replaceChildren writes a null argument as the text "null": a one-axis sweep has no toggle)
      ...(axes.length > 1 ? [h('div', { class: 'segmented' }, h('span', { class: 'muted' }, 'x axis: '),
        axes.map((a) => h('a', { class: a === x ? 'on' : '', href: hashFor('sweep', id, { ...Object.fromEntries(ctx.params), x: a }) }, a)))] : []));

    body.replaceChildren();
    if (!done.length) {
      body.append(h('section', { class: 'card empty' }, h('h2', {}, 'Waiting for the first point'),
        h('div', { class: 'bar indeterminate' }, h('i', { style: { width: '35%' } })),
        h('p', { class: 'muted' }, 'The chart draws itself as points finish. ', h('a', { href: hashFor('queue', null, { sweep: id }) }, 'Queue'), '.')));
      return;
    }

    // series: every combination of the other axes (variant first)
    others.sort((a, b) => (a === 'variant' ? -1 : b === 'variant' ? 1 : a.localeCompare(b)));
    const seriesKey = (p) => others.map((a) => fmtAxis(a, p.spec[a])).join(' · ') || p.spec.variant;
    const series = new Map();
    for (const p of done) {
      const k = seriesKey(p);
      if (!series.has(k)) series.set(k, { key: k, variant: p.spec.variant, points: [] });
      series.get(k).points.push(p);
    }
    const xs = [...new Set(done.map((p) => p.spec[x]))].sort((a, b) => (xNumeric ? a - b : String(a).localeCompare(String(b))));
    for (const s of series.values()) s.points.sort((a, b) => (xNumeric ? a.spec[x] - b.spec[x] : 0));
    const dashes = [[], [8, 3], [2, 3], [12, 3, 2, 3]];
    const sameVariantIndex = new Map();
    const styleOf = (s) => {
      const i = sameVariantIndex.get(s.variant) || 0;
      sameVariantIndex.set(s.variant, i + 1);
      return { color: variantColor(s.variant), dash: dashes[i % dashes.length] };
    };
    for (const s of series.values()) s.style = styleOf(s);

    const logX = xNumeric && spanRatio(xs) >= 8;
    const allT = done.map((p) => totalMs(p)).filter((v) => v > 0);
    const logYParam = ctx.params.get('logy');
    const logY = logYParam === null ? spanRatio(allT) >= 20 : logYParam === '1';
    const xLabel = (v) => fmtAxis(x, v);

    const pt = (p, v) => ({ x: xNumeric ? p.spec[x] : xLabel(p.spec[x]), y: v, id: p.id });
    const timeSets = [];
    for (const s of series.values()) {
      const c = s.style.color;
      // the band: the reps' min … max; a simulated point's reps are alike, so its band is the
      // host's pace instead (result.extra.host_pace: the host's calls 0.9-2x as dear)
      const lo = (p) => hostPace(p)?.min_ms ?? p.result.total_ms?.min ?? totalMs(p);
      const hi = (p) => hostPace(p)?.max_ms ?? p.result.total_ms?.max ?? totalMs(p);
      timeSets.push({ label: `${s.key} min`, data: s.points.map((p) => pt(p, lo(p))), borderWidth: 0, pointRadius: 0, fill: false, band: true, backgroundColor: `${c}22` });
      timeSets.push({ label: `${s.key} max`, data: s.points.map((p) => pt(p, hi(p))), borderWidth: 0, pointRadius: 0, fill: '-1', band: true, backgroundColor: `${c}2a` });
      // a point whose reps fell in two groups (result.rep_modes) is a triangle: its median is neither group's
      timeSets.push({ label: s.key, data: s.points.map((p) => ({ ...pt(p, totalMs(p)), modes: p.result.rep_modes || null })), borderColor: c, backgroundColor: c, borderDash: s.style.dash, borderWidth: 2.2, pointRadius: s.points.map((p) => (p.result.rep_modes ? 6 : 3.5)), pointStyle: s.points.map((p) => (p.result.rep_modes ? 'triangle' : 'circle')), pointHoverRadius: 6 });
      const pred = s.points.filter((p) => hasPrediction(p.result));
      if (pred.length) timeSets.push({ label: `${s.key} predicted`, data: pred.map((p) => pt(p, p.result.predicted_ms)), borderColor: c, backgroundColor: c, borderDash: [5, 4], borderWidth: 1.4, pointRadius: 2, pointStyle: 'rectRot', kind: 'pred' });
      // a simulated point of the seeds' table: what a plain CUDA program measured there on the
      // GPU the profile stands for (result.extra.reference), hollow squares in the series' colour
      const meas = s.points.filter((p) => p.result.backend === 'sim' && p.result.extra?.reference?.median_ms > 0);
      if (meas.length) timeSets.push({ label: `${s.key} measured on ${meas[0].result.extra.reference.profile || 'the profile'}'s GPU`, data: meas.map((p) => pt(p, p.result.extra.reference.median_ms)), borderColor: c, backgroundColor: 'transparent', borderDash: [2, 2], borderWidth: 1.2, pointRadius: 4.5, pointBorderWidth: 1.6, pointStyle: 'rect', kind: 'ref' });
      // ... and the middle half of every lent GPU of that kind there (result.extra.fleet), a grey band
      const lent = s.points.filter((p) => p.result.backend === 'sim' && p.result.extra?.fleet?.tables > 1 && Number.isFinite(p.result.extra.fleet.p25_ms) && Number.isFinite(p.result.extra.fleet.p75_ms) && p.result.extra.fleet.p75_ms >= p.result.extra.fleet.p25_ms);
      if (lent.length) {
        timeSets.push({ label: `${s.key} lent p25`, data: lent.map((p) => pt(p, p.result.extra.fleet.p25_ms)), borderColor: '#b8c0cc88', borderDash: [1, 2], borderWidth: 1, pointRadius: 0, fill: false, kind: 'fleet' });
        timeSets.push({ label: `${s.key} lent p75`, data: lent.map((p) => pt(p, p.result.extra.fleet.p75_ms)), borderColor: '#b8c0cc88', borderDash: [1, 2], borderWidth: 1, pointRadius: 0, fill: '-1', backgroundColor: '#b8c0cc26', kind: 'fleet' });
      }
    }
    const lentBand = timeSets.some((d) => d.kind === 'fleet');
    if (lentBand) {
      timeSets.push({ label: 'lent GPUs of its kind, middle half', data: [], borderColor: '#b8c0cc', backgroundColor: '#b8c0cc40', borderDash: [1, 2], borderWidth: 1, pointStyle: 'rect', kind: 'fleet-legend' });
    }
    const refs = timeSets.filter((d) => d.kind === 'ref');
    const paced = done.some((p) => hostPace(p));
    if (refs.length) {
      timeSets.push({ label: 'measured on its GPU (plain CUDA)', data: [], borderColor: '#b8c0cc', backgroundColor: 'transparent', borderDash: [2, 2], borderWidth: 1.2, pointStyle: 'rect', kind: 'ref-legend' });
    }
    // one legend entry says what the dashed lines are
    if (timeSets.some((d) => d.kind === 'pred')) {
      timeSets.push({ label: 'model prediction', data: [], borderColor: '#b8c0cc', backgroundColor: '#b8c0cc', borderDash: [5, 4], borderWidth: 1.4, pointStyle: 'rectRot', kind: 'pred-legend' });
    }
    // the floor: one line per distinct floor curve (it depends on size and kernel, not on streams)
    const floors = new Map();
    for (const s of series.values()) {
      const f = s.points.filter((p) => Number.isFinite(p.result.floor_ms) && p.result.floor_ms > 0);
      if (!f.length) continue;
      const sig = f.map((p) => `${p.spec[x]}=${p.result.floor_ms.toPrecision(6)}`).join(',');
      if (!floors.has(sig)) floors.set(sig, { points: f, series: [] });
      floors.get(sig).series.push(s.key);
    }
    for (const f of floors.values()) {
      timeSets.push({ label: floors.size > 1 ? `floor: ${f.series.join(', ')}` : 'floor (calibration)', data: f.points.map((p) => pt(p, p.result.floor_ms)), borderColor: '#e6edf3', backgroundColor: '#e6edf3', borderDash: [1.5, 3], borderWidth: 1.6, pointRadius: 0, kind: 'floor' });
    }

    const xScale = xNumeric
      ? { type: logX ? 'logarithmic' : 'linear', title: { display: true, text: x }, ticks: { callback: (v) => (xs.includes(v) ? xLabel(v) : '') }, afterBuildTicks: (axis) => { axis.ticks = xs.map((v) => ({ value: v })); } }
      : { type: 'category', labels: xs.map(xLabel), title: { display: true, text: x } };
    const openPoint = (chart) => (ev, els) => {
      const el = els.find((e) => chart.data.datasets[e.datasetIndex].data[e.index]?.id);
      if (el) ctx.go(hashFor('run', chart.data.datasets[el.datasetIndex].data[el.index].id));
    };
    const legendFilter = (item, data) => !data.datasets[item.datasetIndex].band && !['pred', 'ref', 'fleet'].includes(data.datasets[item.datasetIndex].kind);

    const timeCanvas = h('canvas', { id: 'sweep-time-canvas' });
    const speedCanvas = h('canvas', { id: 'sweep-speedup-canvas' });
    const effCanvas = h('canvas', { id: 'sweep-eff-canvas' });
    const logToggle = h('a', { class: 'small', href: hashFor('sweep', id, { ...Object.fromEntries(ctx.params), logy: logY ? '0' : '1' }) }, logY ? 'linear y' : 'log y');
    body.append(
      h('section', { class: 'card chart-card' },
        h('div', { class: 'card-head' }, h('h2', {}, `Time vs ${x}`), h('span', { class: 'muted' }, `median of reps; ▲: reps in two groups, the median neither; band: min … max${paced ? ' (simulated: the host\'s calls 0.9-2× as dear)' : ''}; dashed ◆: model prediction; dotted: floor${refs.length ? '; □: measured on the simulated GPU by a plain CUDA program' : ''}${lentBand ? '; grey: the middle half of every lent GPU of its kind' : ''}`), logToggle),
        h('div', { class: 'chart-box tall' }, timeCanvas)),
      h('div', { class: 'two-col' },
        h('section', { class: 'card chart-card' }, h('h2', { id: 'speedup-title' }), h('div', { class: 'chart-box' }, speedCanvas)),
        h('section', { class: 'card chart-card' }, h('h2', {}, 'Efficiency = floor / measured'), h('div', { class: 'chart-box' }, effCanvas))));

    const C = window.Chart;
    const timeChart = new C(timeCanvas, {
      type: 'line',
      data: { datasets: timeSets },
      options: {
        interaction: { mode: 'nearest', intersect: false },
        scales: {
          x: xScale,
          y: { type: logY ? 'logarithmic' : 'linear', title: { display: true, text: 'total time (median of reps)' }, ticks: { callback: (v) => fmtMs(v) } },
        },
        plugins: {
          legend: { position: 'right', labels: { filter: legendFilter, usePointStyle: true } },
          tooltip: {
            filter: (it) => !it.dataset.band,
            callbacks: {
              title: (items) => `${x} = ${xLabel(items[0].raw.x)}`,
              label: (it) => `${it.dataset.label}: ${fmtMs(it.raw.y)}${it.raw.modes ? ` (${twoGroups(it.raw.modes)})` : ''}`,
            },
          },
        },
      },
    });
    timeChart.options.onClick = openPoint(timeChart);
    charts.push(timeChart);

    // speed-up over sequential at the same x (or the sequential run of the sweep), else over the series' first point
    const seq = done.filter((p) => p.spec.variant === 'sequential');
    const seqAt = (v) => {
      const same = seq.filter((p) => p.spec[x] === v);
      const pick = same.length ? same : seq;
      return pick.length ? Math.min(...pick.map((p) => totalMs(p))) : null;
    };
    const overSeq = seq.length > 0;
    body.querySelector('#speedup-title').textContent = overSeq ? 'Speed-up over sequential' : `Speed-up over the series’ first ${x}`;
    const speedSets = [];
    const effSets = [];
    for (const s of series.values()) {
      if (overSeq && s.variant === 'sequential') continue;
      const base = totalMs(s.points[0]);
      const c = s.style.color;
      speedSets.push({ label: s.key, data: s.points.map((p) => pt(p, (overSeq ? seqAt(p.spec[x]) : base) / totalMs(p))), borderColor: c, backgroundColor: c, borderDash: s.style.dash, borderWidth: 2, pointRadius: 3 });
    }
    for (const s of series.values()) {
      const c = s.style.color;
      const pts = s.points.filter((p) => Number.isFinite(p.result.efficiency));
      if (pts.length) effSets.push({ label: s.key, data: pts.map((p) => pt(p, p.result.efficiency)), borderColor: c, backgroundColor: c, borderDash: s.style.dash, borderWidth: 2, pointRadius: 3 });
    }
    const small = (datasets, yTitle, yTick, extra) => ({
      type: 'line',
      data: { datasets },
      options: {
        interaction: { mode: 'nearest', intersect: false },
        scales: { x: xScale, y: { title: { display: true, text: yTitle }, ticks: { callback: yTick }, ...extra } },
        plugins: {
          legend: { position: 'bottom', labels: { usePointStyle: true } },
          tooltip: { callbacks: { title: (items) => `${x} = ${xLabel(items[0].raw.x)}`, label: (it) => `${it.dataset.label}: ${yTick(it.raw.y)}` } },
        },
      },
    });
    const speedChart = new C(speedCanvas, small(speedSets, '× faster', (v) => `${fmtNum(v)}×`, { beginAtZero: true }));
    speedChart.options.onClick = openPoint(speedChart);
    const effChart = new C(effCanvas, small(effSets, 'floor / measured', (v) => fmtPct(v), { min: 0, suggestedMax: 1 }));
    effChart.options.onClick = openPoint(effChart);
    charts.push(speedChart, effChart);

    // every point as a row
    const cols = [x, ...others];
    body.append(h('section', { class: 'card' }, h('h2', {}, 'Points'),
      h('table', { class: 'grid', id: 'sweep-table' },
        h('thead', {}, h('tr', {}, cols.map((c) => h('th', {}, c)), ['status', 'total (median)', 'min … max', 'predicted', 'error', 'floor', 'efficiency', 'overlap', ''].map((c) => h('th', {}, c)))),
        h('tbody', {}, [...points].filter((p) => p.spec).sort((a, b) => (xNumeric ? a.spec[x] - b.spec[x] : 0) || seriesKey(a).localeCompare(seriesKey(b))).map((p) => {
          const r = p.result || {};
          const t = r.total_ms || {};
          return h('tr', { dataset: { id: p.id } },
            cols.map((c) => h('td', { class: c === 'variant' ? 'nowrap' : 'num' }, c === 'variant' ? [h('i', { class: 'dot', style: { background: variantColor(p.spec.variant) } }), p.spec.variant] : fmtAxis(c, p.spec[c]))),
            h('td', {}, statusBadge(p.status)),
            h('td', { class: 'num' }, fmtMs(t.median), r.rep_modes ? h('div', { class: 'small muted rep-modes' }, twoGroups(r.rep_modes)) : null),
            h('td', { class: 'num muted' }, t.min !== undefined ? `${fmtMs(t.min)} … ${fmtMs(t.max)}` : ''),
            h('td', { class: 'num' }, hasPrediction(r) ? fmtMs(r.predicted_ms) : '—'),
            h('td', { class: 'num' }, hasPrediction(r) ? fmtPct(r.prediction_error) : '—'),
            h('td', { class: 'num' }, fmtMs(r.floor_ms)),
            h('td', { class: 'num' }, fmtPct(r.efficiency)),
            h('td', { class: 'num' }, fmtPct(r.overlap)),
            h('td', {}, h('a', { href: hashFor('run', p.id) }, 'timeline →')));
        })))));
    const failed = points.filter((p) => p.status === 'failed');
    if (failed.length) body.append(errorBox({ code: 'failed', message: `${failed.length} point(s) failed: ${failed[0].error || ''}` }));
  }
}
