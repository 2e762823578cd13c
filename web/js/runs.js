// runs.js — the Runs view: every experiment, newest first, a page at a time (the API's
// `next` cursor), filtered by machine, variant, size, streams, status and label, sorted
// within the page; tick several to compare them. Filters, sort, page and selection are
// all in the hash. A simulated run carries a "sim" badge beside its machine ("sim of X"
// where it simulated another machine). An empty store offers the example results the
// server ships (examples.js); a store with runs offers them too, folded under the title.

import { api } from './api.js';
import {
  h, hashFor, fmtMs, fmtPct, fmtSize, fmtTime, shortId, statusBadge, machineChip, machineName,
  totalMs, loadMachines, parseCount, VARIANTS, simBadge, modesMark,
} from './ui.js';
import { PRESETS } from './submit.js';
import { listExamples, examplesOffer, takeLastImport, importedNotice } from './examples.js';

const PAGE = 50;
const STATUSES = ['queued', 'running', 'done', 'failed', 'cancelled'];
const FILTERS = ['machine', 'variant', 'size', 'streams', 'status', 'label'];

const COLUMNS = [
  { key: 'created', title: 'when', get: (e) => e.created_at || '' },
  { key: 'machine', title: 'machine', get: (e) => `${e.machine_id || ''} ${e.spec?.sim_of || ''}` },
  { key: 'variant', title: 'variant', get: (e) => e.spec?.variant || '' },
  { key: 'size', title: 'size', get: (e) => e.spec?.size ?? 0, num: true },
  { key: 'streams', title: 'streams', get: (e) => e.spec?.streams ?? 0, num: true },
  { key: 'chunks', title: 'chunks', get: (e) => e.spec?.chunks ?? 0, num: true },
  { key: 'status', title: 'status', get: (e) => e.status || '' },
  { key: 'total', title: 'total (median)', get: (e) => totalMs(e) ?? Infinity, num: true },
  { key: 'efficiency', title: 'efficiency', get: (e) => e.result?.efficiency ?? -1, num: true },
  { key: 'overlap', title: 'overlap', get: (e) => e.result?.overlap ?? -1, num: true },
  { key: 'label', title: 'label', get: (e) => e.spec?.label || '' },
];

// The API filters by every one of these (server/API.md adds size, streams and label, the
// label matched exactly); the page is checked here too, so that it never shows a run that
// does not match.
function matches(e, f) {
  const s = e.spec || {};
  if (f.size && s.size !== parseCount(f.size)) return false;
  if (f.streams && s.streams !== Number(f.streams)) return false;
  if (f.label && String(s.label || '') !== f.label) return false; // the API matches labels exactly
  return true;
}

function bar(frac, cls) {
  if (frac === null || frac === undefined || frac < 0) return h('span', { class: 'muted' }, '—');
  return h('span', { class: 'inline-bar' },
    h('span', { class: 'track' }, h('i', { class: cls, style: { width: `${Math.min(100, Math.max(0, frac * 100))}%` } })),
    h('span', {}, fmtPct(frac)));
}

