// gantt.js — the per-stream timeline, drawn on a canvas of our own (not Chart.js: a run of
// 1024 streams x 64 chunks is 200 000 bars, and a canvas draws those in one pass). One
// lane per (device, stream), a lane for host work, above them a lane of the issuing thread's
// calls where the run recorded them (the call that handed each op over, in its op's colour,
// faded: where the GPU waits for the host, this lane shows it), and above those one row per
// engine kind (all H2D, all kernels, all D2H) so that overlap shows at a glance. Colours are
// ui.OP_COLORS. Hover shows op, stream, chunk, bytes, µs and GB/s; drag to zoom to a time
// range, double-click or "reset" to see it all; ctrl+wheel zooms, shift+wheel pans.
//
// The canvas carries what the tests check: data-lanes (stream lanes), data-host-lanes,
// data-call-lanes and data-calls, data-ops, data-drawn (bars drawn in the last frame, calls
// included), data-lane-top, data-lane-height and data-plot-left (CSS pixels), so a test can
// look for op colours in every lane.

import { OP_COLORS, OP_KINDS, OP_LABELS, h, opSwatch, fmtBytes, fmtUs, fmtNum } from './ui.js';

const LABEL_W = 118;
const AXIS_H = 26;
const ROW_H = 14;     // engine summary rows
const GAP = 10;
const BG = '#12161d';
const CALL_ALPHA = 0.55; // a call is drawn in its op's colour, faded

function niceStep(span, target) {
  const raw = span / target;
  const p = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5, 10]) if (raw <= m * p) return m * p;
  return 10 * p;
}

// Sum of the union of [start, end) intervals: how long an engine kind was busy.
function busyUs(intervals) {
  const iv = intervals.slice().sort((a, b) => a[0] - b[0]);
  let total = 0;
  let s = -Infinity;
  let e = -Infinity;
  for (const [a, b] of iv) {
    if (a > e) {
      if (e > s) total += e - s;
      s = a;
      e = b;
    } else if (b > e) e = b;
  }
  if (e > s) total += e - s;
  return total;
}

// Lanes: host first, then devices in order, the default stream (-1) before stream 0.
function buildLanes(ops) {
  const lanes = new Map();
  const devices = new Set();
  for (const op of ops) if (op.op !== 'host') devices.add(op.device ?? 0);
  const multi = devices.size > 1;
  for (const op of ops) {
    const host = op.op === 'host';
    const key = host ? 'host' : `${op.device ?? 0}:${op.stream}`;
    let lane = lanes.get(key);
    if (!lane) {
      lane = {
        key, host, device: op.device ?? 0, stream: op.stream, ops: [],
        label: host ? 'host' : `${multi ? `GPU${op.device ?? 0} · ` : ''}${op.stream < 0 ? 'default' : `stream ${op.stream}`}`,
      };
      lanes.set(key, lane);
    }
    lane.ops.push(op);
  }
  const list = [...lanes.values()].sort((a, b) => (b.host - a.host) || (a.device - b.device) || (a.stream - b.stream));
  for (const l of list) l.ops.sort((a, b) => a.start_us - b.start_us);
  return list;
}

