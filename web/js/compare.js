// compare.js — the Compare view (#/compare?ids=a,b,c&base=SOURCE): runs side by side,
// grouped by configuration (the spec without label, reps, backend and sim_of) with one bar
// per source: a machine measured, or a machine simulated (ui.js runSource: sim_of's
// machine, else the running machine's simulated device), so that a measured machine
// stands beside the simulation of another and the legend says which is which. A source
// wears its machine's colour, a simulation as a lighter fill with a dashed edge. Then a
// table of ratios against a baseline source (or, with one source, against the first
// configuration); where the time went in each run (summed H2D, kernel, D2H against the
// wall time); and the machines' properties side by side (GPU, copy engines, driver model,
// PCIe, calibration), the simulated ones included.

import { api } from './api.js';
import {
  h, hashFor, fmtMs, fmtNum, fmtSize, fmtPct, shortId, machineChip, machineName, machineColor,
  loadMachines, totalMs, OP_COLORS, OP_LABELS, errorBox, flatten, runSource, lighter, modesMark, twoGroups, hostIssue,
  hostPace, paceSpan,
} from './ui.js';

const CONFIG_FIELDS = ['variant', 'size', 'streams', 'chunks', 'kernel', 'kernel_iters', 'block_size', 'launch',
  'host_memory', 'default_stream', 'stream_flags', 'flush', 'driver_mode', 'timing', 'devices'];
// Machine properties worth reading first, in this order: the host's, then each GPU's.
const HOST_FIRST = ['hostname', 'label', 'cpu', 'cpu_threads', 'kernel', 'backend', 'device_count', 'cuda_driver',
  'cuda_runtime', 'driver_version'];
const GPU_FIRST = ['name', 'compute_capability', 'sm_count', 'copy_engines', 'driver_model', 'pcie_gen', 'pcie_width',
  'memory_bytes', 'concurrent_kernels', 'calibration.h2d_gbps', 'calibration.d2h_gbps', 'calibration.bidir_gbps',
  'calibration.bidir_gbps_min', 'calibration.pageable_h2d_gbps', 'calibration.pageable_d2h_gbps', 'calibration.samples'];
// [group, place]: host properties first, then GPU 0's, GPU 1's, …; the rest of the host's last
function propertyRank(key) {
  const m = /^(?:gpus|devices)\[(\d+)\]\.?(.*)$/.exec(key);
  if (!m) {
    const i = HOST_FIRST.indexOf(key);
    return i < 0 ? [1e6, 0] : [-1, i];
  }
  const i = GPU_FIRST.indexOf(m[2]);
  return [Number(m[1]), i < 0 ? 999 : i];
}

function configKey(s) {
  return JSON.stringify(CONFIG_FIELDS.map((k) => s[k]));
}

// A configuration's name: only the fields that differ between the compared runs.
function configNamer(specs) {
  let vary = CONFIG_FIELDS.filter((k) => new Set(specs.map((s) => JSON.stringify(s[k]))).size > 1);
  // chunks defaults to streams: name it only where it differs
  if (specs.every((s) => s.chunks === s.streams)) vary = vary.filter((k) => k !== 'chunks');
  const show = vary.length ? vary : ['variant', 'size', 'streams'];
  return (s) => show.map((k) => (k === 'size' ? fmtSize(s[k]) : k === 'streams' ? `${s[k]} stream${s[k] === 1 ? '' : 's'}` : k === 'chunks' ? `${s[k]} chunk${s[k] === 1 ? '' : 's'}` : String(s[k]))).join(' · ');
}

function ratioCell(r) {
  if (!Number.isFinite(r)) return h('td', { class: 'num muted' }, '—');
  const cls = r < 0.97 ? 'faster' : r > 1.03 ? 'slower' : 'same';
  return h('td', { class: `num ratio ${cls}` }, `${fmtNum(r)}×`);
}

