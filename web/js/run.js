// run.js — the Run detail view (#/run/ID?rep=K&t0=..&t1=..): the measured per-stream
// timeline of one repetition (the median one unless rep is given) as a Gantt chart, with
// how far it is from the run (its span against the median total, and a note in words where
// it is stretched), the model's predicted timeline under it where a 1-stream trace of this
// size exists, and the numbers a GPU engineer asks first: total (median and spread), floor
// and efficiency, overlap, bandwidths against the machine's calibration, verification; then
// the full spec and the machine. A queued or running experiment is polled until it finishes.
// A simulated run says so beside its machine, and one that simulated another machine
// (spec.sim_of) shows that machine, whose calibration it used, beside the one it ran on.

import { api } from './api.js';
import { createGantt } from './gantt.js';
import {
  h, hashFor, fmtMs, fmtUs, fmtPct, fmtGbps, fmtSizeLong, fmtTime, fmtNum, shortId, statusBadge,
  machineChip, machineName, loadMachines, OP_COLORS, OP_LABELS, totalMs, errorBox, flatten, hasPrediction, FINISHED,
  simBadge, simOf, simName, isSimulated, twoGroups, hostIssue, hostPace, paceSpan,
} from './ui.js';

// the variants POST /api/predict models (server/API.md)
const PREDICTABLE = new Set(['async_v1', 'async_v2', 'round_robin', 'engine_streams']);
const SPEC_ORDER = ['variant', 'size', 'streams', 'chunks', 'kernel', 'kernel_iters', 'block_size', 'launch',
  'host_memory', 'default_stream', 'stream_flags', 'flush', 'driver_mode', 'timing', 'trace_ops', 'reps', 'warmup',
  'devices', 'backend', 'sim_of', 'predict', 'label', 'sync', 'host_share'];

// What the model that simulated a run gave its streams (result.extra): the hardware channels as the
// lent GPUs run them (pools per kind of op), or, in runs simulated before 2026-11-26, a queue per
// stream % connections.
function modelLine(extra) {
  const n = extra?.connections;
  if (!n) return 'Simulated by the engine-queue model.';
  if (extra.channel_pools && extra.copy_channels)
    return `Simulated by the engine-queue model with CUDA's ${n} connections as the lent GPUs run them: `
      + `${extra.copy_channels} channels for H2D, as many for D2H, ${extra.kernel_channels} for kernels; a kernel can wait in its channel `
      + 'behind another stream\'s, the slow mode of many-stream pipelines. Points that run in two modes on a GPU get one here.';
  return `Simulated by the engine-queue model with ${n} queues, one per stream % ${n} (the model before 2026-11-26).`;
}

// The first number under `key` anywhere in obj (machines carry calibration per device).
function deepFind(obj, key, depth = 0) {
  if (!obj || typeof obj !== 'object' || depth > 4) return null;
  if (typeof obj[key] === 'number') return obj[key];
  for (const v of Object.values(obj)) {
    const r = deepFind(Array.isArray(v) ? v[0] : v, key, depth + 1);
    if (r !== null) return r;
  }
  return null;
}

function kv(rows, cls) {
  return h('table', { class: `kv ${cls || ''}` }, h('tbody', {}, rows.map(([k, v]) =>
    h('tr', {}, h('th', {}, k), h('td', {}, v === null || v === undefined || v === '' ? '—' : typeof v === 'object' && !(v instanceof Node) ? JSON.stringify(v) : v)))));
}

function card(title, big, ...rest) {
  return h('div', { class: 'stat-card' }, h('div', { class: 'stat-title' }, title), h('div', { class: 'stat-big' }, big), ...rest);
}

function meter(frac, color) {
  const pct = Number.isFinite(frac) ? Math.max(0, Math.min(1, frac)) * 100 : 0;
  return h('div', { class: 'meter' }, h('i', { style: { width: `${pct}%`, background: color } }));
}

// Summed op time by kind against the wall time: what overlap hid, drawn to one scale.
function budget(r) {
  const sum = (r.h2d_ms || 0) + (r.kernel_ms || 0) + (r.d2h_ms || 0) + (r.host_ms || 0);
  const total = totalMs({ result: r }) || 0;
  const scale = Math.max(sum, total) || 1;
  const seg = (k, v) => (v ? h('i', { style: { width: `${(100 * v) / scale}%`, background: OP_COLORS[k] }, title: `${k} ${fmtMs(v)}` }) : null);
  return h('div', { class: 'budget' },
    h('div', { class: 'budget-row' }, h('span', {}, 'ops, end to end'),
      h('div', { class: 'budget-bar' }, seg('h2d', r.h2d_ms), seg('kernel', r.kernel_ms), seg('d2h', r.d2h_ms), seg('host', r.host_ms)),
      h('span', { class: 'mono' }, fmtMs(sum))),
    h('div', { class: 'budget-row' }, h('span', {}, 'wall time'),
      h('div', { class: 'budget-bar' }, h('i', { class: 'wall', style: { width: `${(100 * total) / scale}%` } })),
      h('span', { class: 'mono' }, fmtMs(total))));
}