export function createGantt({ ops, calls, title, extentUs, onRange }) {
  const lanes = buildLanes(ops);
  const callOps = (calls || []).map((c) => ({ ...c, call: true })).sort((a, b) => a.start_us - b.start_us);
  if (callOps.length) {
    lanes.unshift({ key: 'calls', calls: true, host: false, device: -1, stream: -1, ops: callOps, label: 'host calls' });
  }
  const streamLanes = lanes.filter((l) => !l.host && !l.calls).length;
  let t1Max = extentUs || 0;
  for (const op of ops) if (op.end_us > t1Max) t1Max = op.end_us;
  for (const c of callOps) if (c.end_us > t1Max) t1Max = c.end_us;
  if (!(t1Max > 0)) t1Max = 1;
  let range = [0, t1Max];
  // engine rows: every op of a kind on a device drawn into one row, with its busy fraction
  const byKind = Object.fromEntries(OP_KINDS.map((k) => [k, []]));
  for (const op of ops) if (byKind[op.op]) byKind[op.op].push(op);
  const devices = [...new Set(lanes.filter((l) => !l.host && !l.calls).map((l) => l.device))].sort((a, b) => a - b);
  const rows = [];
  for (const d of devices.length ? devices : [0]) {
    for (const k of ['h2d', 'kernel', 'd2h']) {
      const list = byKind[k].filter((o) => (o.device ?? 0) === d);
      const name = k === 'kernel' ? 'kernels' : k.toUpperCase();
      rows.push({ kind: k, ops: list, label: devices.length > 1 ? `GPU${d} ${name}` : name, busy: busyUs(list.map((o) => [o.start_us, o.end_us])) });
    }
  }
  const laneH = lanes.length <= 16 ? 22 : Math.max(3, Math.min(22, Math.floor(560 / lanes.length)));
  const rowsTop = AXIS_H + 4;
  const laneTop = rowsTop + rows.length * ROW_H + GAP;
  const height = laneTop + lanes.length * laneH + 8;

  const canvas = h('canvas', { class: 'gantt-canvas', dataset: {
    lanes: String(streamLanes), hostLanes: String(lanes.filter((l) => l.host).length),
    callLanes: String(callOps.length ? 1 : 0), calls: String(callOps.length), ops: String(ops.length),
    laneTop: String(laneTop), laneHeight: String(laneH), plotLeft: String(LABEL_W),
  } });
  const tip = h('div', { class: 'gantt-tip', hidden: true });
  const rangeText = h('span', { class: 'range-text mono' });
  const sel = h('div', { class: 'gantt-sel', hidden: true });
  // up to ~1400 px the whole chart shows at once; taller ones (1024 streams) scroll
  const wrap = h('div', { class: `gantt-wrap${height > 1400 ? ' tall' : ''}` }, canvas, sel, tip);
  const el = h('div', { class: 'gantt' },
    h('div', { class: 'gantt-bar' },
      title ? h('h3', {}, title) : null,
      h('span', { class: 'legend' }, OP_KINDS.filter((k) => byKind[k].length).map(opSwatch)),
      h('span', { class: 'spacer' }),
      rangeText,
      h('button', { type: 'button', class: 'ghost small', title: 'zoom out ×2', onclick: () => zoomAt(0.5, 2) }, '−'),
      h('button', { type: 'button', class: 'ghost small', title: 'zoom in ×2', onclick: () => zoomAt(0.5, 0.5) }, '+'),
      h('button', { type: 'button', class: 'ghost small gantt-reset', onclick: () => setRange(0, t1Max, true) }, 'reset')),
    wrap,
    h('div', { class: 'gantt-hint muted' }, `${streamLanes} stream lane${streamLanes === 1 ? '' : 's'}, ${ops.length.toLocaleString('en-US')} ops · drag to zoom · double-click to reset · ctrl+wheel zoom · shift+wheel pan`));

  let cssW = 0;
  let frame = 0;
  const ctx2d = canvas.getContext('2d', { alpha: false });

  const xOf = (t) => LABEL_W + ((t - range[0]) / (range[1] - range[0])) * (cssW - LABEL_W - 8);
  const tOf = (x) => range[0] + ((x - LABEL_W) / (cssW - LABEL_W - 8)) * (range[1] - range[0]);

  function draw() {
    frame = 0;
    cssW = wrap.clientWidth || 800;
    const dpr = window.devicePixelRatio || 1;
    if (canvas.width !== Math.round(cssW * dpr) || canvas.height !== Math.round(height * dpr)) {
      canvas.width = Math.round(cssW * dpr);
      canvas.height = Math.round(height * dpr);
      canvas.style.width = `${cssW}px`;
      canvas.style.height = `${height}px`;
    }
    const g = ctx2d;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.fillStyle = BG;
    g.fillRect(0, 0, cssW, height);

    // lane stripes
    if (laneH >= 6) {
      g.fillStyle = 'rgba(255,255,255,0.025)';
      for (let i = 0; i < lanes.length; i += 2) g.fillRect(0, laneTop + i * laneH, cssW, laneH);
    }
    // time axis and grid
    const span = range[1] - range[0];
    const step = niceStep(span, Math.max(2, (cssW - LABEL_W) / 110));
    g.font = '11px ui-monospace, SFMono-Regular, Menlo, monospace';
    g.textBaseline = 'middle';
    g.fillStyle = '#8b95a5';
    g.strokeStyle = 'rgba(255,255,255,0.07)';
    g.lineWidth = 1;
    g.beginPath();
    for (let t = Math.ceil(range[0] / step) * step; t <= range[1]; t += step) {
      const x = Math.round(xOf(t)) + 0.5;
      g.moveTo(x, AXIS_H - 4);
      g.lineTo(x, height);
      const label = fmtUs(t);
      if (x + 3 + g.measureText(label).width < cssW) g.fillText(label, x + 3, AXIS_H / 2);
    }
    g.stroke();

    // labels
    g.fillStyle = '#c9d1dc';
    g.textAlign = 'right';
    rows.forEach((r, i) => {
      g.fillStyle = OP_COLORS[r.kind];
      g.fillText(`${r.label} ${Math.round((100 * r.busy) / t1Max)}%`, LABEL_W - 8, rowsTop + i * ROW_H + ROW_H / 2);
    });
    const every = laneH >= 11 ? 1 : Math.ceil(12 / laneH);
    g.fillStyle = '#aab3c0';
    lanes.forEach((l, i) => {
      if (i % every === 0 || l.host || l.calls) g.fillText(l.label, LABEL_W - 8, laneTop + i * laneH + laneH / 2);
    });
    g.textAlign = 'left';
    g.strokeStyle = 'rgba(255,255,255,0.12)';
    g.beginPath();
    g.moveTo(LABEL_W - 0.5, AXIS_H);
    g.lineTo(LABEL_W - 0.5, height);
    g.moveTo(0, laneTop - GAP / 2 - 0.5);
    g.lineTo(cssW, laneTop - GAP / 2 - 0.5);
    // a line where the lanes of the next device (or the host's) end
    lanes.forEach((l, i) => {
      if (i > 0 && (l.device !== lanes[i - 1].device || l.host !== lanes[i - 1].host || l.calls !== lanes[i - 1].calls)) {
        g.moveTo(0, laneTop + i * laneH - 0.5);
        g.lineTo(cssW, laneTop + i * laneH - 0.5);
      }
    });
    g.stroke();

    // bars: one fillStyle per kind, culled to the range, at least one pixel wide
    g.save();
    g.beginPath();
    g.rect(LABEL_W, 0, cssW - LABEL_W, height);
    g.clip();
    let drawn = 0;
    const pad = laneH >= 8 ? 2 : laneH >= 4 ? 1 : 0;
    for (const kind of OP_KINDS) {
      g.fillStyle = OP_COLORS[kind];
      lanes.forEach((l, i) => {
        const y = laneTop + i * laneH + pad;
        const hh = laneH - 2 * pad;
        g.globalAlpha = l.calls ? CALL_ALPHA : 1;
        for (const op of l.ops) {
          if (op.op !== kind || op.end_us < range[0] || op.start_us > range[1]) continue;
          const x0 = xOf(op.start_us);
          const w = Math.max(1, xOf(op.end_us) - x0);
          g.fillRect(x0, y, w, hh);
          drawn += 1;
        }
      });
      g.globalAlpha = 0.85;
      rows.forEach((r, ri) => {
        if (r.kind !== kind) return;
        for (const op of r.ops) {
          if (op.end_us < range[0] || op.start_us > range[1]) continue;
          const x0 = xOf(op.start_us);
          g.fillRect(x0, rowsTop + ri * ROW_H + 2, Math.max(1, xOf(op.end_us) - x0), ROW_H - 4);
        }
      });
      g.globalAlpha = 1;
    }
    g.restore();
    canvas.dataset.drawn = String(drawn);
    rangeText.textContent = `${fmtUs(range[0])} – ${fmtUs(range[1])}`;
  }
  const redraw = () => {
    if (!frame) frame = requestAnimationFrame(draw);
  };

  function setRange(a, b, notify) {
    const minSpan = 0.01;
    let lo = Math.max(0, Math.min(a, b));
    let hi = Math.min(t1Max, Math.max(a, b));
    if (hi - lo < minSpan) {
      const mid = (lo + hi) / 2;
      lo = Math.max(0, mid - minSpan / 2);
      hi = lo + minSpan;
    }
    // to the nanosecond, as the link keeps it (run.js: toFixed(3)): a dragged 135.1499 µs shown
    // as 135.1 came back from the link as 135.150, shown as 135.2
    range = [Math.round(lo * 1000) / 1000, Math.round(hi * 1000) / 1000];
    redraw();
    if (notify && onRange) onRange(range[0], range[1], lo <= 0 && hi >= t1Max);
  }
  function zoomAt(frac, factor) {
    const c = range[0] + frac * (range[1] - range[0]);
    const span = Math.min(t1Max, (range[1] - range[0]) * factor);
    let lo = c - frac * span;
    lo = Math.max(0, Math.min(lo, t1Max - span));
    setRange(lo, lo + span, true);
  }

  // hover: the lane under the pointer, then the op under it (ops in a lane are sorted by start)
  function opAt(x, y) {
    if (x < LABEL_W) return null;
    const t = tOf(x);
    const tol = (2 * (range[1] - range[0])) / (cssW - LABEL_W);
    let list = null;
    if (y >= laneTop) {
      const lane = lanes[Math.floor((y - laneTop) / laneH)];
      list = lane && lane.ops;
    } else if (y >= rowsTop && y < rowsTop + rows.length * ROW_H) {
      list = rows[Math.floor((y - rowsTop) / ROW_H)].ops;
    }
    if (!list) return null;
    let best = null;
    for (const op of list) {
      if (op.start_us - tol <= t && t <= op.end_us + tol) {
        if (!best || op.end_us - op.start_us < best.end_us - best.start_us) best = op;
      }
    }
    return best;
  }
  function showTip(op, x, y) {
    if (!op) {
      tip.hidden = true;
      return;
    }
    const dur = op.end_us - op.start_us;
    const gbps = op.bytes && dur > 0 ? op.bytes / dur / 1000 : null;
    const gpuStream = `GPU${op.device ?? 0}, ${op.stream < 0 ? 'default stream' : `stream ${op.stream}`}`;
    tip.replaceChildren(
      h('div', { class: 'tip-head' }, h('i', { style: { background: OP_COLORS[op.op] } }),
        op.call ? `the host's call: ${OP_LABELS[op.op] || op.op}` : OP_LABELS[op.op] || op.op),
      h('table', {},
        h('tr', {}, h('th', {}, 'where'), h('td', {}, op.call ? `issuing thread, for ${gpuStream}` : op.op === 'host' ? 'host' : gpuStream)),
        h('tr', {}, h('th', {}, 'chunk'), h('td', {}, String(op.chunk ?? '—'))),
        op.bytes && !op.call ? h('tr', {}, h('th', {}, 'bytes'), h('td', {}, `${fmtBytes(op.bytes)} (${op.bytes.toLocaleString('en-US')})`)) : null,
        h('tr', {}, h('th', {}, 'start'), h('td', {}, `${fmtNum(op.start_us, 6)} µs`)),
        h('tr', {}, h('th', {}, 'end'), h('td', {}, `${fmtNum(op.end_us, 6)} µs`)),
        h('tr', {}, h('th', {}, 'duration'), h('td', {}, `${fmtNum(dur, 4)} µs`)),
        gbps && !op.call ? h('tr', {}, h('th', {}, 'bandwidth'), h('td', {}, `${fmtNum(gbps)} GB/s`)) : null));
    tip.hidden = false;
    const w = tip.offsetWidth;
    tip.style.left = `${Math.min(x + 14, cssW - w - 4)}px`;
    tip.style.top = `${y + 14}px`;
  }

  let dragFrom = null;
  const local = (ev) => {
    const r = canvas.getBoundingClientRect();
    return [ev.clientX - r.left, ev.clientY - r.top];
  };
  canvas.addEventListener('mousemove', (ev) => {
    const [x, y] = local(ev);
    if (dragFrom !== null) {
      const a = Math.max(LABEL_W, Math.min(dragFrom, x));
      const b = Math.min(cssW, Math.max(dragFrom, x));
      Object.assign(sel.style, { left: `${a}px`, width: `${b - a}px`, top: '0px', height: `${height}px` });
      sel.hidden = false;
      tip.hidden = true;
      return;
    }
    const op = opAt(x, y);
    canvas.style.cursor = op ? 'pointer' : x >= LABEL_W ? 'crosshair' : 'default';
    showTip(op, x, y);
  });
  canvas.addEventListener('mouseleave', () => {
    tip.hidden = true;
  });
  canvas.addEventListener('mousedown', (ev) => {
    const [x] = local(ev);
    if (x >= LABEL_W && ev.button === 0) dragFrom = x;
  });
  window.addEventListener('mouseup', onUp);
  function onUp(ev) {
    if (dragFrom === null) return;
    const [x] = local(ev);
    const from = dragFrom;
    dragFrom = null;
    sel.hidden = true;
    if (Math.abs(x - from) > 4) setRange(tOf(Math.max(LABEL_W, Math.min(from, x))), tOf(Math.max(from, x)), true);
  }
  canvas.addEventListener('dblclick', () => setRange(0, t1Max, true));
  canvas.addEventListener('wheel', (ev) => {
    if (!ev.ctrlKey && !ev.shiftKey && !ev.metaKey) return;
    ev.preventDefault();
    const [x] = local(ev);
    const frac = Math.max(0, Math.min(1, (x - LABEL_W) / (cssW - LABEL_W - 8)));
    if (ev.shiftKey) {
      const span = range[1] - range[0];
      const d = (Math.sign(ev.deltaY || ev.deltaX) * span) / 10;
      const lo = Math.max(0, Math.min(t1Max - span, range[0] + d));
      setRange(lo, lo + span, true);
    } else zoomAt(frac, ev.deltaY > 0 ? 1.25 : 0.8);
  }, { passive: false });

  const ro = new ResizeObserver(redraw);
  ro.observe(wrap);

  return {
    el,
    canvas,
    lanes: streamLanes,
    setRange: (a, b) => setRange(a, b, false),
    draw,
        destroy() {
      ro.disconnect();
      window.removeEventListener('mouseup', onUp);
      if (frame) cancelAnimationFrame(frame);
    },
  };
}
