// screenshot.mjs — the README's picture (`make screenshot`): the dashboard's Compare view
// with the example results of real GPUs, rendered by headless Chromium (harness.mjs) and
// written as a PNG (default docs/compare.png).
//
// It starts the real binary ($STREAMLAB_BIN) with the sim backend on a free port with a
// temporary database and --examples DIR (default ./examples), imports the examples
// (POST /api/examples), picks the two measured machines with the most configurations in
// common and, of those, the largest family that differs only in streams (e.g. async_v2 at
// 2^25, 1..256 streams), runs the same configurations on the simulated H100 (the lent-h100
// profile; --no-sim leaves it out), opens #/compare?ids=… at 1280x800, waits until the bar
// chart has drawn (polling with a deadline), saves the PNG and stops the server.
//
// Where the server has no example bundles yet (or no POST /api/examples), it says so and
// falls back: a second, short-lived server simulates one sweep on the lent-h100 and
// lent-h200 profiles, exports it (GET /api/export?…&ops=median), and the first server
// imports that bundle (POST /api/import). That picture shows simulations, and says so in
// its legend; make it again once examples/ holds the real bundles.
//
// Usage: node tests/web/screenshot.mjs [OUT.png] [--examples DIR] [--no-sim]
//        [--ids ID,ID,…] (exact runs to show) [--width 1280] [--height 800] [--scale 1]

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const here = path.dirname(new URL(import.meta.url).pathname);
const repo = path.resolve(here, '../..');

// the fields Compare groups runs by (web/js/compare.js CONFIG_FIELDS)
const CONFIG_FIELDS = ['variant', 'size', 'streams', 'chunks', 'kernel', 'kernel_iters', 'block_size', 'launch',
  'host_memory', 'default_stream', 'stream_flags', 'flush', 'driver_mode', 'timing', 'devices'];
const MAX_CONFIGS = 9; // bars that still read at 1280 px: 1..256 streams in powers of two
const VARIANT_ORDER = ['async_v2', 'async_v1', 'round_robin', 'engine_streams', 'sequential'];

function parseArgs(argv) {
  const o = { out: path.join(repo, 'docs/compare.png'), examples: 'examples', sim: true, ids: null, width: 1280, height: 800, scale: 1 };
  for (let i = 0; i < argv.length; i += 1) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      i += 1;
      return argv[i];
    };
    if (a === '--examples') o.examples = next();
    else if (a === '--no-sim') o.sim = false;
    else if (a === '--ids') o.ids = next().split(',').filter(Boolean);
    else if (a === '--width') o.width = Number(next());
    else if (a === '--height') o.height = Number(next());
    else if (a === '--scale') o.scale = Number(next());
    else if (a.startsWith('-')) usage(`unknown option ${a}`);
    else o.out = path.resolve(a);
  }
  return o;
}
function usage(why) {
  console.error(`screenshot: ${why}\nusage: node tests/web/screenshot.mjs [OUT.png] [--examples DIR] [--no-sim] [--ids ID,…] [--width W] [--height H] [--scale S]`);
  process.exit(2);
}

function say(msg) {
  console.log(`screenshot: ${msg}`);
}