// The reps in two groups (result.rep_modes, server/API.md): each group's median and how the
// slow reps lie in the run, since a median of two modes says neither.
function repModes(m) {
  if (!m) return null;
  const where = m.slow_runs > 1
    ? `the slow reps interleaved with the fast ones (${m.slow_runs} stretches): each rep drew one of two modes`
    : 'the slow reps in one stretch: the machine changed pace during the run';
  return h('div', { class: 'stat-sub rep-modes', id: 'rep-modes', role: 'note' },
    `${twoGroups(m)}${m.outliers ? ` (${m.outliers} outlier${m.outliers > 1 ? 's' : ''} left out)` : ''}; ${where}`);
}

// How long the host took to issue a rep (ui.js hostIssue) against the total and the machine's
// calibrated cost of a chunk's three calls: where the issue is most of the rep, the host sets the
// pace and more streams will not help. Pipelines of non-blocking calls only (a blocking copy holds
// the host until it is done).
const ISSUED = new Set(['async_v1', 'async_v2', 'round_robin', 'engine_streams', 'multi_gpu']);
function hostIssueLine(e, machine) {
  const hi = hostIssue(e);
  const total = totalMs(e);
  if (!hi || !(total > 0) || !ISSUED.has(e.spec?.variant) || e.spec?.host_memory === 'pageable') return null;
  const copy = deepFind(machine, 'copy_submit_us');
  const launch = deepFind(machine, 'kernel_launch_us');
  const cal = copy > 0 && launch > 0 ? 2 * copy + launch : null;
  const share = hi.us / 1000 / total;
  const pace = share >= 0.9 ? 'the host sets the pace: more streams will not help'
    : share >= 0.5 ? 'the host takes most of the rep' : 'the GPU sets the pace';
  return h('div', { class: 'stat-sub', id: 'host-issue', title: 'the clean reps\' median time from the start event\'s record to the stop event\'s' },
    `host issue ${fmtMs(hi.us / 1000)} (${fmtNum(hi.perChunk)} µs a chunk${cal ? `; calibrated ${fmtNum(cal)}` : ''}): `
    + `${fmtPct(Math.min(share, 1))} of the total, ${pace}`);
}

// A simulated point of the seeds' table: what a plain CUDA program measured there on the GPU
// the profile stands for (result.extra.reference, server/API.md), beside the simulation.
function referenceLine(e) {
  const ref = e.result?.extra?.reference;
  if (e.result?.backend !== 'sim' || !ref || !(ref.median_ms > 0) || typeof ref.sim_error_pct !== 'number') return null;
  const rounds = Array.isArray(ref.rounds_ms) ? ref.rounds_ms.filter((x) => typeof x === 'number') : [];
  const lo = rounds.length ? Math.min(...rounds) : null;
  const hi = rounds.length ? Math.max(...rounds) : null;
  const spread = lo !== null && hi > lo ? ` (${rounds.length} rounds, ${fmtMs(lo)} to ${fmtMs(hi)})` : '';
  const gpu = ref.gpu_uuid ? String(ref.gpu_uuid).slice(0, 12) : 'its GPU';
  const when = ref.measured_at ? String(ref.measured_at).slice(0, 10) : '';
  const pct = Math.abs(ref.sim_error_pct);
  const side = ref.sim_error_pct >= 0 ? 'slower' : 'faster';
  return h('div', { class: 'stat-sub', id: 'reference-line', role: 'note' },
    `measured on ${ref.profile || 'the profile'}'s GPU (${gpu}${when ? `, ${when}` : ''}) by a plain CUDA program: `
    + `${fmtMs(ref.median_ms)}${spread}; the simulation is ${pct.toFixed(1)}% ${side}`);
}

// A simulated point of the seeds' table among every lent GPU of the profile's kind
// (result.extra.fleet, server/API.md): the band the simulation is to be read in.
function fleetLine(e) {
  const f = e.result?.extra?.fleet;
  if (e.result?.backend !== 'sim' || !f || !(f.tables > 0) || !(f.min_ms > 0) || !(f.max_ms >= f.min_ms)
      || typeof f.sim_rank_pct !== 'number') return null;
  const many = f.tables > 1;
  const gpus = f.gpus > 0 ? `${f.gpus} GPU${f.gpus > 1 ? 's' : ''}` : 'its GPUs';
  const when = f.from && f.to ? (f.from === f.to ? `, ${f.from}` : `, ${f.from} to ${f.to}`) : '';
  const band = many ? `${fmtMs(f.min_ms)} to ${fmtMs(f.max_ms)}, the middle half ${fmtMs(f.p25_ms)} to ${fmtMs(f.p75_ms)}`
    : fmtMs(f.min_ms);
  const rank = Math.round(f.sim_rank_pct);
  return h('div', { class: 'stat-sub', id: 'fleet-line', role: 'note',
    title: 'each table the median of its rounds, measured by the plain CUDA program (bench/ref_overlap)' },
    `${f.tables} lent ${many ? 'tables' : 'table'} of this kind (${gpus}${when}): ${band}; `
    + `the simulation is slower than ${rank}% of them${fleetGroups(f, e.result?.total_ms?.median)}`);
}

