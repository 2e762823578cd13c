// examples.js — the example results the server ships (GET /api/examples: bundles of real runs
// measured on lent GPUs, from the repo's examples/ folder), as the Runs view offers them: a
// card listing each bundle (file, machines, experiments, date) with one button that imports
// them all (POST /api/examples, idempotent; the token is asked for on a 401 like any POST),
// and, once imported, a line saying what came in with links to those machines' runs and to
// Compare with them side by side. Holds no state but the last import's answer, which the
// Runs view shows once after it draws itself again.

import { api } from './api.js';
import { h, hashFor, fmtBytes, shortId, machineName, simName, forgetMachines, loadMachines, errorBox } from './ui.js';

// The fields Compare groups by (compare.js CONFIG_FIELDS), and whom a run simulated.
const CONFIG_FIELDS = ['variant', 'size', 'streams', 'chunks', 'kernel', 'kernel_iters', 'block_size', 'launch',
  'host_memory', 'default_stream', 'stream_flags', 'flush', 'driver_mode', 'timing', 'devices', 'sim_of'];
const COMPARE_MAX = 12; // runs in the Compare link: enough configurations to read, few enough to load

let lastImport = null;

// GET /api/examples' items, or [] where the server has none (or no such endpoint).
export async function listExamples() {
  try {
    const data = await api.examples();
    return { items: Array.isArray(data && data.items) ? data.items : [], dir: (data && data.dir) || '' };
  } catch {
    return { items: [], dir: '' };
  }
}

// A bundle's machine as the server names it ("label (GPU name)", or the label, GPU name or
// host name alone): the label part, and the store's machine of that label where it knows it
// (the profiles' machines are in every store; the imported ones after the import).
function refLabel(ref) {
  if (ref && typeof ref === 'object') return ref.label || ref.hostname || shortId(ref.id);
  return String(ref || '').replace(/ \(.*\)$/, '');
}
function findMachine(ref, machines) {
  const full = ref && typeof ref === 'object' ? ref.id || '' : String(ref || '');
  const r = refLabel(ref);
  return machines.find((m) => m.id === full || m.label === r || m.label === full || m.hostname === r
    || (m.profile && m.profile.name === r)) || null;
}
function refName(ref, machines) {
  const m = findMachine(ref, machines);
  return m ? simName(m, m.id) : refLabel(ref);
}
function joinAnd(names) {
  return names.length <= 1 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}
function machineRefs(items) {
  const seen = new Map();
  for (const it of items) {
    for (const ref of it.machines || []) {
      const k = typeof ref === 'object' && ref !== null ? ref.id || JSON.stringify(ref) : String(ref);
      if (!seen.has(k)) seen.set(k, ref);
    }
  }
  return [...seen.values()];
}

// The offer: a card with the bundles and the button. onLoaded() runs after the import.
export function examplesOffer(items, dir, machines, onLoaded, { compact = false } = {}) {
  const names = joinAnd([...new Set(machineRefs(items).map((ref) => refName(ref, machines)))]);
  const total = items.reduce((n, it) => n + (Number(it.experiments) || 0), 0);
  const status = h('div', { class: 'examples-status', id: 'examples-status', role: 'status' });
  const button = h('button', { type: 'button', class: `primary${compact ? ' small' : ''}`, id: 'load-examples' },
    `Load ${total} example run${total === 1 ? '' : 's'}`);
  button.addEventListener('click', async () => {
    button.disabled = true;
    status.replaceChildren(h('span', { class: 'muted' }, 'importing the examples…'));
    try {
      const counts = await api.importExamples();
      lastImport = { counts: counts || {}, refs: machineRefs(items) };
      forgetMachines(); // the import brought machines: the next view reads them again
      onLoaded(lastImport);
    } catch (err) {
      button.disabled = false;
      status.replaceChildren(errorBox(err));
    }
  });
  // a file the server could not read is listed with what is wrong with it
  const rows = items.map((it) => h('tr', { dataset: { file: it.file } },
    h('td', { class: 'mono' }, it.file),
    it.error ? h('td', { class: 'bad' }, it.error)
      : h('td', {}, (it.machines || []).map((ref) => h('span', { class: 'chip-static example-machine', title: typeof ref === 'string' ? ref : '' }, typeof ref === 'string' ? ref : refName(ref, machines)))),
    h('td', { class: 'num' }, it.experiments ?? '—'),
    h('td', { class: 'nowrap' }, it.measured ? String(it.measured).slice(0, 10) : '—'),
    h('td', { class: 'num' }, fmtBytes(it.bytes))));
  return h('section', { class: `card examples-offer${compact ? ' compact' : ''}`, id: 'examples-offer' },
    h(compact ? 'h3' : 'h2', {}, `Load example results: real runs measured on ${names || 'lent GPUs'}`),
    h('p', { class: 'muted' }, 'Bundles that ship with streamlab', dir ? [' (', h('code', {}, dir), ')'] : '',
      ': import them into this store to see timelines, sweeps and a comparison of real GPUs before running anything. Importing twice changes nothing.'),
    h('table', { class: 'grid examples-list', id: 'examples-list' },
      h('thead', {}, h('tr', {}, ['file', 'machines', 'experiments', 'measured', 'size'].map((t) => h('th', {}, t)))),
      h('tbody', {}, rows)),
    h('div', { class: 'examples-actions' }, button, status));
}

