// queue.js — the Queue view: what runs now and what waits, polled every second; cancel
// a queued experiment (DELETE /api/experiments/{id}); with ?sweep=ID the progress of that
// sweep, and a link to its chart once every point has finished.

import { api } from './api.js';
import {
  h, hashFor, fmtMs, fmtSize, fmtTime, shortId, statusBadge, totalMs, errorBox, FINISHED, loadMachines, simBadge,
} from './ui.js';

const POLL_MS = 1000;

function specLine(e, byMachine) {
  const s = e.spec || {};
  return h('span', { class: 'spec-line' },
    `${s.variant || '?'} · ${fmtSize(s.size)} · ${s.streams ?? '?'} stream${s.streams === 1 ? '' : 's'}`,
    s.chunks && s.chunks !== s.streams ? ` × ${s.chunks} chunks` : '',
    simBadge(e, byMachine),
    s.label ? h('span', { class: 'label-tag' }, s.label) : '');
}

function sweepOf(e) {
  return e.sweep_id || e.sweep || null;
}

// A running experiment's progress: the server's `progress` (0..1 or {rep, reps}) where it
// gives one, else elapsed time on an indeterminate bar.
function progressBar(e) {
  let frac = null;
  const p = e.progress;
  if (typeof p === 'number') frac = p;
  else if (p && p.reps) frac = (p.rep || 0) / p.reps;
  const started = e.started_at || e.updated_at;
  const elapsed = started ? (Date.now() - new Date(started).getTime()) / 1000 : null;
  return h('div', { class: 'progress-cell' },
    h('div', { class: `bar${frac === null ? ' indeterminate' : ''}` },
      h('i', { style: { width: frac === null ? '35%' : `${Math.round(frac * 100)}%` } })),
    h('span', { class: 'muted' }, frac !== null ? `${Math.round(frac * 100)} %` : '',
      elapsed !== null && Number.isFinite(elapsed) && elapsed >= 0 ? ` ${elapsed.toFixed(1)} s` : ''));
}

function sweepPanel(sweep, id) {
  const exps = (sweep.experiments || []).map((x) => (typeof x === 'string' ? { id: x } : x));
  const counts = { queued: 0, running: 0, done: 0, failed: 0, cancelled: 0 };
  for (const e of exps) counts[e.status] = (counts[e.status] || 0) + 1;
  const n = exps.length;
  const finished = counts.done + counts.failed + counts.cancelled;
  const complete = n > 0 && finished === n;
  const seg = (k) => h('i', { class: `seg st-${k}`, style: { width: `${n ? (100 * counts[k]) / n : 0}%` }, title: `${counts[k]} ${k}` });
  return h('section', { class: `card sweep-progress${complete ? ' complete' : ''}`, id: 'sweep-progress', dataset: { complete: complete ? '1' : '0', done: String(counts.done), total: String(n) } },
    h('div', { class: 'card-head' },
      h('h2', {}, 'Sweep ', h('a', { href: hashFor('sweep', id) }, shortId(id))),
      h('span', { class: 'big-count' }, `${finished} / ${n}`, h('small', {}, ' finished'))),
    h('div', { class: 'stacked-progress' }, seg('done'), seg('failed'), seg('cancelled'), seg('running'), seg('queued')),
    h('div', { class: 'legend-line' }, Object.entries(counts).filter(([, c]) => c).map(([k, c]) => h('span', {}, statusBadge(k), ` ${c}`))),
    complete
      ? h('p', { class: 'done-line' }, '✓ Every point has finished. ',
        h('a', { href: hashFor('sweep', id), class: 'button primary', id: 'open-sweep' }, 'Open the sweep chart →'))
      : h('p', { class: 'muted' }, 'Polling every second; the chart fills in as points finish: ',
        h('a', { href: hashFor('sweep', id) }, 'watch it'), '.'));
}

