// ui.js — what every view shares: the colours (an op kind, a variant and a machine each
// keep one colour on every page), how a simulated run is told from a measured one,
// number formatting with units, a small DOM builder that never parses user text as
// HTML, and Chart.js defaults for the dark theme.

import { api, machineList } from './api.js';

// Nsight Systems' habit: copies host->device green, device->host red, kernels blue.
export const OP_COLORS = {
  h2d: '#3ecf8e',
  kernel: '#4f8cff',
  d2h: '#ff6b6b',
  host: '#f2c14e',
};
export const OP_LABELS = { h2d: 'H2D copy', kernel: 'kernel', d2h: 'D2H copy', host: 'host work' };
export const OP_KINDS = ['h2d', 'kernel', 'd2h', 'host'];

export const VARIANTS = [
  'sequential', 'async_v1', 'async_v2', 'round_robin', 'engine_streams',
  'cpu', 'host_overlap', 'multi_gpu', 'tuned', 'zero_copy',
];
const VARIANT_COLORS = {
  sequential: '#a0a8b8',
  async_v1: '#c792ea',
  async_v2: '#2ad4d4',
  round_robin: '#ff9ecf',
  engine_streams: '#b5e655',
  cpu: '#d4a373',
  host_overlap: '#f78c40',
  multi_gpu: '#8fb8ff',
  tuned: '#ffffff',
  zero_copy: '#5fd3a5',
};
export function variantColor(v) {
  return VARIANT_COLORS[v] || '#cccccc';
}

// One colour per machine: its place among the machines the store knows, sorted by id,
// so that every view colours a machine alike.
const MACHINE_PALETTE = ['#c792ea', '#2ad4d4', '#ff9ecf', '#b5e655', '#f78c40', '#d4a373', '#8fb8ff', '#e0e0e0'];
let machineOrder = [];
function setMachines(machines) {
  machineOrder = machines.map((m) => m.id).filter(Boolean).sort();
}
export function machineColor(id) {
  let i = machineOrder.indexOf(id);
  if (i < 0) {
    i = 0;
    for (const ch of String(id || '')) i = (i * 31 + ch.charCodeAt(0)) >>> 0;
  }
  return MACHINE_PALETTE[i % MACHINE_PALETTE.length];
}

// The machines the store knows (GET /api/machines), fetched at most every 30 s; also
// fixes each machine's colour. loadMachineInfo adds which one is this server's ("this").
let machinesPromise = null;
let machinesAt = 0;
export function loadMachineInfo() {
  if (!machinesPromise || Date.now() - machinesAt > 30000) {
    machinesAt = Date.now();
    machinesPromise = api.machines().then((data) => {
      const list = machineList(data);
      setMachines(list);
      return { list, thisId: (data && !Array.isArray(data) && data.this) || null };
    }).catch((err) => {
      machinesPromise = null;
      throw err;
    });
  }
  return machinesPromise;
}
// Read the machines again on the next load (after an import brought new ones).
export function forgetMachines() {
  machinesPromise = null;
}
export function loadMachines() {
  return loadMachineInfo().then((info) => info.list);
}

// An experiment in one of these states will not change any more.
export const FINISHED = new Set(['done', 'failed', 'cancelled']);

// "2^25", "1<<25" or "33554432" -> 33554432; anything else comes back as it was typed,
// for the API to say what is wrong with it.
export function parseCount(s) {
  const t = String(s).trim();
  let m = /^2\s*\^\s*(\d+)$/.exec(t);
  if (m) return 2 ** Number(m[1]);
  m = /^1\s*<<\s*(\d+)$/.exec(t);
  if (m) return 2 ** Number(m[1]);
  if (/^-?\d+(\.\d+)?(e\d+)?$/i.test(t)) return Number(t);
  return t;
}