// The answer of the last import, once: the Runs view shows it after drawing itself again.
export function takeLastImport() {
  const x = lastImport;
  lastImport = null;
  return x;
}

// A run's configuration as Compare groups it.
function configKey(s) {
  return JSON.stringify(CONFIG_FIELDS.map((k) => (s || {})[k] ?? null));
}

// Runs for the Compare link: configurations that several imported machines ran, one run of
// each machine (the newest); with one machine, its newest runs.
async function compareIds(machineIds) {
  const lists = await Promise.all(machineIds.map((id) => api.experiments({ machine: id, status: 'done', limit: 500 })
    .then((p) => p.items || []).catch(() => [])));
  const byConfig = new Map();
  for (const [i, list] of lists.entries()) {
    for (const e of list) {
      const k = configKey(e.spec);
      if (!byConfig.has(k)) byConfig.set(k, new Map());
      const runs = byConfig.get(k);
      if (!runs.has(i)) runs.set(i, e.id);
    }
  }
  const shared = [...byConfig.values()].filter((runs) => runs.size > 1);
  const ids = [];
  for (const runs of shared) {
    if (ids.length + runs.size > COMPARE_MAX) break;
    ids.push(...runs.values());
  }
  if (ids.length) return ids;
  return lists.flat().slice(0, Math.min(6, COMPARE_MAX)).map((e) => e.id);
}

// What the import brought, with links: a machine's runs, and Compare.
export function importedNotice(done, ctx) {
  const c = done.counts;
  const el = h('section', { class: 'card examples-loaded', id: 'examples-loaded', role: 'status' },
    h('b', {}, 'Example results loaded: '),
    `${c.imported ?? 0} run${c.imported === 1 ? '' : 's'} imported`,
    c.unchanged ? `, ${c.unchanged} already here` : '',
    c.machines !== undefined ? `, ${c.machines} machine${c.machines === 1 ? '' : 's'} added or updated` : '',
    '. ');
  const links = h('span', { class: 'examples-links' });
  el.append(links);
  (async () => {
    const machines = await loadMachines().catch(() => []);
    const found = done.refs.map((ref) => findMachine(ref, machines)).filter(Boolean);
    if (!ctx.alive()) return;
    for (const m of found) {
      links.append(h('a', { class: 'button small', href: hashFor('runs', null, { machine: m.id }), dataset: { machine: m.id } },
        `runs of ${simName(m, m.id)}`), ' ');
    }
    const ids = found.length ? await compareIds(found.map((m) => m.id)) : [];
    if (!ctx.alive()) return;
    if (ids.length) links.append(h('a', { class: 'button small primary', id: 'examples-compare', href: hashFor('compare', null, { ids: ids.join(',') }),
      title: found.map((m) => machineName(m)).join(' vs ') }, found.length > 1 ? `compare ${joinAnd(found.map((m) => simName(m, m.id)))}` : 'compare them'));
    el.dataset.links = '1';
  })();
  return el;
}