export async function render(root, ctx) {
  const ids = (ctx.params.get('ids') || '').split(',').filter(Boolean);
  root.append(h('section', { class: 'page-head' }, h('h1', {}, 'Compare'),
    h('p', { class: 'lede' }, 'Runs side by side: one bar per machine, measured or simulated, for each configuration, ratios against a baseline, and the machines themselves.')));
  const machines = await loadMachines().catch(() => []);
  if (!ctx.alive()) return;

  if (!ids.length) {
    root.append(h('section', { class: 'card empty', id: 'compare-empty' },
      h('h2', {}, 'Nothing selected'),
      h('p', {}, 'Tick runs in ', h('a', { href: '#/runs' }, 'Runs'), ' and press “Compare”, or open a sweep and follow “compare these”. To compare machines, import a bundle exported on the other machine (', h('code', {}, 'GET /api/export?sweep=ID'), ' there, ', h('code', {}, 'POST /api/import'), ' here) and select the same configurations from both.')),
    machinesCard(machines, []));
    return;
  }

  const runs = [];
  const missing = [];
  for (let i = 0; i < ids.length; i += 8) {
    const got = await Promise.all(ids.slice(i, i + 8).map((id) => api.experiment(id).catch((err) => ({ id, failedToLoad: err }))));
    for (const g of got) (g.failedToLoad ? missing : runs).push(g);
  }
  if (!ctx.alive()) return;
  for (const m of missing) root.append(errorBox({ code: m.failedToLoad.code, message: `${shortId(m.id)}: ${m.failedToLoad.message}` }));
  const done = runs.filter((e) => e.status === 'done' && e.result);
  if (done.length < runs.length) {
    root.append(h('p', { class: 'muted' }, `${runs.length - done.length} selected run(s) have no result yet and are left out.`));
  }
  if (!done.length) return;

  const byMachine = Object.fromEntries(machines.map((m) => [m.id, m]));
  // where each run's numbers come from: a machine measured or a machine simulated
  const sources = new Map();
  const sourceOf = new Map();
  for (const e of done) {
    const from = runSource(e, byMachine);
    if (!sources.has(from.key)) sources.set(from.key, from);
    sourceOf.set(e.id, from.key);
  }
  // measured first, then simulations of the running machines' devices, then of other machines (sim_of)
  const rank = (x) => (!x.simulated ? 0 : x.simOf ? 2 : 1);
  const sourceKeys = [...sources.keys()].sort((a, b) => {
    const x = sources.get(a);
    const y = sources.get(b);
    return rank(x) - rank(y) || x.machineId.localeCompare(y.machineId);
  });
  const src = (k) => sources.get(k);
  const chip = (k) => h('span', { class: 'source' }, machineChip(src(k).colorId, src(k).short),
    src(k).simulated ? h('span', { class: 'badge sim', title: src(k).label }, 'sim') : null);
  const baseParam = ctx.params.get('base');
  const baseSource = sources.has(baseParam) ? baseParam : sourceKeys[0];
  const name = configNamer(done.map((e) => e.spec));

  // configuration -> source -> runs (newest first as selected)
  const configs = new Map();
  for (const e of done) {
    const k = configKey(e.spec);
    if (!configs.has(k)) configs.set(k, { label: name(e.spec), spec: e.spec, bySource: new Map() });
    const c = configs.get(k);
    const sk = sourceOf.get(e.id);
    if (!c.bySource.has(sk)) c.bySource.set(sk, []);
    c.bySource.get(sk).push(e);
  }
  // configurations in spec order: variant, then size, streams, chunks, …
  const cmp = (a, b) => {
    for (const k of CONFIG_FIELDS) {
      const x = a.spec[k];
      const y = b.spec[k];
      if (x === y) continue;
      if (typeof x === 'number' && typeof y === 'number') return x - y;
      return String(x).localeCompare(String(y));
    }
    return 0;
  };
  const cfgs = [...configs.values()].sort(cmp);
  const pick = (c, k) => (c.bySource.get(k) || [])[0] || null;

  // ---- grouped bars ----
  const barsCanvas = h('canvas', { id: 'compare-bars-canvas' });
  const opsCanvas = h('canvas', { id: 'compare-ops-canvas' });
  root.append(h('section', { class: 'card chart-card' },
    h('div', { class: 'card-head' }, h('h2', {}, 'Total time per configuration'), h('span', { class: 'muted' }, 'median of reps; whiskers in the tooltip: min … max (a simulation: over the host\'s pace); one colour per machine; a simulation: a lighter fill with a dashed edge')),
    h('div', { class: 'chart-box tall' }, barsCanvas)));
  const C = window.Chart;
  const bars = new C(barsCanvas, {
    type: 'bar',
    data: {
      labels: cfgs.map((c) => c.label),
      datasets: sourceKeys.map((k) => {
        const s = src(k);
        const color = machineColor(s.colorId);
        return {
          label: s.label,
          source: k,
          simulated: s.simulated,
          simOf: s.simOf,
          machine: s.machineId,
          data: cfgs.map((c) => {
            const e = pick(c, k);
            return e ? totalMs(e) : null;
          }),
          runs: cfgs.map((c) => pick(c, k)),
          backgroundColor: s.simulated ? lighter(color) : color,
          borderColor: color,
          borderWidth: 0,
          borderDash: s.simulated ? [5, 3] : [],
          borderRadius: 3,
        };
      }),
    },
    plugins: [dashedBars],
    options: {
      scales: { y: { title: { display: true, text: 'total, ms' }, ticks: { callback: (v) => fmtMs(v) }, beginAtZero: true } },
      plugins: {
        legend: {
          position: 'top',
          labels: {
            // a simulation's legend box: the lighter fill with the dashed edge, as its bars
            generateLabels: (chart) => C.defaults.plugins.legend.labels.generateLabels(chart).map((item) => {
              const d = chart.data.datasets[item.datasetIndex];
              return d.simulated ? { ...item, lineWidth: 2, strokeStyle: d.borderColor, lineDash: d.borderDash } : item;
            }),
          },
        },
        tooltip: {
          callbacks: {
            label: (it) => {
              const e = it.dataset.runs[it.dataIndex];
              const t = e?.result?.total_ms || {};
              const groups = e?.result?.rep_modes ? `; ${twoGroups(e.result.rep_modes)}` : '';
              // a simulated run's reps are alike: its whiskers are its host-pace band (result.extra.host_pace)
              const pace = hostPace(e);
              const range = pace ? `host's calls ${paceSpan(pace)} as dear: ${fmtMs(pace.min_ms)} … ${fmtMs(pace.max_ms)}`
                : `${fmtMs(t.min)} … ${fmtMs(t.max)}`;
              return `${it.dataset.label}: ${fmtMs(it.raw)} (${range}${groups})${it.dataset.simulated ? ', simulated' : ''}`;
            },
          },
        },
      },
      onClick: (ev, els) => {
        const e = els[0] && bars.data.datasets[els[0].datasetIndex].runs[els[0].index];
        if (e) ctx.go(hashFor('run', e.id));
      },
    },
  });
  ctx.onCleanup(() => bars.destroy());

  // ---- ratios ----
  const multi = sourceKeys.length > 1;
  const baseCfg = cfgs[0];
  const ratioHead = multi
    ? sourceKeys.filter((k) => k !== baseSource).map((k) => h('th', {}, chip(k), ` ÷ ${src(baseSource).short}`))
    : [h('th', {}, `÷ ${baseCfg.label}`)];
  root.append(h('section', { class: 'card' },
    h('div', { class: 'card-head' }, h('h2', {}, multi ? 'Ratios against the baseline' : 'Ratios against the first configuration'),
      multi ? h('span', { class: 'segmented', id: 'baseline-pick' }, h('span', { class: 'muted' }, 'baseline: '), sourceKeys.map((k) =>
        h('a', { class: k === baseSource ? 'on' : '', href: hashFor('compare', null, { ids: ids.join(','), base: k }) }, src(k).short))) : null),
    h('div', { class: 'scroll-x' }, h('table', { class: 'grid', id: 'ratio-table' },
      h('thead', {}, h('tr', {}, h('th', {}, 'configuration'),
        sourceKeys.map((k) => h('th', { dataset: { source: k } }, chip(k))),
        ratioHead, h('th', {}, 'efficiency'), h('th', {}, 'overlap'),
        h('th', { title: 'the clean reps\' median issue time over the chunks (extra.timing.issue_us_clean): where two runs differ at a host-bound point, the host may be why' }, 'host issue, µs a chunk'))),
      h('tbody', {}, cfgs.map((c) => {
        const base = multi ? pick(c, baseSource) : pick(baseCfg, sourceKeys[0]);
        const b = base ? totalMs(base) : NaN;
        return h('tr', {},
          h('td', {}, c.label),
          sourceKeys.map((k) => {
            const e = pick(c, k);
            return h('td', { class: 'num' }, e ? h('a', { href: hashFor('run', e.id) }, fmtMs(totalMs(e))) : '—', e ? modesMark(e.result) : null,
              e && c.bySource.get(k).length > 1 ? h('small', { class: 'muted' }, ` (${c.bySource.get(k).length} runs, newest)`) : '');
          }),
          multi ? sourceKeys.filter((k) => k !== baseSource).map((k) => {
            const e = pick(c, k);
            return ratioCell(e ? totalMs(e) / b : NaN);
          }) : ratioCell(totalMs(pick(c, sourceKeys[0])) / b),
          h('td', { class: 'num' }, sourceKeys.map((k) => fmtPct(pick(c, k)?.result?.efficiency)).join(' / ')),
          h('td', { class: 'num' }, sourceKeys.map((k) => fmtPct(pick(c, k)?.result?.overlap)).join(' / ')),
          h('td', { class: 'num issue' }, sourceKeys.map((k) => fmtNum(hostIssue(pick(c, k))?.perChunk ?? null)).join(' / ')));
      })))),
    h('p', { class: 'hint' }, 'A ratio below 1 (green) is faster than the baseline; above 1 (red) slower. “sim” marks a simulated source: the simulator with that machine’s calibration, not a measurement.')));

  // ---- where the time went ----
  const labels = done.map((e) => `${name(e.spec)} · ${src(sourceOf.get(e.id)).short}`);
  root.append(h('section', { class: 'card chart-card' },
    h('div', { class: 'card-head' }, h('h2', {}, 'Where the time went'), h('span', { class: 'muted' }, 'summed op time by kind (stacked) against the wall time: what the stacked bar overshoots, overlap hid')),
    h('div', { class: 'chart-box', style: { height: `${Math.max(160, 34 * done.length + 60)}px` } }, opsCanvas)));
  const ops = new C(opsCanvas, {
    type: 'bar',
    data: {
      labels,
      datasets: [
        ...['h2d', 'kernel', 'd2h', 'host'].map((k) => ({
          label: `Σ ${OP_LABELS[k]}`, stack: 'ops', backgroundColor: OP_COLORS[k],
          data: done.map((e) => e.result[`${k}_ms`] || 0),
        })).filter((d) => d.data.some((v) => v > 0)),
        { label: 'wall time', stack: 'wall', backgroundColor: 'rgba(230,237,243,0.55)', data: done.map((e) => totalMs(e)) },
      ],
    },
    options: {
      indexAxis: 'y',
      scales: { x: { stacked: true, ticks: { callback: (v) => fmtMs(v) } }, y: { stacked: true } },
      plugins: { tooltip: { callbacks: { label: (it) => `${it.dataset.label}: ${fmtMs(it.raw)}` } } },
    },
  });
  ctx.onCleanup(() => ops.destroy());

  // the machines behind the sources: the ones measured, the ones simulated, and where the simulations ran
  const shown = [...new Set([...sourceKeys.map((k) => src(k).machineId), ...done.map((e) => e.machine_id)])];
  root.append(machinesCard(machines, shown));
}