// ---- formatting: the unit is always printed ----
export function fmtNum(x, digits = 3) {
  if (x === null || x === undefined || Number.isNaN(x)) return '—';
  const a = Math.abs(x);
  if (a < 1e-9) return '0'; // floating-point dust, e.g. the spread of identical reps
  if (a < 0.001 || a >= 1e6) return x.toExponential(2);
  return Number(x.toPrecision(digits)).toLocaleString('en-US', { maximumFractionDigits: 6 });
}
export function fmtMs(ms) {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 1) return `${fmtNum(ms * 1000)} µs`;
  if (ms >= 1000) return `${fmtNum(ms / 1000)} s`;
  return `${fmtNum(ms)} ms`;
}
// A result's reps in two groups (result.rep_modes, server/API.md), in a few words.
export function twoGroups(m) {
  return `two groups: ${fmtMs(m.fast_ms)} × ${m.fast_reps} and ${fmtMs(m.slow_ms)} × ${m.slow_reps}`;
}
// Beside a median in a list or table: ▲ where the run's reps fell in two groups, the groups on hover.
export function modesMark(result) {
  const m = result?.rep_modes;
  return m ? h('span', { class: 'modes-mark', title: `${twoGroups(m)}: the median is neither` }, ' ▲') : null;
}
export function fmtUs(us) {
  if (us === null || us === undefined || !Number.isFinite(us)) return '—';
  return Math.abs(us) >= 1000 ? `${fmtNum(us / 1000, 4)} ms` : `${fmtNum(us, 4)} µs`;
}
export function fmtBytes(b) {
  if (!b && b !== 0) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let x = b;
  while (x >= 1024 && i < units.length - 1) {
    x /= 1024;
    i += 1;
  }
  return `${fmtNum(x)} ${units[i]}`;
}
export function fmtGbps(g) {
  return g === null || g === undefined || !Number.isFinite(g) ? '—' : `${fmtNum(g)} GB/s`;
}
export function fmtPct(f) {
  return f === null || f === undefined || !Number.isFinite(f) ? '—' : `${fmtNum(f * 100, 3)} %`;
}
// Elements of float32: 33554432 -> "2^25"; anything else in plain digits.
export function fmtSize(n) {
  if (!n) return '—';
  const l = Math.log2(n);
  return Number.isInteger(l) ? `2^${l}` : Number(n).toLocaleString('en-US');
}
export function fmtSizeLong(n) {
  return n ? `${fmtSize(n)} elements (${fmtBytes(n * 4)})` : '—';
}
export function fmtTime(iso) {
  if (!iso) return '—';
  const d = new Date(typeof iso === 'number' ? iso * (iso < 1e12 ? 1000 : 1) : iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return d.toLocaleString('en-GB', { dateStyle: 'short', timeStyle: 'medium' });
}
// "e-49e7c0f56635728f" -> "e-49e7c0f5": the kind prefix and 8 hex digits, enough to tell apart.
export function shortId(id) {
  const s = String(id || '');
  const m = /^([a-z]+-)?([0-9a-z]+)$/i.exec(s);
  if (m && m[2].length > 8) return `${m[1] || ''}${m[2].slice(0, 8)}`;
  return s;
}

// ---- links: every view's state lives in the hash ----
// hashFor('run', id, {t0: 1}) -> '#/run/ID?t0=1'
export function hashFor(view, id, params) {
  const p = params instanceof URLSearchParams ? params : new URLSearchParams();
  if (!(params instanceof URLSearchParams)) {
    for (const [k, v] of Object.entries(params || {})) {
      if (v !== undefined && v !== null && v !== '') p.set(k, String(v));
    }
  }
  const qs = p.toString().replace(/%2C/g, ',');
  return `#/${view}${id ? `/${encodeURIComponent(id)}` : ''}${qs ? `?${qs}` : ''}`;
}

// ---- DOM ----
// h('a', {href: '#/runs', class: 'x', onclick: fn}, 'text', child, [more children])
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'style' && typeof v === 'object') Object.assign(el.style, v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k in el && typeof v !== 'string') el[k] = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  append(el, children);
  return el;
}
function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export function statusBadge(status) {
  return h('span', { class: `badge st-${status}` }, status);
}
export function machineChip(id, name) {
  return h('span', { class: 'machine-chip', title: id },
    h('i', { style: { background: machineColor(id) } }), name || shortId(id));
}
export function opSwatch(op) {
  return h('span', { class: 'op-swatch' }, h('i', { style: { background: OP_COLORS[op] } }), OP_LABELS[op]);
}
export function errorBox(err) {
  return h('div', { class: 'error-box', role: 'alert' },
    h('b', {}, err.code ? `${err.code}: ` : 'error: '), err.message || String(err));
}