export async function render(root, ctx) {
  const p = ctx.params;
  const f = Object.fromEntries(FILTERS.map((k) => [k, p.get(k) || '']));
  const sweep = p.get('sweep') || '';
  const before = p.get('before') || '';
  const sort = p.get('sort') || 'created';
  const dir = p.get('dir') || (sort === 'created' ? 'desc' : 'asc');
  const selected = new Set((p.get('sel') || '').split(',').filter(Boolean));
  const backs = (p.get('back') || '').split(',').filter(Boolean); // cursors of the pages before this one

  const state = () => ({ ...f, sweep, before, sort, dir: dir === (sort === 'created' ? 'desc' : 'asc') ? '' : dir, sel: [...selected].join(','), back: backs.join(',') });

  const justImported = takeLastImport();
  const [machines, page, examples] = await Promise.all([
    loadMachines().catch(() => []),
    api.experiments({ ...f, size: f.size ? parseCount(f.size) : '', sweep, before, limit: PAGE }),
    listExamples(),
  ]);
  if (!ctx.alive()) return;
  const byId = Object.fromEntries(machines.map((m) => [m.id, m]));
  const items = page.items.filter((e) => matches(e, f));
  const filtered = FILTERS.some((k) => f[k]) || sweep;
  const empty = !items.length && !filtered && !before;
  // after the import: the runs, newest first, from the first page and without filters
  const showImported = () => ctx.go(hashFor('runs', null, {}));

  const head = h('section', { class: 'page-head' }, h('h1', {}, 'Runs'),
    h('p', { class: 'lede' }, 'Every experiment this store holds, newest first. Tick several to compare them.'));
  if (!empty && examples.items.length) {
    head.append(h('details', { class: 'examples-more', id: 'examples-more' },
      h('summary', {}, 'load example results'),
      examplesOffer(examples.items, examples.dir, machines, showImported, { compact: true })));
  }
  root.append(head);
  if (justImported) root.append(importedNotice(justImported, ctx));

  if (empty) {
    const submitHow = [
      h('p', {}, 'Start with a streams sweep: it runs the same work sequentially and with 1 … 64 streams, and shows how much of the copying hides behind the kernels on this machine.'),
      h('div', { class: 'preset-buttons' }, PRESETS.map((pr, i) => h('a', { class: `button${i === 0 && !examples.items.length ? ' primary' : ''}`, href: hashFor('submit', null, pr.params) }, pr.title))),
      h('p', { class: 'muted' }, 'Or ', h('a', { href: '#/submit' }, 'submit one experiment'), ', or import a bundle from another machine with ', h('code', {}, 'POST /api/import'), '.')];
    root.append(h('section', { class: 'empty card', id: 'empty-state' },
      h('h2', {}, 'No experiments yet'),
      examples.items.length ? [examplesOffer(examples.items, examples.dir, machines, showImported), h('h3', {}, 'Or run your own')] : null,
      submitHow));
    return;
  }

  // ---- filters ----
  const sel = (name, options, value) => h('select', { name },
    h('option', { value: '' }, `any ${name}`),
    options.map(([v, t]) => h('option', { value: v, selected: v === value }, t)));
  const filterForm = h('form', { class: 'filters', id: 'filters' },
    sel('machine', machines.map((m) => [m.id, machineName(m)]), f.machine),
    sel('variant', VARIANTS.map((v) => [v, v]), f.variant),
    h('input', { name: 'size', placeholder: 'size (2^24)', value: f.size, size: 10 }),
    h('input', { name: 'streams', placeholder: 'streams', value: f.streams, size: 7, inputmode: 'numeric' }),
    sel('status', STATUSES.map((s) => [s, s]), f.status),
    h('input', { name: 'label', placeholder: 'label (exact)', value: f.label, size: 14 }),
    h('button', { type: 'submit', class: 'small' }, 'Filter'),
    filtered ? h('a', { href: hashFor('runs', null, { sel: [...selected].join(',') }), class: 'small' }, 'clear') : null,
    sweep ? h('span', { class: 'chip-static' }, `sweep ${shortId(sweep)}`) : null);
  filterForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const fd = new FormData(filterForm);
    const next = Object.fromEntries(FILTERS.map((k) => [k, (fd.get(k) || '').trim()]));
    ctx.go(hashFor('runs', null, { ...next, sweep, sort, dir: state().dir, sel: [...selected].join(',') }));
  });
  filterForm.addEventListener('change', (ev) => {
    if (ev.target.tagName === 'SELECT') filterForm.requestSubmit();
  });

  // ---- compare bar ----
  const compareBtn = h('a', { class: 'button primary', id: 'compare-selected' });
  const selInfo = h('span', { class: 'muted' });
  function updateSelection() {
    const ids = [...selected];
    compareBtn.textContent = `Compare ${ids.length} selected`;
    compareBtn.href = hashFor('compare', null, { ids: ids.join(',') });
    compareBtn.classList.toggle('disabled', ids.length < 1);
    selInfo.textContent = ids.length ? '' : 'tick runs to compare them';
    ctx.replace(state());
  }

  // ---- the table ----
  const col = COLUMNS.find((c) => c.key === sort) || COLUMNS[0];
  const sorted = [...items].sort((a, b) => {
    const x = col.get(a);
    const y = col.get(b);
    const c = col.num ? x - y : String(x).localeCompare(String(y));
    return dir === 'desc' ? -c : c;
  });
  const th = (c) => {
    const on = c.key === sort;
    const nextDir = on && dir === 'asc' ? 'desc' : 'asc';
    return h('th', { class: on ? `sorted ${dir}` : '' },
      h('a', { href: hashFor('runs', null, { ...state(), sort: c.key, dir: nextDir }) }, c.title));
  };
  const tbody = h('tbody', {}, sorted.map((e) => {
    const s = e.spec || {};
    const r = e.result || {};
    const t = r.total_ms || {};
    const box = h('input', { type: 'checkbox', class: 'pick', value: e.id, checked: selected.has(e.id), 'aria-label': `select ${e.id}` });
    box.addEventListener('change', () => {
      if (box.checked) selected.add(e.id);
      else selected.delete(e.id);
      updateSelection();
    });
    return h('tr', { dataset: { id: e.id, status: e.status } },
      h('td', {}, box),
      h('td', {}, h('a', { class: 'mono', href: hashFor('run', e.id) }, shortId(e.id))),
      h('td', { class: 'muted nowrap' }, fmtTime(e.created_at)),
      h('td', { class: 'machine-cell' }, machineChip(e.machine_id, byId[e.machine_id] ? machineName(byId[e.machine_id]) : null), simBadge(e, byId)),
      h('td', { class: 'nowrap mono' }, s.variant),
      h('td', { class: 'num' }, fmtSize(s.size)),
      h('td', { class: 'num' }, s.streams),
      h('td', { class: 'num' }, s.chunks),
      h('td', {}, statusBadge(e.status)),
      h('td', { class: 'num nowrap' }, e.status === 'done' ? [fmtMs(t.median), h('small', { class: 'muted' }, t.max !== undefined ? ` ±${fmtMs((t.max - t.min) / 2)}` : ''), modesMark(r)] : ''),
      h('td', {}, e.status === 'done' ? bar(r.efficiency, 'eff') : ''),
      h('td', {}, e.status === 'done' ? bar(r.overlap, 'ovl') : ''),
      h('td', { class: 'label-cell' }, s.label || ''));
  }));
  const table = h('table', { class: 'grid runs-table', id: 'runs-table' },
    h('thead', {}, h('tr', {}, h('th', {}, ''), h('th', {}, 'id'), COLUMNS.map(th))),
    tbody);

  // ---- paging: the API's cursor ----
  const pager = h('div', { class: 'pager' },
    backs.length ? h('a', { class: 'button small', id: 'prev-page', href: hashFor('runs', null, { ...state(), before: backs.at(-1) === '-' ? '' : backs.at(-1), back: backs.slice(0, -1).join(',') }) }, '← newer') : null,
    before ? h('a', { class: 'small', href: hashFor('runs', null, { ...state(), before: '', back: '' }) }, 'newest') : null,
    h('span', { class: 'muted' }, `${items.length} run${items.length === 1 ? '' : 's'} on this page${col.key !== 'created' ? ', sorted within the page' : ''}`),
    page.next ? h('a', { class: 'button small', id: 'next-page', href: hashFor('runs', null, { ...state(), before: page.next, back: [...backs, before || '-'].join(',') }) }, 'older →') : null);

  root.append(
    h('div', { class: 'toolbar' }, filterForm, h('div', { class: 'compare-bar' }, selInfo, compareBtn)),
    items.length ? table : h('section', { class: 'empty card' }, h('p', {}, 'No runs match these filters on this page.'),
      h('a', { href: hashFor('runs', null, {}) }, 'Clear the filters')),
    pager);
  updateSelection();
}