// Where the lent tables fall in two groups (extra.fleet.groups, bench/fleet.py): one loan's
// number is one of the two, not a spread about one value; and on which side of the gap
// between them the simulation falls.
function fleetGroups(f, simMs) {
  const g = f.groups;
  const ok = (x) => x && x.tables > 0 && x.median_ms > 0 && x.min_ms > 0 && x.max_ms >= x.min_ms;
  if (!Array.isArray(g) || g.length !== 2 || !ok(g[0]) || !ok(g[1])) return '';
  const side = simMs > 0 ? (simMs < Math.sqrt(g[0].max_ms * g[1].min_ms) ? 'quicker' : 'slower') : null;
  return `. They fall in two groups here, ${g[0].tables} near ${fmtMs(g[0].median_ms)} and ${g[1].tables} near `
    + `${fmtMs(g[1].median_ms)}: a loan measures one or the other`
    + (side ? `, and the simulation is on the ${side} side of the gap` : '');
}

// A simulated run's band over the host's pace (ui.js hostPace): the same run with the host's
// calls 0.9-2x as dear, said where it moves the total by more than 5%.
function hostPaceLine(e) {
  const pace = hostPace(e);
  if (!pace || !(pace.max_ms > pace.min_ms * 1.05)) return null;
  const each = pace.scales.map((x, k) => `${x}×: ${fmtMs(pace.total_ms[k])}`).join(' · ');
  return h('div', { class: 'stat-sub', id: 'host-pace', role: 'note', title: each },
    `with the host's calls ${paceSpan(pace)} as dear as calibrated, as lent hosts `
    + `issued them: ${fmtMs(pace.min_ms)} to ${fmtMs(pace.max_ms)}`);
}

function summaryCards(e, machine) {
  const r = e.result || {};
  const t = r.total_ms || {};
  const calH2d = deepFind(machine, 'h2d_gbps');
  const calD2h = deepFind(machine, 'd2h_gbps');
  const hasPred = hasPrediction(r);
  return h('section', { class: 'stat-grid', id: 'summary' },
    card('total, median of reps', fmtMs(t.median),
      h('div', { class: 'stat-sub' }, `min ${fmtMs(t.min)} · max ${fmtMs(t.max)} · σ ${fmtMs(t.stddev)}`),
      repModes(r.rep_modes),
      referenceLine(e),
      fleetLine(e),
      hostPaceLine(e),
      hostIssueLine(e, machine),
      h('div', { class: 'reps-chart' }, h('canvas', { id: 'reps-canvas' }))),
    card('efficiency = floor / total', fmtPct(r.efficiency), meter(r.efficiency, '#7ee0a8'),
      h('div', { class: 'stat-sub' }, `floor ${fmtMs(r.floor_ms)} from the machine’s calibration`)),
    card('overlap = 1 − total / Σ ops', fmtPct(r.overlap), budget(r)),
    card('bandwidth, median rep', h('span', {},
      h('span', { style: { color: OP_COLORS.h2d } }, `H2D ${fmtGbps(r.h2d_gbps)}`), h('br'),
      h('span', { style: { color: OP_COLORS.d2h } }, `D2H ${fmtGbps(r.d2h_gbps)}`)),
    h('div', { class: 'stat-sub' }, calH2d ? `calibrated peak: H2D ${fmtGbps(calH2d)} (${fmtPct(r.h2d_gbps / calH2d)}), D2H ${fmtGbps(calD2h)} (${fmtPct(r.d2h_gbps / calD2h)})` : 'no calibration for this machine'),
    h('div', { class: 'stat-sub' }, `Σ H2D ${fmtMs(r.h2d_ms)} · Σ kernel ${fmtMs(r.kernel_ms)} · Σ D2H ${fmtMs(r.d2h_ms)}`)),
    h('div', { id: 'prediction-card' }, card('model prediction', hasPred ? fmtMs(r.predicted_ms) : '—',
      h('div', { class: 'stat-sub' }, hasPred ? `error ${fmtPct(r.prediction_error)} against the measured median`
        : 'none recorded: submit with predict, or run 1 stream of this size'))),
    card('verified', r.verified ? h('span', { class: 'ok' }, '✓ output correct') : h('span', { class: 'bad' }, '✗ not verified'),
      h('div', { class: 'stat-sub' }, r.verification ? `by ${r.verification}` : 'against the CPU reference, every rep'),
      h('div', { class: 'stat-sub' }, `backend ${r.backend || e.spec?.backend || '?'}`)));
}