// Chart.js draws no dashed edge on bars: a simulated dataset's bars get one here.
const dashedBars = {
  id: 'dashedBars',
  afterDatasetsDraw(chart) {
    const g = chart.ctx;
    chart.data.datasets.forEach((d, i) => {
      if (!d.simulated || !chart.isDatasetVisible(i)) return;
      for (const bar of chart.getDatasetMeta(i).data) {
        const { x, y, base, width } = bar.getProps(['x', 'y', 'base', 'width'], true);
        if (!Number.isFinite(y)) continue;
        g.save();
        g.strokeStyle = d.borderColor;
        g.lineWidth = 2;
        g.setLineDash(d.borderDash);
        g.strokeRect(x - width / 2 + 1, Math.min(y, base) + 1, width - 2, Math.abs(base - y) - 1);
        g.restore();
      }
    });
  },
};

function machinesCard(machines, ids) {
  const list = ids.length ? machines.filter((m) => ids.includes(m.id)) : machines;
  if (!list.length) return h('section', { class: 'card' }, h('h2', {}, 'Machines'), h('p', { class: 'muted' }, 'No machine known yet.'));
  const flat = list.map((m) => new Map(flatten(m)));
  const keys = [...new Set(flat.flatMap((f) => [...f.keys()]))];
  keys.sort((a, b) => {
    const [ga, pa] = propertyRank(a);
    const [gb, pb] = propertyRank(b);
    return ga - gb || pa - pb;
  });
  const cell = (v) => (v === undefined || v === null || v === '' ? '—' : typeof v === 'number' ? fmtNum(v, 6) : String(v));
  // first what one reads to compare machines (and whatever differs), the rest folded away
  const rows = keys.filter((k) => k !== 'id').map((k) => {
    const vals = flat.map((f) => cell(f.get(k)));
    const [group, place] = propertyRank(k);
    return { k, vals, differs: new Set(vals).size > 1, primary: group <= 0 && place < 999 };
  });
  const head = () => h('thead', {}, h('tr', {}, h('th', {}, 'property'), list.map((m) => h('th', {}, machineChip(m.id, machineName(m))))));
  const body = (rs) => h('tbody', {}, rs.map((r) => h('tr', { class: r.differs ? 'differs' : '' },
    h('th', {}, r.k), r.vals.map((v) => h('td', { class: 'mono' }, v)))));
  const main = rows.filter((r) => r.primary || r.differs);
  const rest = rows.filter((r) => !(r.primary || r.differs));
  return h('section', { class: 'card', id: 'machines-card' },
    h('div', { class: 'card-head' }, h('h2', {}, 'Machines'), list.length > 1 ? h('span', { class: 'muted' }, '≠ marks what differs') : null),
    h('div', { class: 'scroll-x' }, h('table', { class: 'grid machines-table' }, head(), body(main))),
    rest.length ? h('details', { class: 'more-props' }, h('summary', {}, `${rest.length} more properties, the same on every machine`),
      h('div', { class: 'scroll-x' }, h('table', { class: 'grid machines-table' }, body(rest)))) : null);
}