// ---- servers ----
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const servers = [];
async function startServer(name, bin, tmp, extra) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const logPath = path.join(tmp, `${name}.log`);
  const log = fs.openSync(logPath, 'w');
  const child = spawn(bin, ['serve', '--listen', `127.0.0.1:${port}`, '--db', path.join(tmp, `${name}.db`),
    '--web', path.join(repo, 'web'), '--backend', 'sim', ...extra], { stdio: ['ignore', log, log] });
  const srv = { name, url, child, logPath, exited: false };
  child.on('exit', () => { srv.exited = true; });
  servers.push(srv);
  const deadline = Date.now() + 30000;
  for (;;) {
    if (srv.exited) break;
    try {
      const r = await fetch(`${url}/api/health`);
      if (r.ok) return srv;
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the ${name} server did not answer /api/health within 30 s:\n${fs.readFileSync(logPath, 'utf8').split('\n').slice(-20).join('\n')}`);
}
async function stopServer(srv) {
  if (srv.exited) return;
  const gone = new Promise((r) => srv.child.once('exit', r));
  srv.child.kill('SIGTERM');
  const t = setTimeout(() => srv.child.kill('SIGKILL'), 10000);
  await gone;
  clearTimeout(t);
}

// ---- the API ----
let H; // harness.mjs, imported once STREAMLAB_URL names the server
async function call(base, method, p, body) {
  return H.apiCall(method, p, body, { base });
}
async function must(base, method, p, body, ok = [200]) {
  const r = await call(base, method, p, body);
  if (!ok.includes(r.status)) throw new Error(`${method} ${p}: ${r.status} ${r.text.slice(0, 300)}`);
  return r.json;
}
async function allDone(base) {
  const out = [];
  let before = null;
  for (;;) {
    const page = await must(base, 'GET', `/api/experiments?status=done&limit=500${before ? `&before=${encodeURIComponent(before)}` : ''}`);
    out.push(...(page.items || []));
    if (!page.next) return out;
    before = page.next;
  }
}
async function waitAll(base, ids, timeoutMs = 300000) {
  const left = new Set(ids);
  const got = new Map();
  await H.until(async () => {
    for (const id of [...left]) {
      const e = await must(base, 'GET', `/api/experiments/${id}`);
      if (['done', 'failed', 'cancelled'].includes(e.status)) {
        got.set(id, e);
        left.delete(id);
      }
    }
    return left.size === 0;
  }, `${ids.length} run(s) to finish`, timeoutMs, 200);
  return ids.map((id) => got.get(id));
}

// ---- which runs to show ----
const configKey = (s) => JSON.stringify(CONFIG_FIELDS.map((k) => (s || {})[k] ?? null));
const familyKey = (s) => JSON.stringify(CONFIG_FIELDS.filter((k) => k !== 'streams' && k !== 'chunks').map((k) => (s || {})[k] ?? null)
  .concat([s.chunks === s.streams ? 'chunks=streams' : 'chunks']));
const sourceKey = (e) => (e.spec && e.spec.sim_of ? `sim:${e.spec.sim_of}` : e.machine_id);

// The two sources with the most configurations in common, and of those configurations the
// largest family that differs only in streams: one run (the newest) per source and configuration.
function pickRuns(runs) {
  const bySource = new Map();
  for (const e of runs) {
    const s = sourceKey(e);
    if (!bySource.has(s)) bySource.set(s, new Map());
    const m = bySource.get(s);
    const k = configKey(e.spec);
    if (!m.has(k)) m.set(k, e); // newest first: keep the first seen
  }
  const keys = [...bySource.keys()];
  let best = null;
  for (let i = 0; i < keys.length; i += 1) {
    for (let j = i + 1; j < keys.length; j += 1) {
      const a = bySource.get(keys[i]);
      const b = bySource.get(keys[j]);
      const shared = [...a.keys()].filter((k) => b.has(k));
      if (!best || shared.length > best.shared.length) best = { pair: [keys[i], keys[j]], shared };
    }
  }
  if (!best || !best.shared.length) return null;
  const families = new Map();
  for (const k of best.shared) {
    const spec = bySource.get(best.pair[0]).get(k).spec;
    const f = familyKey(spec);
    if (!families.has(f)) families.set(f, []);
    families.get(f).push(spec);
  }
  const rankVariant = (v) => {
    const i = VARIANT_ORDER.indexOf(v);
    return i < 0 ? VARIANT_ORDER.length : i;
  };
  const fam = [...families.values()].sort((x, y) => y.length - x.length || y[0].size - x[0].size
    || rankVariant(x[0].variant) - rankVariant(y[0].variant))[0];
  fam.sort((x, y) => x.streams - y.streams);
  // too many: keep the first and last and spread the rest evenly
  const specs = fam.length <= MAX_CONFIGS ? fam
    : [...new Set(Array.from({ length: MAX_CONFIGS }, (_, i) => Math.round((i * (fam.length - 1)) / (MAX_CONFIGS - 1))))].map((i) => fam[i]);
  const ids = [];
  for (const spec of specs) for (const s of best.pair) ids.push(bySource.get(s).get(configKey(spec)).id);
  return { pair: best.pair, specs, ids };
}

// ---- the fallback: a bundle of simulated runs, made on a second server ----
async function simulatedBundle(bin, tmp, main) {
  const empty = path.join(tmp, 'no-examples');
  fs.mkdirSync(empty, { recursive: true });
  const src = await startServer('bundle-source', bin, tmp, ['--examples', empty]);
  try {
    const machines = (await must(src.url, 'GET', '/api/machines')).items || [];
    const profiles = machines.filter((m) => m.simulatable && m.profile && m.profile.name);
    const want = ['lent-h100', 'lent-h200'].map((n) => profiles.find((m) => m.profile.name === n)).filter(Boolean);
    const targets = want.length === 2 ? want : profiles.slice(0, 2);
    if (!targets.length) throw new Error('the server lists no simulatable profile');
    const sweepIds = [];
    for (const m of targets) {
      const sw = await must(src.url, 'POST', '/api/sweeps', {
        base: { variant: 'async_v2', size: '2^25', reps: 5, sim_of: m.id, label: 'screenshot fallback (simulated)' },
        axes: { streams: [1, 2, 4, 8, 16, 32, 64, 128] },
      }, [202]);
      sweepIds.push(sw.id);
      await waitAll(src.url, sw.experiments);
    }
    for (const id of sweepIds) {
      const bundle = await must(src.url, 'GET', `/api/export?sweep=${id}&ops=median`);
      const r = await must(main.url, 'POST', '/api/import', bundle);
      say(`fallback: imported ${r.imported} simulated run(s) of ${targets.map((m) => m.profile.name).join(', ')} from a bundle`);
    }
  } finally {
    await stopServer(src);
  }
}

// ---- the simulated H100 beside the measured machines ----
async function simulateH100(main, specs) {
  const machines = (await must(main.url, 'GET', '/api/machines')).items || [];
  const h100 = machines.find((m) => m.simulatable && m.profile && m.profile.name === 'lent-h100');
  if (!h100) {
    say('no lent-h100 profile on this server: the simulated H100 is left out');
    return [];
  }
  // the examples' configurations and reps, simulated on the profile
  const queued = [];
  for (const [i, spec] of specs.entries()) {
    const body = { reps: spec.reps, warmup: spec.warmup, sim_of: h100.id, label: 'screenshot: simulated H100' };
    for (const k of CONFIG_FIELDS) if (spec[k] !== undefined) body[k] = spec[k];
    const r = await call(main.url, 'POST', '/api/experiments', body);
    if (r.status === 202) queued.push({ i, id: r.json.id });
    else say(`simulated H100 of ${spec.variant} ${spec.size} x${spec.streams} refused (${r.status}): left out`);
  }
  const done = await waitAll(main.url, queued.map((q) => q.id));
  const out = [];
  for (const [n, e] of done.entries()) {
    if (e.status === 'done') out.push({ i: queued[n].i, id: e.id });
    else say(`simulated H100 run ${e.id} ${e.status}: left out`);
  }
  return out;
}

// ---- main ----
async function main() {
  const opt = parseArgs(process.argv.slice(2));
  const bin = process.env.STREAMLAB_BIN || path.join(repo, 'build/streamlab');
  if (!fs.existsSync(bin)) usage(`${bin} is missing: build it (make) or set STREAMLAB_BIN`);
  if (!fs.existsSync(path.join(repo, 'web/vendor/chart.umd.min.js'))) usage('web/vendor/chart.umd.min.js is missing: run make web-vendor');
  if (!fs.existsSync(path.join(here, 'node_modules/puppeteer-core'))) usage('tests/web/node_modules is missing: cd tests/web && npm ci');
  const chromium = process.env.CHROMIUM || '/usr/bin/chromium';
  if (!fs.existsSync(chromium)) usage(`${chromium} is missing: apt-get install chromium (as root), or set CHROMIUM`);

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'streamlab-screenshot-'));
  let page = null;
  try {
    const examplesDir = path.resolve(repo, opt.examples);
    const main = await startServer('main', bin, tmp, ['--examples', examplesDir]);
    process.env.STREAMLAB_URL = main.url;
    H = await import('./harness.mjs');

    let picked = null;
    let simulated = false;
    if (!opt.ids) {
      // the examples the server ships
      const imp = await call(main.url, 'POST', '/api/examples');
      if (imp.status === 200) {
        const n = (imp.json.imported || 0) + (imp.json.unchanged || 0);
        say(`POST /api/examples: ${n} run(s) from ${examplesDir}`);
      } else {
        say(`POST /api/examples answered ${imp.status} (${imp.text.slice(0, 120)}): this server has no examples endpoint`);
      }
      picked = pickRuns(await allDone(main.url));
      if (!picked) {
        say(`no two machines with runs in common in ${examplesDir}: FALLING BACK to simulated runs (the picture will say "sim");`);
        say('run `make screenshot` again once examples/ holds the bundles of real runs');
        await simulatedBundle(bin, tmp, main);
        picked = pickRuns(await allDone(main.url));
        simulated = true;
        if (!picked) throw new Error('even the fallback bundle gave no two machines to compare');
      }
    }

    let ids = opt.ids;
    if (!ids) {
      const { pair, specs } = picked;
      const s = specs[0];
      say(`showing ${pair.join(' vs ')}: ${s.variant} ${s.size} elements, streams ${specs.map((x) => x.streams).join(', ')}`);
      ids = picked.ids.slice();
      if (opt.sim && !simulated) {
        const sims = await simulateH100(main, specs);
        for (const { id } of sims) ids.push(id);
        if (sims.length) say(`with the simulated H100 (lent-h100 profile): ${sims.length} run(s)`);
      }
    }

    await H.launch();
    page = await H.newPage();
    await page.setViewport({ width: opt.width, height: opt.height, deviceScaleFactor: opt.scale });
    await H.open(page, `#/compare?ids=${ids.join(',')}`, main.url);
    // drawn: Chart.js (animation off in ui.js) has the datasets, and two frames have passed
    await H.until(() => page.evaluate(() => {
      const c = document.getElementById('compare-bars-canvas');
      const ch = c && window.Chart && window.Chart.getChart(c);
      return !!(ch && ch.data.datasets.length && ch.data.datasets.some((d) => d.data.some((v) => v > 0)) && c.width > 0);
    }), 'the compare bar chart to draw', 30000);
    const sources = await page.evaluate(() => window.Chart.getChart(document.getElementById('compare-bars-canvas')).data.datasets.map((d) => d.label));
    await page.evaluate(() => new Promise((r) => {
      window.scrollTo(0, 0);
      requestAnimationFrame(() => requestAnimationFrame(r));
    }));
    H.checkNoProblems(page);
    fs.mkdirSync(path.dirname(opt.out), { recursive: true });
    await page.screenshot({ path: opt.out, fullPage: false });
    say(`wrote ${path.relative(process.cwd(), opt.out) || opt.out} (${opt.width}x${opt.height}${opt.scale !== 1 ? ` @${opt.scale}x` : ''}): ${sources.join(' | ')}`);
    if (simulated) say('NOTE: simulated data (no example bundles of real runs were found)');
  } finally {
    if (page) await page.closeAll().catch(() => {});
    if (H) await H.close();
    for (const s of servers) await stopServer(s);
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(`screenshot: FAILED: ${err.message}`);
  for (const s of servers) if (!s.exited) s.child.kill('SIGTERM');
  process.exit(1);
});