export async function render(root, ctx) {
  const machines = await loadMachines().catch(() => []);
  if (!ctx.alive()) return;
  const byMachine = Object.fromEntries(machines.map((m) => [m.id, m]));
  const sweepId = ctx.params.get('sweep');
  const head = h('section', { class: 'page-head' },
    h('h1', {}, 'Queue'),
    h('p', { class: 'lede' }, 'Experiments run one at a time per GPU, oldest first. Queued ones can be cancelled.'));
  const sweepSlot = h('div');
  const running = h('div', { id: 'running' });
  const queued = h('div', { id: 'queued' });
  const recent = h('div', { id: 'recent' });
  const notice = h('div');
  root.append(head, notice, sweepSlot,
    h('section', { class: 'card' }, h('h2', {}, 'Running'), running),
    h('section', { class: 'card' }, h('h2', {}, 'Queued'), queued),
    h('section', { class: 'card' }, h('h2', {}, 'Recently finished'), recent));

  async function cancel(e, btn) {
    btn.disabled = true;
    try {
      await api.cancel(e.id);
      btn.textContent = 'cancelled';
    } catch (err) {
      btn.textContent = err.status === 409 ? 'already started' : err.message;
    }
  }

  function table(items, withCancel, kind) {
    if (!items.length) return h('p', { class: 'muted empty-line' }, kind === 'running' ? 'Nothing running.' : kind === 'queued' ? 'The queue is empty.' : 'Nothing finished yet.');
    const shown = items.slice(0, 200);
    return h('table', { class: 'grid' },
      h('thead', {}, h('tr', {}, h('th', {}, 'id'), h('th', {}, 'experiment'), h('th', {}, 'sweep'),
        h('th', {}, kind === 'recent' ? 'status' : 'queued at'), h('th', {}, kind === 'running' ? 'progress' : kind === 'recent' ? 'total (median)' : ''))),
      h('tbody', {}, shown.map((e) => h('tr', { dataset: { id: e.id, status: e.status } },
        h('td', {}, h('a', { href: hashFor('run', e.id), class: 'mono' }, shortId(e.id))),
        h('td', {}, specLine(e, byMachine)),
        h('td', {}, sweepOf(e) ? h('a', { href: hashFor('queue', null, { sweep: sweepOf(e) }), class: 'mono' }, shortId(sweepOf(e))) : ''),
        h('td', {}, kind === 'recent' ? statusBadge(e.status) : fmtTime(e.created_at)),
        h('td', {}, kind === 'running' ? progressBar(e)
          : kind === 'recent' ? (e.status === 'done' ? fmtMs(totalMs(e)) : h('span', { class: 'muted' }, e.error || ''))
            : withCancel ? h('button', { type: 'button', class: 'ghost small cancel', onclick: (ev) => cancel(e, ev.currentTarget) }, 'cancel') : '')))),
      items.length > shown.length ? h('tfoot', {}, h('tr', {}, h('td', { colspan: 5 }, `… and ${items.length - shown.length} more`))) : null);
  }

  let timer = null;
  let busy = false;
  async function tick() {
    if (busy || !ctx.alive()) return;
    busy = true;
    try {
      const [r, q, latest, sweep] = await Promise.all([
        api.experiments({ status: 'running', limit: 100 }),
        api.experiments({ status: 'queued', limit: 500 }),
        api.experiments({ limit: 10 }),
        sweepId ? api.sweep(sweepId) : null,
      ]);
      if (!ctx.alive()) return;
      notice.replaceChildren();
      running.replaceChildren(table(r.items, false, 'running'));
      // oldest first: the order they will run in
      queued.replaceChildren(table([...q.items].reverse(), true, 'queued'));
      recent.replaceChildren(table(latest.items.filter((e) => FINISHED.has(e.status)), false, 'recent'));
      if (sweep) sweepSlot.replaceChildren(sweepPanel(sweep, sweepId));
      root.dataset.polls = String(Number(root.dataset.polls || 0) + 1);
    } catch (err) {
      if (ctx.alive()) notice.replaceChildren(errorBox(err));
    } finally {
      busy = false;
      if (ctx.alive()) timer = setTimeout(tick, POLL_MS);
    }
  }
  ctx.onCleanup(() => clearTimeout(timer));
  await tick();
}