// A machine's readable name: hostname and its GPUs ("2 × NVIDIA H100 80GB HBM3" where
// several share a name, "A + B" where they differ).
function machineGpus(m) {
  return (m && (m.gpus || m.devices)) || [];
}
function machineGpuName(m) {
  const names = machineGpus(m).map((g) => g && g.name).filter(Boolean);
  if (names.length < 2) return names[0] || '';
  return names.every((n) => n === names[0]) ? `${names.length} × ${names[0]}` : names.join(' + ');
}
export function machineName(m) {
  if (!m) return '';
  const gpu = machineGpuName(m);
  const host = m.label || m.hostname || shortId(m.id);
  return gpu ? `${host} · ${gpu}` : host;
}

// ---- simulated runs (spec.sim_of, result.backend "sim") ----
// A run is simulated when its result says so, when it asked for the simulator (sim_of, or
// backend sim), or, still without a result, when it runs on a GPU-less server (auto).
export function isSimulated(e, machine) {
  const s = (e && e.spec) || {};
  if (s.sim_of) return true;
  if (e && e.result && e.result.backend) return e.result.backend === 'sim';
  if (s.backend === 'sim') return true;
  return s.backend !== 'cuda' && !!machine && machine.backend === 'sim';
}
// The id of the machine a run simulated (sim_of), or null.
export function simOf(e) {
  return (e && e.spec && e.spec.sim_of) || null;
}
// A simulatable machine's short name: its profile's name, else its label or hostname.
export function simName(m, id) {
  if (!m) return shortId(id);
  return (m.profile && m.profile.name) || m.label || m.hostname || shortId(m.id);
}
// Where a run's numbers come from, for grouping and legends: the machine measured, or
// the machine simulated (sim_of; without it, the running machine's simulated device).
// key: the machine id when measured, "sim:<id>" when simulated; colorId: the machine
// whose colour the series wears (a simulation in a lighter shade of it).
export function runSource(e, byId = {}) {
  const run = byId[e.machine_id];
  const target = simOf(e);
  if (target) {
    const m = byId[target];
    return {
      key: `sim:${target}`, machineId: target, colorId: target, simulated: true, simOf: target,
      short: `sim of ${simName(m, target)}`,
      label: `simulation of ${simName(m, target)}${m && machineGpuName(m) ? ` · ${machineGpuName(m).replace(/^Simulated /, '')}` : ''}`,
    };
  }
  const host = run ? run.label || run.hostname || shortId(run.id) : shortId(e.machine_id);
  if (isSimulated(e, run)) {
    const device = (e.result && e.result.extra && e.result.extra.device) || (run && machineGpuName(run)) || '';
    return {
      key: `sim:${e.machine_id}`, machineId: e.machine_id, colorId: e.machine_id, simulated: true, simOf: null,
      short: `${host} (sim)`,
      label: `${host} · simulated${device ? ` ${device.replace(/^Simulated /, '')}` : ''}`,
    };
  }
  return {
    key: e.machine_id, machineId: e.machine_id, colorId: e.machine_id, simulated: false, simOf: null,
    short: host, label: run ? machineName(run) : shortId(e.machine_id),
  };
}
// The marker beside a run's machine: "sim" (this machine's simulated device) or
// "sim of lent-h200" (another machine's calibration), in the simulated machine's colour.
export function simBadge(e, byId = {}) {
  if (!isSimulated(e, byId[e.machine_id])) return null;
  const target = simOf(e);
  const device = e.result && e.result.extra && e.result.extra.device;
  const title = target
    ? `simulated with the calibration of ${simName(byId[target], target)} (${target})${device ? `: ${device}` : ''}; not measured`
    : `simulated${device ? `: ${device}` : ''}; not measured`;
  return h('span', { class: 'badge sim', title, dataset: { simOf: target || '' } },
    target ? h('i', { style: { background: machineColor(target) } }) : null,
    target ? `sim of ${simName(byId[target], target)}` : 'sim');
}
// A machine's colour as a translucent fill: how a simulated series is drawn.
export function lighter(color, alpha = 0.35) {
  const m = /^#([0-9a-f]{6})$/i.exec(color);
  if (!m) return color;
  const n = parseInt(m[1], 16);
  return `rgba(${n >> 16}, ${(n >> 8) & 255}, ${n & 255}, ${alpha})`;
}