function repsChart(canvas, reps, current, onPick) {
  const C = window.Chart;
  return new C(canvas, {
    type: 'bar',
    data: {
      labels: reps.map((_, i) => String(i)),
      datasets: [{
        data: reps,
        backgroundColor: reps.map((_, i) => (i === current ? '#e6edf3' : 'rgba(160,168,184,0.45)')),
        borderWidth: 0,
        barPercentage: 0.9,
        categoryPercentage: 1,
      }],
    },
    options: {
      plugins: {
        legend: { display: false },
        tooltip: { callbacks: { title: (items) => `rep ${items[0].label}`, label: (it) => fmtMs(it.raw) } },
      },
      scales: {
        x: { display: false },
        // from just under the fastest rep: the spread is what this strip is for
        y: { display: true, min: Math.min(...reps) * 0.97, ticks: { maxTicksLimit: 3, callback: (v) => fmtMs(v) }, grid: { display: false } },
      },
      onClick: (_, els) => {
        if (els.length) onPick(els[0].index);
      },
    },
  });
}

// A done 1-stream experiment of the same size on the same machine: the trace the model
// predicts from. The result may name it; otherwise search the newest runs.
async function predictionSource(e) {
  const r = e.result || {};
  const named = r.predicted_from || r.prediction_from || r.prediction_trace || r.trace_experiment;
  if (typeof named === 'string') return named;
  const s = e.spec;
  const list = await api.experiments({ status: 'done', machine: e.machine_id, size: s.size, streams: 1, limit: 100 });
  const same = list.items.filter((x) => x.id !== e.id && x.spec && x.spec.streams === 1 && x.spec.size === s.size
    && x.spec.kernel === s.kernel && x.spec.host_memory === s.host_memory && x.spec.variant !== 'sequential'
    && (x.spec.sim_of || '') === (s.sim_of || '')); // a simulation of another machine predicts from its own basis
  // best: the model's own basis (async_v1, 1 stream, the same chunks), then any async_v1, then the rest
  const rank = (x) => (x.spec.variant === 'async_v1' ? 0 : 2) + (x.spec.chunks === s.chunks ? 0 : 1);
  same.sort((a, b) => rank(a) - rank(b));
  return same.length ? same[0].id : null;
}

export async function render(root, ctx) {
  const id = ctx.id;
  if (!id) {
    ctx.go('#/runs');
    return;
  }
  const [e, machines] = await Promise.all([api.experiment(id), loadMachines().catch(() => [])]);
  if (!ctx.alive()) return;
  if (FINISHED.has(e.status)) await renderFinished(root, ctx, e);
  else renderWaiting(root, ctx, e, machines);
}

// Not finished yet: show what we know now, poll every second, and draw the whole page
// once it has finished.
function renderWaiting(root, ctx, first, machines) {
  let timer = null;
  ctx.onCleanup(() => clearTimeout(timer));
  const machine = machines.find((m) => m.id === first.machine_id) || null;
  const show = (e) => root.replaceChildren(header(e, machine, machines), h('section', { class: 'card waiting', id: 'waiting' },
    h('h2', {}, e.status === 'running' ? 'Running…' : 'Queued…'),
    h('div', { class: 'bar indeterminate' }, h('i', { style: { width: '35%' } })),
    h('p', { class: 'muted' }, 'This page fills in when the experiment finishes. ', h('a', { href: '#/queue' }, 'See the queue'), '.')),
  specAndMachine(e, machine, machines));
  const poll = async () => {
    try {
      const e = await api.experiment(first.id);
      if (!ctx.alive()) return;
      if (FINISHED.has(e.status)) {
        root.replaceChildren();
        await renderFinished(root, ctx, e);
        return;
      }
      show(e);
    } catch (err) {
      if (ctx.alive()) root.append(errorBox(err));
    }
    if (ctx.alive()) timer = setTimeout(poll, 1000);
  };
  show(first);
  timer = setTimeout(poll, 1000);
}

