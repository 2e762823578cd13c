// submit.js — the Submit view: one experiment (POST /api/experiments) or a sweep
// (POST /api/sweeps, every field that holds several values becomes an axis). Every field
// shows its default and allowed values from API.md; the request body sends only what
// differs from the defaults, so the stored spec is the server's defaults plus the user's
// choices. The API's validation error {"error": {code, message, field}} is shown beside
// the field it names. The form's state lives in the hash: a prefilled form is a link.
// The Machine choice runs the experiment here, or on the simulator with the calibration
// of another machine the store knows (spec.sim_of; GET /api/machines marks which are
// simulatable): such a run is simulated, never measured.

import { api } from './api.js';
import {
  h, hashFor, fmtSizeLong, parseCount, VARIANTS, variantColor, loadMachineInfo, machineColor, machineName,
  shortId, simName,
} from './ui.js';

// API.md "Experiment spec" and server/API.md's additions. def: the server's default
// (gpu/backend.c spec_defaults); the browser tests check that they agree.
const FIELDS = [
  { group: 'Machine', name: 'sim_of', type: 'machine', def: '', axis: false,
    help: 'this machine: its own GPU (a GPU-less server simulates its default device) · simulate: the simulator with that machine’s calibration; the result is simulated, not measured' },
  { group: 'Pipeline', name: 'variant', type: 'enum', values: VARIANTS, def: 'async_v1', axis: true,
    help: 'how the work is issued: sequential, depth-first (async_v1), breadth-first (async_v2), …; zero_copy: no copies, the kernel reads and writes pinned host memory' },
  { group: 'Pipeline', name: 'size', type: 'size', def: 33554432, axis: true,
    help: 'elements of float32; 2^25 or 33554432' },
  { group: 'Pipeline', name: 'streams', type: 'int', def: 8, min: 1, max: 1024, axis: true,
    help: 'CUDA streams the chunks are issued on (zero_copy’s default: 1)' },
  { group: 'Pipeline', name: 'chunks', type: 'int', def: null, min: 1, max: 65536, axis: true,
    help: 'default: = streams; round_robin spreads chunks over streams' },
  { group: 'Kernel', name: 'kernel', type: 'enum', values: ['blog', 'fill', 'compute'], def: 'blog', axis: true,
    help: 'blog: sin/cos/sqrt as in the seeds · fill: a[i]=i · compute: kernel_iters rounds' },
  { group: 'Kernel', name: 'kernel_iters', type: 'int', def: 1, min: 1, axis: true, help: 'compute kernel rounds' },
  { group: 'Kernel', name: 'block_size', type: 'int', def: 256, min: 32, max: 1024, axis: true,
    help: 'threads per block, multiple of 32' },
  { group: 'Kernel', name: 'launch', type: 'enum', values: ['chunk', 'max_occupancy'], def: 'chunk', axis: true,
    help: 'chunk: one thread per element · max_occupancy: grid-stride, SMs × blocks/SM (zero_copy’s default)' },
  { group: 'Host and streams', name: 'host_memory', type: 'enum', values: ['pinned', 'pageable'], def: 'pinned', axis: true,
    help: 'pageable makes cudaMemcpyAsync synchronous with the host' },
  { group: 'Host and streams', name: 'default_stream', type: 'enum', values: ['legacy', 'per_thread'], def: 'per_thread', axis: true,
    help: 'legacy synchronises with every blocking stream' },
  { group: 'Host and streams', name: 'stream_flags', type: 'enum', values: ['default', 'non_blocking'], def: 'default', axis: true },
  { group: 'Host and streams', name: 'flush', type: 'enum', values: ['none', 'stream_query'], def: 'none', axis: true,
    help: 'stream_query: cudaStreamQuery after each stream’s work (the WDDM remedy)' },
  { group: 'Measurement', name: 'driver_mode', type: 'enum', values: ['auto', 'linux', 'tcc', 'wddm'], def: 'auto', axis: true,
    help: 'the driver model the run requires; a mismatch is refused' },
  { group: 'Measurement', name: 'timing', type: 'enum', values: ['events', 'cupti'], def: 'events', axis: true },
  { group: 'Measurement', name: 'trace_ops', type: 'enum', values: ['sampled', 'all'], def: 'sampled', axis: true,
    help: 'the timeline\'s events: around a share of the ops per traced rep (cheap), or around every op (the seeds\' way)' },
  { group: 'Measurement', name: 'reps', type: 'reps', def: 10, min: 1, max: 1000, axis: true,
    help: 'measured repetitions, or auto' },
  { group: 'Measurement', name: 'warmup', type: 'int', def: 2, min: 0, axis: true, help: 'unmeasured repetitions first' },
  { group: 'Measurement', name: 'devices', type: 'intlist', def: [0], axis: false,
    help: 'device indices; multi_gpu: several (its default: 0,1)' },
  { group: 'Measurement', name: 'backend', type: 'enum', values: ['auto', 'cuda', 'sim'], def: 'auto', axis: true,
    help: 'auto: cuda where a device is present, else sim' },
  { group: 'Measurement', name: 'predict', type: 'bool', values: ['false', 'true'], def: false, axis: false,
    help: 'also run the 1-stream basis and record the model’s prediction beside the measurement' },
  { group: 'Measurement', name: 'label', type: 'text', def: '', axis: false, help: 'free text; Runs filters by it' },
  { group: 'host_overlap only', name: 'sync', type: 'bool', values: ['false', 'true'], def: false, axis: true,
    help: 'synchronise before the host computes its share' },
  { group: 'host_overlap only', name: 'host_share', type: 'number', def: 0.5, min: 0, max: 0.95, axis: true,
    help: 'the fraction of the elements the host computes' },
];
const CHOICE = new Set(['enum', 'bool', 'machine']);
// devices defaults to [0], and to [0, 1] for multi_gpu: the field follows the variant
// until the user types in it.
const devicesDefault = (variant) => (variant === 'multi_gpu' ? '0,1' : '0');
const BY_NAME = Object.fromEntries(FIELDS.map((f) => [f.name, f]));