// Nested JSON as rows of (path, value), for property tables:
// {a: {b: 1}, c: [{d: 2}]} -> [["a.b", 1], ["c[0].d", 2]]
export function flatten(obj, prefix = '', out = []) {
  if (obj === null || typeof obj !== 'object') {
    out.push([prefix, obj]);
    return out;
  }
  if (Array.isArray(obj) && obj.every((x) => x === null || typeof x !== 'object')) {
    out.push([prefix, obj.join(', ')]);
    return out;
  }
  for (const [k, v] of Object.entries(obj)) {
    flatten(v, Array.isArray(obj) ? `${prefix}[${k}]` : prefix ? `${prefix}.${k}` : k, out);
  }
  return out;
}

// ---- Chart.js ----
export function chartDefaults() {
  const C = window.Chart;
  C.defaults.color = '#b8c0cc';
  C.defaults.borderColor = 'rgba(255,255,255,0.08)';
  C.defaults.font.family = getComputedStyle(document.body).fontFamily;
  C.defaults.font.size = 12;
  C.defaults.animation = false;
  C.defaults.maintainAspectRatio = false;
  C.defaults.plugins.tooltip.backgroundColor = 'rgba(12,15,20,0.95)';
  C.defaults.plugins.tooltip.borderColor = 'rgba(255,255,255,0.15)';
  C.defaults.plugins.tooltip.borderWidth = 1;
  C.defaults.plugins.legend.labels.boxWidth = 14;
}

// A result carries the model's prediction (null or negative where no 1-stream trace exists).
export function hasPrediction(r) {
  return !!r && Number.isFinite(r.predicted_ms) && r.predicted_ms >= 0;
}

// How long the host took to issue a rep of the experiment (extra.timing.issue_us_clean, the clean
// reps' median, server/API.md) and that over its chunks, in µs; null where it is not recorded, or
// for tuned, whose stored spec is the request and not the chunks it chose.
export function hostIssue(e) {
  const us = e?.spec?.variant === 'tuned' ? 0 : e?.result?.extra?.timing?.issue_us_clean;
  if (!(us > 0)) return null;
  return { us, perChunk: us / (e.spec.chunks || e.spec.streams || 1) };
}

// A simulated run's host-pace band (result.extra.host_pace, server/API.md: the run again with
// the host's calls some times as dear as calibrated), or null where it has none.
export function hostPace(e) {
  const pace = e?.result?.backend === 'sim' ? e.result.extra?.host_pace : null;
  const ok = pace && pace.min_ms > 0 && pace.max_ms >= pace.min_ms && Array.isArray(pace.scales)
    && pace.scales.length > 0 && Array.isArray(pace.total_ms) && pace.total_ms.length === pace.scales.length;
  return ok ? pace : null;
}

// The band's scales as words: "0.9–2×".
export function paceSpan(pace) {
  return `${pace.scales[0]}–${pace.scales[pace.scales.length - 1]}×`;
}

// The experiment's total median in ms, or null.
export function totalMs(e) {
  const t = e && e.result && e.result.total_ms;
  if (t === null || t === undefined) return null;
  return typeof t === 'number' ? t : t.median;
}