async function renderFinished(root, ctx, e) {
  const id = e.id;
  const machines = await loadMachines().catch(() => []);
  const machine = machines.find((m) => m.id === e.machine_id) || null;
  if (!ctx.alive()) return;
  root.append(header(e, machine, machines));

  if (e.status !== 'done') {
    root.append(h('section', { class: 'card' },
      h('h2', {}, e.status === 'failed' ? 'This experiment failed' : 'This experiment was cancelled'),
      e.error ? errorBox({ code: e.status, message: typeof e.error === 'string' ? e.error : e.error.message || JSON.stringify(e.error) }) : null),
    specAndMachine(e, machine, machines));
    return;
  }

  // a simulation of another machine is priced with that machine's calibration
  const calMachine = (simOf(e) && machines.find((m) => m.id === simOf(e))) || machine;
  root.append(summaryCards(e, calMachine));
  const gantts = h('section', { class: 'card gantt-card' });
  root.append(gantts, specAndMachine(e, machine, machines));

  const rep = ctx.params.get('rep');
  const reps = e.result.reps_ms || [];
  const { tl, note } = await timelineOf(e, rep);
  if (!ctx.alive()) return;
  if (note) gantts.append(note);
  gantts.append(...spanAndStretch(tl, e));
  const shownRep = tl.rep ?? tl.median_rep ?? null;

  // the reps strip: click a bar to see that repetition's timeline
  const repsCanvas = root.querySelector('#reps-canvas');
  if (repsCanvas && reps.length) {
    const chart = repsChart(repsCanvas, reps, shownRep, (k) => ctx.go(hashFor('run', id, { rep: k })));
    ctx.onCleanup(() => chart.destroy());
  }

  const state = { rep, t0: ctx.params.get('t0'), t1: ctx.params.get('t1') };
  const all = [];
  const onRange = (a, b, full) => {
    for (const g of all) g.setRange(a, b);
    state.t0 = full ? null : a.toFixed(3);
    state.t1 = full ? null : b.toFixed(3);
    ctx.replace(state);
  };
  const extent = tl.ops.reduce((m, o) => Math.max(m, o.end_us), 0);
  const measured = createGantt({
    ops: tl.ops,
    calls: tl.calls,
    extentUs: extent,
    title: `Measured · rep ${shownRep ?? '?'}${tl.median_rep !== undefined && shownRep === tl.median_rep ? ' (the median)' : ''} of ${tl.reps ?? reps.length}`,
    onRange,
  });
  measured.canvas.id = 'timeline-canvas';
  all.push(measured);
  ctx.onCleanup(() => measured.destroy());
  gantts.append(measured.el);
  if (state.t0 !== null && state.t1 !== null) measured.setRange(Number(state.t0), Number(state.t1));

  // the predicted timeline, on the same time scale, where a 1-stream run of this size is stored
  if (PREDICTABLE.has(e.spec.variant) && e.spec.streams > 1) {
    const slot = h('div', { class: 'predicted-slot' });
    gantts.append(slot);
    try {
      const from = await predictionSource(e);
      if (from && ctx.alive()) {
        const pr = await api.predict({ from_experiment: from, variant: e.spec.variant, streams: [e.spec.streams], chunks: e.spec.chunks });
        const p = pr.predictions && pr.predictions[0];
        if (p && p.ops && p.ops.length && ctx.alive()) {
          if (!hasPrediction(e.result)) {
            const measuredMs = totalMs(e);
            root.querySelector('#prediction-card').replaceChildren(card('model prediction', fmtMs(p.total_ms),
              h('div', { class: 'stat-sub' }, `from the 1-stream run ${shortId(from)}: error ${fmtPct(Math.abs(p.total_ms - measuredMs) / measuredMs)}`)));
          }
          const predicted = createGantt({
            ops: p.ops,
            calls: p.calls,
            extentUs: extent,
            title: `Predicted by the model from the 1-stream run ${shortId(from)} · ${fmtMs(p.total_ms)}`,
            onRange,
          });
          predicted.canvas.id = 'predicted-canvas';
          all.push(predicted);
          ctx.onCleanup(() => predicted.destroy());
          slot.append(predicted.el);
          if (state.t0 !== null && state.t1 !== null) predicted.setRange(Number(state.t0), Number(state.t1));
        }
      }
    } catch (err) {
      slot.append(h('p', { class: 'muted' }, `No predicted timeline: ${err.message}`));
    }
  }
}

// How far the timeline is from the run: its span (first op start to last op end) against the
// median total, and, where the span is more than 5% longer, a note saying why in words. The
// total comes from clean repetitions; the traced ones pay for their timing (server/API.md,
// docs/METHOD.md "The timeline against the total").
const STRETCH_NOTE_ABOVE = 1.05;

// A sampled timeline's own facts: the rep it belongs to against the median, the shares
// whose traced repetitions stayed off after their retries, and the timelines whose farthest
// shares took their ops from one every-op-traced repetition instead (extra.timing.share_reps).
function sampledWhy(tl, e) {
  const facts = [];
  const own = typeof tl.rep_ms === 'number' && typeof tl.median_ms === 'number' && tl.median_ms > 0
    ? tl.rep_ms / tl.median_ms : null;
  if (own !== null && own > STRETCH_NOTE_ABOVE) {
    facts.push(`repetition ${tl.rep} itself took ${own.toFixed(2)}× the median (the host's pace changed during the run,`
      + ' and a timeline follows its own repetition)');
  }
  const sr = e.result?.extra?.timing?.share_reps;
  if (sr && sr.off > 0) {
    const shares = e.result.extra.timing.shares;
    facts.push(`${sr.off} of the ${typeof shares === 'number' && sr.timelines ? shares * sr.timelines : 'composed'}`
      + ' shares\' traced repetitions stayed more than 3% off their repetition\'s total after their retries'
      + ' (events in some of the streams can change how this GPU runs the plan)');
  }
  if (sr && sr.whole > 0) {
    const one = sr.whole_one_rep > 0
      ? ` (${sr.whole_one_rep} of them every share, so each of those is that one repetition's timeline)` : '';
    facts.push(`${sr.whole} of the ${sr.timelines ?? '?'} timelines took their farthest shares from one repetition with every`
      + ' operation traced, whose total was closer to its clean repetition\'s than those shares\' were' + one);
  }
  return facts.length ? ` Here: ${facts.join('; ')}.` : '';
}