export const PRESETS = [
  { title: 'Streams sweep', text: 'sequential vs depth-first vs breadth-first, 1 … 64 streams',
    params: { mode: 'sweep', variant: 'sequential,async_v1,async_v2', streams: '1,2,4,8,16,32,64', size: '2^24' } },
  { title: 'Size sweep', text: 'async_v1 with 8 streams, 2^18 … 2^26 elements',
    params: { mode: 'sweep', variant: 'async_v1', streams: '8', size: '2^18,2^20,2^22,2^24,2^26' } },
  { title: 'Pinned vs pageable', text: 'what pageable host memory costs async_v1',
    params: { mode: 'sweep', variant: 'async_v1', host_memory: 'pinned,pageable', streams: '1,4,16' } },
];

// ---- parsing one text value ----
function parseValue(field, s) {
  if (field.type === 'text') return s;
  if (field.type === 'enum' || field.type === 'machine') return s.trim();
  if (field.type === 'bool') return s.trim() === 'true';
  if (field.type === 'reps' && s.trim() === 'auto') return 'auto';
  return parseCount(s);
}
function splitList(s) {
  return s.split(',').map((x) => x.trim()).filter((x) => x !== '');
}
function sameValue(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

// The form's values: {name: [values]} (one value each in single mode).
function readForm(form, mode) {
  const values = {};
  for (const f of FIELDS) {
    if (CHOICE.has(f.type)) {
      const checked = [...form.querySelectorAll(`input[name="${f.name}"]:checked`)].map((i) => parseValue(f, i.value));
      values[f.name] = checked;
    } else {
      const input = form.elements[f.name];
      const raw = input.value;
      if (f.type === 'text') values[f.name] = raw ? [raw] : [];
      else if (f.type === 'intlist') values[f.name] = raw.trim() && input.dataset.touched ? [splitList(raw).map(parseCount)] : [];
      else if (mode === 'sweep' && f.axis) values[f.name] = splitList(raw).map((x) => parseValue(f, x));
      else values[f.name] = raw.trim() ? [parseValue(f, raw)] : [];
    }
  }
  return values;
}

// {name: [values]} -> the request body and the sweep's point count.
function buildRequest(values, mode) {
  const base = {};
  const axes = {};
  for (const f of FIELDS) {
    const vs = values[f.name];
    if (!vs.length) continue;
    if (mode === 'sweep' && vs.length > 1) axes[f.name] = vs;
    else if (f.name === 'variant' || f.type === 'intlist' || !sameValue(vs[0], f.def)) base[f.name] = vs[0];
  }
  // another machine's calibration runs on the simulator only
  if (base.sim_of) {
    base.backend = 'sim';
    delete axes.backend;
  }
  if (mode === 'single') return { path: '/api/experiments', body: base, points: 1 };
  const points = Object.values(axes).reduce((n, vs) => n * vs.length, 1);
  return { path: '/api/sweeps', body: { base, axes }, points, axes };
}

// JSON with two-space indents and lists of plain values on one line.
const SCALAR = String.raw`(?:"(?:[^"\\]|\\.)*"|-?[\d.eE+]+|true|false|null)`;
const SCALAR_LIST = new RegExp(String.raw`\[\s*(${SCALAR}(?:,\s*${SCALAR})*)\s*\]`, 'g');
function prettyJson(v) {
  return JSON.stringify(v, null, 2).replace(SCALAR_LIST, (_, inner) => `[${inner.split(/,\s*\n\s*/).join(', ')}]`);
}

// Which field an API error names: "streams", "base.streams", "axes.streams[2]" -> streams.
function fieldOf(errField) {
  if (!errField) return null;
  const tokens = String(errField).split(/[^a-z_]+/i).reverse();
  return tokens.find((t) => BY_NAME[t]) || null;
}

// The form values as hash parameters (only what differs from the defaults).
function toParams(values, mode) {
  const p = {};
  if (mode === 'sweep') p.mode = 'sweep';
  for (const f of FIELDS) {
    const vs = values[f.name];
    if (!vs.length) continue;
    if (f.name !== 'variant' && vs.length === 1 && sameValue(vs[0], f.def)) continue;
    p[f.name] = f.type === 'intlist' ? vs[0].join(',') : vs.map(String).join(',');
  }
  return p;
}

// The Machine choice: this machine, then every simulatable machine other than this one
// (profiles first: their name and the date they were measured).
function machineOptions(info, initial) {
  const list = info.list || [];
  const here = list.find((m) => m.id === info.thisId);
  const opts = [{ value: '', colorId: info.thisId, text: 'this machine', sub: here ? machineName(here) : '' }];
  const others = list.filter((m) => m.simulatable && m.id !== info.thisId);
  others.sort((a, b) => (a.profile ? 0 : 1) - (b.profile ? 0 : 1) || simName(a).localeCompare(simName(b)));
  for (const m of others) {
    const gpu = ((m.gpus || m.devices || [])[0] || {}).name || (m.profile && m.profile.gpu_name) || '';
    const p = m.profile;
    const sub = p ? `${p.gpu_name || gpu.replace(/^Simulated /, '')} · profile measured ${String(p.measured_at || '').slice(0, 10) || '?'}`
      : `${gpu.replace(/^Simulated /, '')}${m.hostname && m.hostname !== simName(m) ? ` · ${m.hostname}` : ''}`;
    opts.push({ value: m.id, colorId: m.id, text: `simulate ${simName(m)}`, sub, profile: p ? p.name : '' });
  }
  // a link may name a machine this store does not offer: keep it, the server says why not
  const asked = initial[0];
  if (asked && !opts.some((o) => o.value === asked)) opts.push({ value: asked, colorId: asked, text: `simulate ${shortId(asked)}`, sub: 'not a simulatable machine here' });
  return opts;
}

function fieldControl(f, mode, initial, ctxVariant, info) {
  const multi = mode === 'sweep' && f.axis;
  if (f.type === 'machine') {
    const picked = initial[0] || '';
    return h('div', { class: 'chips machine-pick', role: 'radiogroup', id: 'machine-pick' },
      machineOptions(info, initial).map((o) => h('label', { class: `chip${o.value ? ' sim' : ''}`, dataset: { machine: o.value, profile: o.profile || '' } },
        h('input', { type: 'radio', name: f.name, value: o.value, checked: o.value === picked }),
        h('i', { class: 'swatch', style: { background: machineColor(o.colorId) } }),
        h('span', {}, o.text, o.sub ? h('small', {}, o.sub) : null))));
  }
  if (CHOICE.has(f.type)) {
    const picked = new Set(initial.length ? initial : [String(f.def)]);
    return h('div', { class: `chips${multi ? ' multi' : ''}`, role: multi ? 'group' : 'radiogroup' },
      f.values.map((v) => h('label', { class: 'chip' },
        h('input', { type: multi ? 'checkbox' : 'radio', name: f.name, value: v, checked: picked.has(v) }),
        f.name === 'variant' ? h('i', { class: 'dot', style: { background: variantColor(v) } }) : null,
        h('span', {}, v))));
  }
  let value = '';
  if (initial.length) value = initial.join(',');
  else if (f.type === 'intlist') value = devicesDefault(ctxVariant);
  else if (f.def !== null && f.type !== 'text') value = f.type === 'size' ? `2^${Math.log2(f.def)}` : String(f.def);
  let placeholder = f.def === null ? '= streams' : '';
  if (multi) placeholder = f.type === 'size' ? 'e.g. 2^20,2^22,2^24' : 'one value, or a list: 1,2,4';
  return h('input', {
    type: 'text', name: f.name, value, placeholder, autocomplete: 'off', spellcheck: 'false',
    inputmode: f.type === 'text' ? 'text' : 'numeric',
    dataset: f.type === 'intlist' && initial.length ? { touched: '1' } : {},
  });
}

function defaultText(f) {
  if (f.type === 'machine') return 'default: this machine';
  if (f.def === null) return 'default = streams';
  if (f.type === 'text') return 'optional';
  if (f.type === 'intlist') return 'default [0]; multi_gpu [0,1]';
  if (f.type === 'bool') return `default ${f.def}`;
  if (f.type === 'size') return `default 2^${Math.log2(f.def)}`;
  return `default ${f.def}`;
}
function rangeText(f) {
  if (CHOICE.has(f.type)) return '';
  if (f.min !== undefined && f.max !== undefined) return ` · ${f.min} … ${f.max}`;
  if (f.min !== undefined) return ` · ≥ ${f.min}`;
  return '';
}

export async function render(root, ctx) {
  const mode = ctx.params.get('mode') === 'sweep' ? 'sweep' : 'single';
  const initial = (f) => {
    const v = ctx.params.get(f.name);
    if (v === null) return [];
    if (!CHOICE.has(f.type)) return [v];
    const vs = splitList(v);
    return mode === 'sweep' ? vs : vs.slice(0, 1);
  };

  const general = h('div', { class: 'form-error', id: 'form-error', hidden: true });
  const preview = h('pre', { class: 'request-preview', id: 'request-preview' });
  const count = h('span', { class: 'points', id: 'points' });
  const submitBtn = h('button', { type: 'submit', class: 'primary', id: 'submit-button' },
    mode === 'sweep' ? 'Queue sweep' : 'Queue experiment');

  const info = await loadMachineInfo().catch(() => ({ list: [], thisId: null }));
  if (!info.thisId) info.thisId = await api.health().then((hl) => hl.machine_id || null).catch(() => null);
  if (!ctx.alive()) return;
  const firstVariant = initial(BY_NAME.variant)[0] || BY_NAME.variant.def;
  const groups = {};
  for (const f of FIELDS) {
    const init = initial(f);
    const row = h('div', { class: 'field', dataset: { field: f.name } },
      h('div', { class: 'field-head' },
        h('label', { class: 'field-name', for: CHOICE.has(f.type) ? null : `f-${f.name}` }, f.name),
        h('span', { class: 'field-default' }, defaultText(f) + rangeText(f))),
      fieldControl(f, mode, init, firstVariant, info),
      f.help ? h('div', { class: 'field-help' }, f.help) : null,
      h('div', { class: 'field-error', role: 'alert' }));
    const input = row.querySelector('input[type=text]');
    if (input) input.id = `f-${f.name}`;
    (groups[f.group] = groups[f.group] || []).push(row);
  }

  const form = h('form', { class: 'spec-form', id: 'spec-form', novalidate: true },
    Object.entries(groups).map(([g, rows]) => h('fieldset', {}, h('legend', {}, g), rows)));
  submitBtn.setAttribute('form', 'spec-form');

  const modeSwitch = h('div', { class: 'segmented', role: 'tablist' },
    h('a', { href: hashFor('submit', null, { ...Object.fromEntries(ctx.params), mode: null }), class: mode === 'single' ? 'on' : '', id: 'mode-single' }, 'One experiment'),
    h('a', { href: hashFor('submit', null, { ...Object.fromEntries(ctx.params), mode: 'sweep' }), class: mode === 'sweep' ? 'on' : '', id: 'mode-sweep' }, 'Sweep'));

  root.append(
    h('section', { class: 'page-head' },
      h('h1', {}, mode === 'sweep' ? 'Submit a sweep' : 'Submit an experiment'),
      modeSwitch,
      h('p', { class: 'lede' }, mode === 'sweep'
        ? 'Give any field several values (comma-separated, or several chips): the sweep is their cross product, queued in order.'
        : 'Every field starts at the server’s default; only what you change is sent.')),
    h('div', { class: 'submit-layout' },
      form,
      h('aside', { class: 'side' },
        h('div', { class: 'form-actions' }, submitBtn, count),
        general,
        h('h3', {}, 'Request'), preview,
        h('p', { class: 'hint' }, 'The same request from a script: ', h('code', {}, 'curl -X POST -H "Content-Type: application/json" -d @body.json'), ' to the path above.'),
        h('h3', {}, 'Start from'),
        h('ul', { class: 'presets' }, PRESETS.map((p) => h('li', {},
          h('a', { href: hashFor('submit', null, p.params) }, p.title), h('span', {}, ` — ${p.text}`)))))));

  function clearErrors() {
    form.querySelectorAll('.field.has-error').forEach((el) => el.classList.remove('has-error'));
    form.querySelectorAll('.field-error').forEach((el) => { el.textContent = ''; });
    general.hidden = true;
    general.textContent = '';
  }
  function showError(err) {
    const name = fieldOf(err.field);
    const row = name && form.querySelector(`.field[data-field="${name}"]`);
    const text = `${err.message}${err.code ? ` (${err.code})` : ''}`;
    if (row) {
      row.classList.add('has-error');
      row.querySelector('.field-error').textContent = text;
      row.scrollIntoView({ block: 'center' });
    } else {
      general.hidden = false;
      general.textContent = err.field ? `${err.field}: ${text}` : text;
    }
  }

  function refresh() {
    const values = readForm(form, mode);
    const req = buildRequest(values, mode);
    preview.textContent = `POST ${req.path}\n${prettyJson(req.body)}`;
    const size = values.size.length === 1 && typeof values.size[0] === 'number' ? fmtSizeLong(values.size[0]) : '';
    form.querySelector('.field[data-field="size"] .field-help').textContent = size || BY_NAME.size.help;
    if (mode === 'sweep') {
      const axes = Object.entries(req.axes).map(([k, vs]) => `${vs.length} ${k}`);
      count.textContent = axes.length ? `${req.points} experiments = ${axes.join(' × ')}` : 'pick several values for at least one field';
    } else count.textContent = '';
    ctx.replace(toParams(values, mode));
    return req;
  }
  // simulating another machine means backend sim: the other backends are off meanwhile
  let backendForced = false;
  function syncBackend() {
    const target = form.querySelector('input[name="sim_of"]:checked')?.value || '';
    const inputs = [...form.querySelectorAll('input[name="backend"]')];
    for (const i of inputs) {
      if (target) i.checked = i.value === 'sim';
      else if (backendForced) i.checked = i.value === String(BY_NAME.backend.def);
      i.disabled = !!target && i.value !== 'sim';
    }
    backendForced = !!target;
  }
  syncBackend();
  const devices = form.elements.devices;
  devices.addEventListener('input', () => { devices.dataset.touched = '1'; });
  form.addEventListener('change', (ev) => {
    if (ev.target.name === 'sim_of') syncBackend();
    if (ev.target.name === 'variant' && !devices.dataset.touched) {
      const picked = readForm(form, mode).variant;
      devices.value = devicesDefault(picked.length === 1 ? picked[0] : '');
    }
  });
  form.addEventListener('input', refresh);
  form.addEventListener('change', refresh);
  refresh();

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    clearErrors();
    const req = refresh();
    if (mode === 'sweep' && !Object.keys(req.axes).length) {
      showError({ message: 'A sweep needs at least one field with several values (e.g. streams 1,2,4,8).' });
      return;
    }
    submitBtn.disabled = true;
    submitBtn.textContent = 'Queueing…';
    try {
      if (mode === 'sweep') {
        const res = await api.submitSweep(req.body.base, req.body.axes);
        ctx.go(hashFor('queue', null, { sweep: res.id }));
      } else {
        const res = await api.submit(req.body);
        ctx.go(hashFor('run', res.id));
      }
    } catch (err) {
      if (!ctx.alive()) return;
      const wait = err.retryAfter ? ` — retry after ${err.retryAfter} s` : '';
      showError({ code: err.code, field: err.field, message: `${err.message}${wait}` });
    } finally {
      submitBtn.disabled = false;
      submitBtn.textContent = mode === 'sweep' ? 'Queue sweep' : 'Queue experiment';
    }
  });
}