function stretchWhy(timing, backend, traceOps) {
  const after = 'at this many streams the host\'s issue sets the pace, so the recorded ops run later than in the'
    + ' clean repetitions the total comes from. Op durations on the engines are still right; the gaps and the span are not.';
  if (backend === 'sim') return 'its ops ran later than in the repetitions the total comes from: the gaps and the span overstate the run.';
  if (timing === 'cupti') {
    return `it was recorded with CUPTI's activity tracing, which slows every CUDA call the issuing thread makes; ${after}`;
  }
  if (timing === 'events' && traceOps === 'sampled') {
    return 'it is composed from several traced repetitions, each timing one share of the operations (its events'
      + ' cost that repetition about 1%); a span this much longer than the median means those repetitions ran'
      + ' slower than the clean ones: the host\'s pace drifts from one repetition to the next on this machine.';
  }
  if (timing === 'events') {
    return `it was recorded with a CUDA event around every operation, which costs the issuing thread about 2 µs each; ${after}`;
  }
  return 'its ops ran later than in the repetitions the total comes from: the gaps and the span overstate the run.';
}

// timing cupti: what the recording cost the run (extra.timing.without_cupti: reps run
// before CUPTI started, and the recorded median over theirs)
function cuptiCost(e) {
  const wo = e.result?.extra?.timing?.without_cupti;
  if (!wo || typeof wo.cost_pct !== 'number' || !(wo.median_ms > 0)) return [];
  const pct = Math.abs(wo.cost_pct).toFixed(1);
  return [h('p', { class: 'rep-note cupti-cost', id: 'cupti-cost', role: 'note' },
    `CUPTI's activity records cost this run: its repetitions, all recorded, took ${pct}% ${wo.cost_pct >= 0 ? 'longer' : 'less'}`
    + ` than ${wo.reps} run before the recording started (median ${fmtMs(wo.median_ms)}); the total above is the recorded one.`)];
}

// timing cupti: how far the events' timeline lies from CUPTI's hardware timestamps on
// the same repetitions (extra.timing.cross_check; server/API.md)
function cuptiCrossCheck(e) {
  const x = e.result?.extra?.timing?.cross_check;
  const num = (v) => typeof v === 'number' && Number.isFinite(v);
  if (!x || !num(x.start_diff_us_median) || !num(x.end_diff_us_median)) return [];
  let text = 'Timed both ways on the same repetitions, the events\' timeline and CUPTI\'s hardware timestamps'
    + ` start each op a median ${fmtUs(x.start_diff_us_median)} apart`
    + (num(x.start_diff_us_max) ? ` (at most ${fmtUs(x.start_diff_us_max)})` : '')
    + ` and end it ${fmtUs(x.end_diff_us_median)} apart`
    + (num(x.end_diff_us_max) ? ` (at most ${fmtUs(x.end_diff_us_max)})` : '') + '.';
  // the op whose start parted most (worst_starts[0]: index, op, stream, chunk, events start,
  // end, CUPTI start, end, µs from the events' first op)
  const w = Array.isArray(x.worst_starts) ? x.worst_starts[0] : null;
  if (Array.isArray(w) && w.length === 8 && num(w[4]) && num(w[6])) {
    text += ` The start that parted most: the ${w[1] === 'kernel' ? 'kernel' : String(w[1]).toUpperCase()} of stream`
      + ` ${w[2]}, chunk ${w[3]}, at ${fmtUs(w[4])} by its events and ${fmtUs(w[6])} by CUPTI.`;
  }
  if (num(x.attempts) && x.attempts > 1) {
    text += ` A repetition ran more than 10% off the median, so the comparison was run ${x.attempts} times`
      + (num(x.rep_off_pct) ? `; the one kept was at most ${x.rep_off_pct.toFixed(1)}% off.` : '.');
  }
  return [h('p', { class: 'rep-note cupti-cross-check', id: 'cupti-cross-check', role: 'note' }, text)];
}

// A GPU run: how long the GPU waited between repetitions while the host checked the output
// and refilled the input (extra.timing.between_reps). A longer wait costs the next
// repetition a little, in a plain CUDA program too (docs/METHOD.md, "The time between reps").
function betweenReps(e) {
  const b = e.result?.extra?.timing?.between_reps;
  const num = (v) => typeof v === 'number' && Number.isFinite(v) && v >= 0;
  if (!b || !num(b.median_us)) return [];
  const check = num(b.check_median_us)
    ? `, ${fmtUs(b.check_median_us)} of it checking the output${b.check_path ? ` (its ${b.check_path} checksum)` : ''}`
    : '';
  return [h('p', { class: 'rep-note between-reps', id: 'between-reps', role: 'note' },
    `Between repetitions the GPU waited a median ${fmtUs(b.median_us)} while the host checked the repetition's`
    + ` output and refilled the input${check}. It is not in the total; a longer wait makes the next repetition`
    + ' start a little slower, as in a plain CUDA program that checks its output between repetitions.')];
}

// The notes on how the run was timed, under the timeline: what CUPTI cost and how far it lay
// from the events (timing cupti), and the GPU's wait between repetitions (a GPU run).
function timingNotes(e) {
  return cuptiCost(e).concat(cuptiCrossCheck(e), betweenReps(e));
}

function spanAndStretch(tl, e) {
  if (typeof tl.span_ms !== 'number') return timingNotes(e);
  // the span starts at the first op; the Gantt and the total start at the rep's start
  const lead = typeof tl.lead_us === 'number' && tl.lead_us >= 0.5 ? ` from its first op at ${fmtUs(tl.lead_us)}` : '';
  const first = firstCall(tl);
  const parts = [`timeline spans ${fmtMs(tl.span_ms)}${lead}`];
  if (typeof tl.median_ms === 'number') parts.push(`the run's median ${fmtMs(tl.median_ms)}`);
  if (tl.rep !== tl.median_rep && typeof tl.rep_ms === 'number') parts.push(`rep ${tl.rep}'s own total ${fmtMs(tl.rep_ms)}`);
  const stretch = typeof tl.stretch === 'number' ? tl.stretch : null;
  if (stretch !== null) parts.push(`${stretch.toFixed(2)}× the median`);
  const out = [h('p', { class: 'timeline-span mono', id: 'timeline-span', 'data-stretch': stretch ?? '' }, parts.join(' · '))];
  if (first && typeof tl.lead_us === 'number' && tl.lead_us >= 0.5) {
    // the wait before the first op: the host's first call after the rep's start, drawn in
    // the host-calls lane, is inside the total and outside the span
    const last = tl.ops.reduce((m, o) => Math.max(m, o.end_us), 0);
    const whole = typeof tl.median_ms === 'number' && tl.median_ms > 0 ? (last - first.start_us) / (1000 * tl.median_ms) : null;
    out.push(h('p', { class: 'rep-note lead-note', id: 'lead-note', role: 'note', 'data-from-call': whole ?? '' },
      `The GPU waited ${fmtUs(tl.lead_us)} for its first op: the host's first call of the rep`
      + ` (${OP_LABELS[first.op] || first.op}, stream ${first.stream}) ran from ${fmtUs(first.start_us)} to ${fmtUs(first.end_us)}`
      + (first.end_us > tl.lead_us + 1 ? ', the op starting before it returned (a blocking call returns after its op).' : '.')
      + (whole !== null ? ` From that call to the last op's end the timeline is ${whole.toFixed(2)}× the run's median.` : '')));
  }
  if (stretch !== null && stretch > STRETCH_NOTE_ABOVE) {
    out.push(h('p', { class: 'rep-note stretch-note', id: 'stretch-note', role: 'note' },
      `This timeline is ${stretch.toFixed(1)}× the run's median: ${stretchWhy(tl.timing ?? e.spec?.timing, e.result?.backend, e.spec?.trace_ops ?? 'all')}`
      + ((tl.timing ?? e.spec?.timing ?? 'events') === 'events' && e.spec?.trace_ops === 'sampled' && e.result?.backend !== 'sim'
        ? sampledWhy(tl, e) : '')));
  }
  return out.concat(timingNotes(e));
}

// The rep's first host call (calls are in issue order), or null where none was recorded.
function firstCall(tl) {
  const calls = Array.isArray(tl.calls) ? tl.calls : [];
  return calls.reduce((m, c) => (m === null || c.start_us < m.start_us ? c : m), null);
}

// The timeline of rep K (the median where none is asked for). A bundle exported with
// ops=median keeps the ops of the median rep alone: another rep then comes back without
// ops (or refused), and the median one is drawn instead, with a note saying why.
async function timelineOf(e, rep) {
  if (rep === null) return { tl: await api.timeline(e.id), note: null };
  const median = e.result.median_rep;
  const inRange = /^\d+$/.test(rep) && Number(rep) < (e.result.reps_ms || []).length;
  let tl = null;
  let err = null;
  try {
    tl = await api.timeline(e.id, rep);
  } catch (x) {
    err = x;
  }
  const isMedian = tl ? tl.rep !== undefined && tl.rep === tl.median_rep : median !== undefined && Number(rep) === median;
  if (tl && (tl.ops.length || isMedian)) return { tl, note: null };
  if (err && (!inRange || err.status >= 500)) throw err;
  const medianTl = await api.timeline(e.id);
  const m = medianTl.median_rep ?? medianTl.rep ?? median;
  // a GPU run with sampled events composes timelines for a few reps and the median one
  // (server/API.md "trace_ops"); an imported compact bundle keeps the median's alone
  const sampled = e.result?.backend === 'cuda' && (e.spec?.timing ?? 'events') === 'events'
    && e.spec?.trace_ops === 'sampled';
  const note = h('p', { class: 'rep-note', id: 'rep-note', role: 'note' },
    !medianTl.ops.length
      ? 'No repetition\'s ops were kept in this bundle: there is no timeline to draw. '
      : sampled
        ? `This run composed timelines for a few repetitions only (sampled events: three spread over the run and the median one, rep ${m ?? '?'}): rep ${rep} has none, so the median is shown. `
        : `Only the median repetition (rep ${m ?? '?'}) was kept in this bundle: rep ${rep} has no ops to draw, so the median is shown. `,
    h('a', { href: hashFor('run', e.id, {}) }, 'show the median'));
  return { tl: medianTl, note };
}

function header(e, machine, machines = []) {
  const s = e.spec || {};
  const id = e.id;
  const byId = Object.fromEntries(machines.map((m) => [m.id, m]));
  if (machine) byId[machine.id] = machine;
  return h('section', { class: 'page-head run-head' },
    h('h1', {},
      `${s.variant} · ${fmtSizeLong(s.size)} · ${s.streams} stream${s.streams === 1 ? '' : 's'}`,
      s.chunks && s.chunks !== s.streams ? ` × ${s.chunks} chunks` : ''),
    h('div', { class: 'meta-line' },
      statusBadge(e.status),
      h('span', { class: 'mono' }, id),
      machineChip(e.machine_id, machine ? machineName(machine) : null),
      simBadge(e, byId),
      h('span', { class: 'muted' }, `created ${fmtTime(e.created_at)}`),
      e.finished_at ? h('span', { class: 'muted' }, `finished ${fmtTime(e.finished_at)}`) : null,
      s.label ? h('span', { class: 'label-tag' }, s.label) : null,
      e.sweep_id ? h('a', { href: hashFor('sweep', e.sweep_id) }, `sweep ${shortId(e.sweep_id)}`) : null),
    h('div', { class: 'links' },
      e.status === 'done' ? h('a', { class: 'button small', href: api.traceUrl(id), download: `streamlab-${shortId(id)}.trace.json`, id: 'trace-link', title: 'Chrome Trace Event format: open it in Perfetto or chrome://tracing' }, 'Chrome trace') : null,
      h('a', { class: 'button small', href: api.jsonUrl(id), target: '_blank', id: 'json-link' }, 'JSON'),
      e.status === 'done' ? h('a', { class: 'button small', href: api.timelineUrl(id), target: '_blank' }, 'timeline JSON') : null,
      h('a', { class: 'button small', href: api.exportUrl({ experiment: id }), download: `streamlab-${shortId(id)}.bundle.json` }, 'export bundle'),
      h('a', { class: 'button small', href: hashFor('submit', null, respecParams(s)) }, 'run again…'),
      e.status === 'done' ? h('a', { class: 'button small', href: hashFor('compare', null, { ids: id }) }, 'compare…') : null));
}

// The spec as Submit's hash parameters: "run again" opens the form filled in.
function respecParams(s) {
  const p = {};
  for (const k of SPEC_ORDER) {
    if (s[k] === undefined || s[k] === null || s[k] === '') continue;
    p[k] = Array.isArray(s[k]) ? s[k].join(',') : s[k];
  }
  return p;
}

function specAndMachine(e, machine, machines = []) {
  const s = e.spec || {};
  const keys = [...SPEC_ORDER.filter((k) => k in s), ...Object.keys(s).filter((k) => !SPEC_ORDER.includes(k))];
  const specRows = keys.map((k) => [k, k === 'size' ? fmtSizeLong(s[k]) : Array.isArray(s[k]) ? `[${s[k].join(', ')}]` : String(s[k])]);
  const times = [['created', fmtTime(e.created_at)], ['started', fmtTime(e.started_at)], ['finished', fmtTime(e.finished_at)]];
  // the machine, with only the GPUs this run used
  const used = new Set((s.devices || [0]).map((d) => `[${d}]`));
  const rowsOf = (m, id) => (m ? flatten(m).filter(([k, v]) => v !== null && v !== '' && v !== undefined
    && !(/^(gpus|devices)\[\d+\]/.test(k) && !used.has(/\[\d+\]/.exec(k)[0])))
    .map(([k, v]) => [k, typeof v === 'number' ? fmtNum(v, 6) : String(v)]) : [['machine', id || '—']]);
  const target = simOf(e);
  const simulated = machines.find((m) => m.id === target) || null;
  const device = e.result && e.result.extra && e.result.extra.device;
  const model = e.result?.backend === 'sim' ? h('p', { class: 'muted', id: 'sim-model' }, modelLine(e.result.extra)) : null;
  const machineCard = target
    ? h('div', { class: 'card', id: 'machine-card' },
      h('h2', {}, 'Simulated machine ', machineChip(target, simName(simulated, target)), h('span', { class: 'badge sim' }, 'not measured')),
      h('p', { class: 'muted' }, 'Run on the simulator of ', machineChip(e.machine_id, machine ? machineName(machine) : null),
        ` with the calibration of ${simName(simulated, target)}${device ? `, as ${device}` : ''}: simulated, not measured.`),
      model, kv(rowsOf(simulated, target), 'machine-table'))
    : h('div', { class: 'card', id: 'machine-card' },
      h('h2', {}, 'Machine', isSimulated(e, machine) ? h('span', { class: 'badge sim' }, `simulated${device ? `: ${device}` : ''}`) : null),
      model, kv(rowsOf(machine, e.machine_id), 'machine-table'));
  return h('section', { class: 'two-col' },
    h('div', { class: 'card' }, h('h2', {}, 'Spec (after defaults)'), kv(specRows, 'spec-table'), kv(times)),
    machineCard);
}
