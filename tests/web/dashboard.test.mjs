// dashboard.test.mjs — the dashboard in a real browser against the real server (sim
// backend, temporary database; tests/web/run.sh starts it). The tests run in order and
// build on each other: the store starts empty, a sweep is submitted through the form and
// watched in the queue, its runs feed the timeline, sweep, runs and compare tests; then a
// run simulating the lent H200's profile (spec.sim_of) is submitted through the form and
// must be marked simulated in Runs, Run and Sweep, and stand apart in Compare.
// Every test fails on any console error or page error it did not expect by name.
// Screenshots of every view go to tests/web/artifacts/.

import fs from 'node:fs';
import {
  BASE, ARTIFACTS, check, until, apiCall, apiGet, waitFinished, launch, close, newPage, open, waitReady,
  checkNoProblems, shot, test, runAll,
} from './harness.mjs';

const TOKEN_URL = process.env.STREAMLAB_TOKEN_URL || '';
const TOKEN = process.env.STREAMLAB_TOKEN || '';
const EXAMPLES_URL = process.env.STREAMLAB_EXAMPLES_URL || '';
const EXAMPLES_DIR = process.env.STREAMLAB_EXAMPLES_DIR || '';
const OP_RGB = { h2d: [62, 207, 142], kernel: [79, 140, 255], d2h: [255, 107, 107], host: [242, 193, 78] };
const resourceError = (status) => ({ re: new RegExp(`status of ${status}`), count: 1 });

const state = { sweepId: null, sweepPoints: [], simRunId: null };

// For every lane of a Gantt canvas: which op colours it holds, and where each first appears.
async function lanePaint(page, selector) {
  return page.$eval(selector, (c, rgb) => {
    const g = c.getContext('2d');
    const dpr = c.width / c.clientWidth;
    const top = Number(c.dataset.laneTop);
    const lh = Number(c.dataset.laneHeight);
    const lanes = Number(c.dataset.lanes) + Number(c.dataset.hostLanes);
    const calls = Number(c.dataset.callLanes || 0); // the host-calls lane, first, in faded colours
    const x0 = Math.ceil(Number(c.dataset.plotLeft) * dpr);
    const out = [];
    for (let i = calls; i < calls + lanes; i++) {
      const yCss = top + i * lh + lh / 2;
      const row = g.getImageData(x0, Math.floor(yCss * dpr), c.width - x0, 1).data;
      const first = {};
      for (let p = 0; p < row.length; p += 4) {
        for (const [k, [r, gg, b]] of Object.entries(rgb)) {
          if (first[k] === undefined && Math.abs(row[p] - r) < 6 && Math.abs(row[p + 1] - gg) < 6 && Math.abs(row[p + 2] - b) < 6) {
            first[k] = { x: (x0 + p / 4) / dpr, y: yCss };
          }
        }
      }
      out.push(first);
    }
    return out;
  }, OP_RGB);
}

async function datasetsOf(page, selector) {
  return page.$eval(selector, (c) => {
    const ch = window.Chart.getChart(c);
    if (!ch) return null;
    return {
      type: ch.config.type,
      xType: ch.scales.x?.type,
      datasets: ch.data.datasets.map((d) => ({
        label: d.label, kind: d.kind || null, band: !!d.band, n: d.data.length, data: d.data,
        simulated: !!d.simulated, simOf: d.simOf || null, color: d.borderColor || null, fill: d.backgroundColor || null,
      })),
      legend: (ch.legend?.legendItems || []).map((it) => it.text),
    };
  });
}

async function setText(page, selector, value) {
  await page.$eval(selector, (el) => { el.value = ''; });
  await page.type(selector, value);
}

async function sweepExperiments(id) {
  const sweep = await apiGet(`/api/sweeps/${id}`);
  const ids = (sweep.experiments || []).map((x) => (typeof x === 'string' ? x : x.id));
  return Promise.all(ids.map((x) => apiGet(`/api/experiments/${x}`)));
}

async function checkGanttLanes(page, selector, expectedLanes, what) {
  // the canvas is painted on the next animation frame (gantt.js draw sets data-drawn when
  // done): read its pixels before that and every lane is empty (seen once on a loaded
  // clean build, 256 streams: "empty lanes 0,1,2,...")
  await page.waitForFunction((sel) => document.querySelector(sel)?.dataset.drawn !== undefined, { timeout: 10000 }, selector);
  const lanes = Number(await page.$eval(selector, (c) => c.dataset.lanes));
  check(lanes === expectedLanes, `${what}: one lane per stream and device`, expectedLanes, lanes);
  const paint = await lanePaint(page, selector);
  const empty = paint.map((p, i) => (Object.keys(p).length ? -1 : i)).filter((i) => i >= 0);
  check(empty.length === 0, `${what}: every lane has bars drawn in op colours`, 'no empty lanes', `empty lanes ${empty.slice(0, 20).join(',')}`);
  return paint;
}

// ---------------------------------------------------------------------------------------
test('an empty store says what to do first (runs, queue, compare)', async () => {
  const page = await newPage();
  await open(page, '#/runs');
  const empty = await page.$('#empty-state');
  check(empty, 'runs view on an empty store shows #empty-state', 'present', 'absent');
  const text = await page.$eval('#empty-state', (el) => el.textContent);
  check(/No experiments yet/.test(text), 'the empty state says there is nothing yet', 'No experiments yet', text);
  const links = await page.$$eval('#empty-state a', (as) => as.map((a) => a.getAttribute('href')));
  check(links.some((h) => h.startsWith('#/submit')), 'the empty state links to the submit form', '#/submit…', links);
  // this server's --examples folder is empty: nothing to load, only how to submit a run
  const none = await apiGet('/api/examples');
  check(Array.isArray(none.items) && none.items.length === 0, 'GET /api/examples on a server without example bundles', 'items []', none);
  check(!(await page.$('#load-examples')) && !(await page.$('#examples-offer')), 'without example bundles the empty state offers no load button', 'no #load-examples', await page.$eval('#empty-state', (el) => el.innerHTML.slice(0, 300)));
  await shot(page, '01-runs-empty');
  await open(page, '#/queue');
  await until(() => page.$eval('#queued', (el) => /queue is empty/.test(el.textContent)), 'the queue view to say the queue is empty');
  await open(page, '#/compare');
  check(await page.$('#compare-empty'), 'compare with nothing selected explains how to select', '#compare-empty', 'absent');
  checkNoProblems(page);
  await page.closeAll();
});

// ---- the example results (GET/POST /api/examples), on a server whose --examples folder
// holds two bundles that run.sh made (make-examples.mjs): machines m-webtest-a and -b ----
const exampleBundles = () => fs.readdirSync(EXAMPLES_DIR).filter((f) => f.endsWith('.json')).sort()
  .map((file) => ({ file, bundle: JSON.parse(fs.readFileSync(`${EXAMPLES_DIR}/${file}`, 'utf8')) }));
async function storedIds(base) {
  const page = await apiGet('/api/experiments?limit=500', { base });
  return page.items.map((e) => e.id);
}

test('examples: a fresh store offers the example bundles, each with its machines, runs and date', async () => {
  check(EXAMPLES_URL && EXAMPLES_DIR, 'run.sh started a server with example bundles', 'STREAMLAB_EXAMPLES_URL and _DIR set', EXAMPLES_URL);
  const bundles = exampleBundles();
  check(bundles.length === 2, 'run.sh wrote two example bundles', 2, bundles.map((b) => b.file));
  const listed = await apiGet('/api/examples', { base: EXAMPLES_URL });
  const files = (listed.items || []).map((it) => it.file).sort();
  check(JSON.stringify(files) === JSON.stringify(bundles.map((b) => b.file)), 'GET /api/examples lists both bundles', bundles.map((b) => b.file), listed);
  check((await storedIds(EXAMPLES_URL)).length === 0, 'the store starts empty', 0, await storedIds(EXAMPLES_URL));
  const page = await newPage();
  await open(page, '#/runs', EXAMPLES_URL);
  check(await page.$('#empty-state #examples-offer'), 'the empty state offers the examples', '#examples-offer in #empty-state', 'absent');
  const heading = await page.$eval('#examples-offer h2', (el) => el.textContent);
  check(/^Load example results: real runs measured on /.test(heading), 'the offer says what the examples are', 'Load example results: real runs measured on …', heading);
  const rows = await page.$$eval('#examples-list tbody tr', (trs) => trs.map((tr) => ({ file: tr.dataset.file, cells: [...tr.cells].map((td) => td.textContent) })));
  check(rows.length === 2, 'a row per bundle', 2, rows);
  for (const { file, bundle } of bundles) {
    const row = rows.find((r) => r.file === file);
    const item = listed.items.find((it) => it.file === file);
    const m = bundle.machines[0];
    check(row && row.cells[0] === file, `${file}: listed by its file name`, file, row);
    check([m.id, m.label].some((x) => row.cells[1].includes(x)) && [m.id, m.label].some((x) => heading.includes(x)), `${file}: its machine is named in the row and the heading`, `${m.label} or ${m.id}`, [row.cells[1], heading]);
    check(row.cells[2] === String(bundle.experiments.length) && item.experiments === bundle.experiments.length, `${file}: its number of experiments`, bundle.experiments.length, [row.cells[2], item.experiments]);
    check(!item.measured || row.cells[3] === String(item.measured).slice(0, 10), `${file}: the date it was measured`, String(item.measured).slice(0, 10), row.cells[3]);
  }
  check(await page.$('#empty-state #load-examples'), 'one button loads them', '#load-examples', 'absent');
  check(await page.$$eval('#empty-state a', (as) => as.some((a) => a.getAttribute('href').startsWith('#/submit'))), 'the empty state still says how to submit a run', 'a #/submit link', 'none');
  await shot(page, '01b-runs-empty-examples');
  checkNoProblems(page);
  await page.closeAll();
});

test('examples: the button imports them, the runs list shows their machines, and Compare puts them side by side', async () => {
  const bundles = exampleBundles();
  const bundleIds = bundles.flatMap((b) => b.bundle.experiments.map((e) => e.id));
  const exampleMachines = bundles.map((b) => b.bundle.machines[0].id);
  const page = await newPage();
  await open(page, '#/runs', EXAMPLES_URL);
  await page.click('#load-examples');
  await page.waitForSelector('#examples-loaded', { timeout: 20000 });
  await waitReady(page);
  const stored = await until(async () => {
    const ids = await storedIds(EXAMPLES_URL);
    return ids.length === bundleIds.length ? ids : null;
  }, 'GET /api/experiments to hold every example run', 10000);
  check(bundleIds.every((id) => stored.includes(id)), 'every example run is in the store', bundleIds, stored);
  const rows = await page.$$eval('#runs-table tbody tr', (trs) => trs.map((tr) => ({ id: tr.dataset.id, machine: tr.querySelector('.machine-chip').title })));
  check(rows.length === bundleIds.length && rows.every((r) => bundleIds.includes(r.id)), 'the runs list shows the example runs', bundleIds.length, rows);
  check(exampleMachines.every((m) => rows.some((r) => r.machine === m)) && rows.every((r) => exampleMachines.includes(r.machine)), 'their machine is the examples\' machines', exampleMachines, rows.map((r) => r.machine));
  const notice = await page.$eval('#examples-loaded', (el) => el.textContent);
  check(new RegExp(`${bundleIds.length} runs imported`).test(notice), 'the notice says how many runs came in', `${bundleIds.length} runs imported`, notice);
  // a link to Compare with runs of both machines, configuration by configuration
  await page.waitForSelector('#examples-loaded[data-links="1"] #examples-compare', { timeout: 10000 });
  const href = await page.$eval('#examples-compare', (a) => a.getAttribute('href'));
  const ids = new URLSearchParams(href.split('?')[1]).get('ids').split(',');
  const machinesOf = new Set(ids.map((id) => bundles.find((b) => b.bundle.experiments.some((e) => e.id === id))?.bundle.machines[0].id));
  check(ids.length === bundleIds.length && machinesOf.size === 2 && !machinesOf.has(undefined), 'Compare gets the example runs of both machines', `${bundleIds.length} ids over 2 machines`, href);
  await shot(page, '01c-runs-examples-loaded');
  await page.click('#examples-compare');
  await page.waitForFunction(() => location.hash.startsWith('#/compare?ids='), { timeout: 5000 });
  await waitReady(page);
  const bars = await datasetsOf(page, '#compare-bars-canvas');
  check(bars && bars.datasets.length === 2 && bars.datasets.every((d) => d.n === 2), 'Compare: a series per example machine, both configurations', '2 × 2 bars', bars && bars.datasets.map((d) => [d.label, d.n]));
  // with runs in the store the offer is still reachable, folded under the title; again is a no-op
  await open(page, '#/runs', EXAMPLES_URL);
  check(!(await page.$('#empty-state')), 'a store with runs shows no empty state', 'absent', 'present');
  await page.click('#examples-more summary');
  await page.click('#examples-more #load-examples');
  await page.waitForSelector('#examples-loaded', { timeout: 20000 });
  await waitReady(page);
  const again = await page.$eval('#examples-loaded', (el) => el.textContent);
  check(new RegExp(`0 runs imported, ${bundleIds.length} already here`).test(again), 'loading twice imports nothing new', `0 runs imported, ${bundleIds.length} already here`, again);
  check((await storedIds(EXAMPLES_URL)).length === bundleIds.length, 'the store holds each example run once', bundleIds.length, (await storedIds(EXAMPLES_URL)).length);
  checkNoProblems(page);
  await page.closeAll();
});

// A one-experiment bundle imported again under the id `to`, as if another run: edit(bundle,
// experiment) changes it first (a GPU backend, a spec field, its ops). The imported bundle.
async function importAs(bundle, from, to, edit) {
  const copy = JSON.parse(JSON.stringify(bundle).split(from).join(to));
  edit(copy, copy.experiments[0]);
  const imp = await apiCall('POST', '/api/import', copy);
  check(imp.status === 200, `POST /api/import of ${to}`, 200, `${imp.status} ${imp.text.slice(0, 300)}`);
  return copy;
}

// A GPU run with sampled events (the default) composes timelines for a few reps and the
// median one: another rep says so, not that a bundle dropped it.
test('run detail: a sampled run\'s rep without a timeline says why and shows the median', async () => {
  const r = await apiCall('POST', '/api/experiments', { variant: 'round_robin', streams: 2, chunks: 4, size: 2 ** 22, reps: 3, warmup: 0, label: 'web-test sampled' });
  check(r.status === 202, 'POST a sim run', 202, `${r.status} ${r.text}`);
  const e = await waitFinished(r.json.id);
  check(e.status === 'done', 'the sim run is done', 'done', `${e.status} ${e.error || ''}`);
  const bundle = await apiGet(`/api/export?experiment=${e.id}`);
  const id = `${e.id}-gpu-sampled`;
  const x = (await importAs(bundle, e.id, id, (b, xe) => {
    xe.result.backend = 'cuda';
    check(xe.spec.trace_ops === 'sampled', 'the stored spec says trace_ops sampled (the default)', 'sampled', xe.spec.trace_ops);
    b.timelines[id] = b.timelines[id].filter((t) => t.rep === xe.result.median_rep);
  })).experiments[0];
  const other = (x.result.median_rep + 1) % x.result.reps;
  const page = await newPage();
  await open(page, `#/run/${id}?rep=${other}`);
  await page.waitForSelector('#timeline-canvas', { timeout: 10000 });
  const note = await page.$eval('#rep-note', (el) => el.textContent).catch(() => null);
  check(note && /composed timelines for a few repetitions/.test(note) && note.includes(`rep ${x.result.median_rep}`)
    && !/kept in this bundle/.test(note), 'the note says the run composed a few timelines, the median shown',
  'This run composed timelines for a few repetitions only (… rep M): …', note);
  checkNoProblems(page, [{ re: /status of (404|409|422)/, count: 1 }]);
  await page.closeAll();
});

test('examples: a bundle that kept only the median repetition\'s ops says so for another rep', async () => {
  const imp = await apiCall('POST', '/api/examples', {}, { base: EXAMPLES_URL }); // idempotent: whatever the test before did
  check(imp.status === 200, 'POST /api/examples', 200, `${imp.status} ${imp.text}`);
  const { bundle } = exampleBundles()[0];
  const e = bundle.experiments.find((x) => x.status === 'done' && x.result.reps_ms.length > 1);
  check(e, 'an example run with several reps', 'present', bundle.experiments.map((x) => x.result?.reps_ms?.length));
  const kept = (bundle.timelines[e.id] || []).map((t) => t.rep);
  check(kept.length === 1 && kept[0] === e.result.median_rep, 'the export (ops=median) kept the median rep alone', [e.result.median_rep], kept);
  const other = e.result.median_rep === 0 ? 1 : 0;
  const page = await newPage();
  await open(page, `#/run/${e.id}?rep=${other}`, EXAMPLES_URL);
  await page.waitForSelector('#timeline-canvas', { timeout: 10000 });
  const note = await page.$eval('#rep-note', (el) => el.textContent).catch(() => null);
  check(note && /only the median repetition/i.test(note) && note.includes(`rep ${e.result.median_rep}`), 'another rep says only the median was kept', 'Only the median repetition (rep M) was kept in this bundle…', note);
  const ops = Number(await page.$eval('#timeline-canvas', (c) => c.dataset.ops));
  const medianOps = bundle.timelines[e.id][0].ops.length;
  check(ops === medianOps, 'the median rep\'s timeline is drawn instead', medianOps, ops);
  const title = await page.$eval('.gantt-card', (el) => el.textContent);
  check(title.includes(`rep ${e.result.median_rep} (the median)`), 'the chart says it shows the median rep', `rep ${e.result.median_rep} (the median)`, title.slice(0, 200));
  await shot(page, '01d-run-median-only');
  // the median rep itself: no note
  await open(page, `#/run/${e.id}?rep=${e.result.median_rep}`, EXAMPLES_URL);
  await page.waitForSelector('#timeline-canvas', { timeout: 10000 });
  check(!(await page.$('#rep-note')), 'the median rep has no note', 'absent', 'present');
  checkNoProblems(page, [{ re: /status of (404|409|422)/, count: 1 }]);
  await page.closeAll();
});

test('examples: loading them where the server needs a token asks for it', async () => {
  check(TOKEN_URL && TOKEN, 'run.sh started a server with a token', 'STREAMLAB_TOKEN_URL set', TOKEN_URL);
  const before = (await storedIds(TOKEN_URL)).length;
  const page = await newPage();
  await open(page, '#/runs', TOKEN_URL);
  await page.waitForSelector('#load-examples');
  if (!(await page.$('#empty-state'))) await page.click('#examples-more summary');
  await page.click('#load-examples');
  await page.waitForSelector('#token-dialog[open]', { timeout: 10000 });
  await page.type('#token-input', TOKEN);
  await page.click('#token-dialog button[value="ok"]');
  await page.waitForSelector('#examples-loaded', { timeout: 20000 });
  const total = exampleBundles().reduce((n, b) => n + b.bundle.experiments.length, 0);
  const after = (await storedIds(TOKEN_URL)).length;
  check(after === before + total, 'the examples are imported with the token', before + total, after);
  checkNoProblems(page, [resourceError(401)]);
  await page.closeAll();
});

test('the submit form shows the server\'s defaults: a default submit stores exactly them', async () => {
  const page = await newPage();
  await open(page, '#/submit');
  const form = await page.$$eval('.field', (rows) => rows.map((r) => {
    const name = r.dataset.field;
    const checked = r.querySelector('input:checked');
    const text = r.querySelector('input[type=text]');
    return [name, checked ? checked.value : text ? text.value : null, r.querySelector('.field-default').textContent];
  }));
  const expectedFields = ['sim_of', 'variant', 'size', 'streams', 'chunks', 'kernel', 'kernel_iters', 'block_size', 'launch', 'host_memory',
    'default_stream', 'stream_flags', 'flush', 'driver_mode', 'timing', 'trace_ops', 'reps', 'warmup', 'devices', 'backend', 'predict',
    'label', 'sync', 'host_share'];
  check(JSON.stringify(form.map((f) => f[0])) === JSON.stringify(expectedFields), 'every field of the API spec is on the form', expectedFields.join(','), form.map((f) => f[0]).join(','));
  await shot(page, '02-submit');
  await page.click('#submit-button');
  await page.waitForFunction(() => location.hash.startsWith('#/run/'), { timeout: 10000 });
  const id = decodeURIComponent(await page.evaluate(() => location.hash.slice('#/run/'.length).split('?')[0]));
  const e = await apiGet(`/api/experiments/${id}`);
  const parse = (name, v) => {
    if (name === 'size') return 2 ** Number(/^2\^(\d+)$/.exec(v)[1]);
    if (name === 'devices') return v.split(',').map(Number);
    if (name === 'chunks') return v === '' ? e.spec.streams : Number(v);
    if (['streams', 'kernel_iters', 'block_size', 'reps', 'warmup', 'host_share'].includes(name)) return Number(v);
    if (['predict', 'sync'].includes(name)) return v === 'true';
    return v;
  };
  for (const [name, v] of form) {
    // sim_of: "" (this machine) is stored as "" or left out
    const stored = name === 'sim_of' ? (e.spec.sim_of || '') : e.spec[name];
    check(JSON.stringify(parse(name, v)) === JSON.stringify(stored), `field ${name}: the form's default is what the server stores`, JSON.stringify(stored), JSON.stringify(parse(name, v)));
  }
  // the run page polls until the experiment is done, then draws its timeline
  await page.waitForSelector('#timeline-canvas', { timeout: 60000 });
  await waitReady(page);
  checkNoProblems(page);
  await page.closeAll();
});

test('a bad field shows the API\'s error next to that field (one experiment and a sweep)', async () => {
  const page = await newPage();
  await open(page, '#/submit');
  await setText(page, '#f-streams', '5000');
  await page.click('#submit-button');
  await page.waitForFunction(() => document.querySelector('.field[data-field="streams"] .field-error')?.textContent, { timeout: 10000 });
  const api = await apiCall('POST', '/api/experiments', { variant: 'async_v1', streams: 5000 });
  check(api.status === 422 && api.json?.error?.field === 'streams', 'the API refuses streams 5000 naming the field', '422, field streams', `${api.status} ${api.text}`);
  const shown = await page.$eval('.field[data-field="streams"] .field-error', (el) => el.textContent);
  check(shown.includes(api.json.error.message), 'the API\'s message is shown beside streams', api.json.error.message, shown);
  const marked = await page.$$eval('.field.has-error', (els) => els.map((e) => e.dataset.field));
  check(marked.length === 1 && marked[0] === 'streams', 'only the streams field is marked', 'streams', marked);
  check(await page.evaluate(() => location.hash.startsWith('#/submit')), 'a refused submit stays on the form', '#/submit', await page.evaluate(() => location.hash));
  await shot(page, '03-submit-error');

  // a sweep whose second point is out of range: the error lands on the axis' field
  await open(page, '#/submit?mode=sweep');
  await setText(page, '#f-streams', '2,0');
  await page.click('#submit-button');
  await page.waitForFunction(() => document.querySelector('.field[data-field="streams"] .field-error')?.textContent, { timeout: 10000 });
  const sweepApi = await apiCall('POST', '/api/sweeps', { base: { variant: 'async_v1' }, axes: { streams: [2, 0] } });
  const shown2 = await page.$eval('.field[data-field="streams"] .field-error', (el) => el.textContent);
  check(sweepApi.status === 422 && shown2.includes(sweepApi.json.error.message), 'the sweep\'s error is shown beside streams', sweepApi.json?.error?.message, shown2);
  checkNoProblems(page, [resourceError(422), resourceError(422)]);
  await page.closeAll();
});

test('submit a sweep through the form and watch it complete in the queue view', async () => {
  const page = await newPage();
  await open(page, '#/submit?mode=sweep');
  // async_v1 is preselected; add sequential and async_v2
  for (const v of ['sequential', 'async_v2']) await page.click(`label.chip:has(input[name="variant"][value="${v}"])`);
  await setText(page, '#f-streams', '1,2,4,8,16,32');
  await setText(page, '#f-size', '2^22');
  await setText(page, '#f-label', 'web-test sweep');
  await page.click('label.chip:has(input[name="predict"][value="true"])');
  const points = await page.$eval('#points', (el) => el.textContent);
  check(/^18 experiments = 3 variant × 6 streams/.test(points), 'the form counts the cross product', '18 experiments = 3 variant × 6 streams', points);
  const preview = JSON.parse((await page.$eval('#request-preview', (el) => el.textContent)).split('\n').slice(1).join('\n'));
  check(JSON.stringify(preview.axes.streams) === '[1,2,4,8,16,32]' && preview.axes.variant.length === 3, 'the request shows the axes as lists', 'streams [1..32], 3 variants', preview);
  check(preview.base.predict === true && preview.base.size === 4194304, 'the base carries the single-valued fields', 'predict true, size 4194304', preview.base);
  check(/mode=sweep/.test(await page.evaluate(() => location.hash)) && /streams=1,2,4,8,16,32/.test(await page.evaluate(() => location.hash)), 'the form\'s state is in the hash', 'mode=sweep…streams=1,2,4,8,16,32', await page.evaluate(() => location.hash));
  await shot(page, '04-submit-sweep');
  await page.click('#submit-button');
  await page.waitForFunction(() => location.hash.startsWith('#/queue?sweep='), { timeout: 10000 });
  state.sweepId = decodeURIComponent(await page.evaluate(() => new URLSearchParams(location.hash.split('?')[1]).get('sweep')));
  await waitReady(page);
  await page.waitForSelector('#sweep-progress', { timeout: 10000 });
  await shot(page, '05-queue-progress');
  const total = await page.$eval('#sweep-progress', (el) => Number(el.dataset.total));
  check(total === 18, 'the queue view tracks all 18 points of the sweep', 18, total);
  // live: the view polls by itself; we only read the page
  await until(() => page.$eval('#sweep-progress', (el) => el.dataset.complete === '1'), 'the queue view to show the sweep complete', 240000, 250);
  const done = await page.$eval('#sweep-progress', (el) => Number(el.dataset.done));
  check(done === 18, 'every point of the sweep is done', 18, done);
  // the view keeps polling by itself (the sim may finish the sweep before the first poll)
  await until(() => page.$eval('#view', (el) => Number(el.dataset.polls) >= 2), 'the queue view to poll again', 10000);
  await shot(page, '06-queue-complete');
  state.sweepPoints = await sweepExperiments(state.sweepId);
  await page.click('#open-sweep');
  await page.waitForFunction((id) => location.hash === `#/sweep/${id}`, { timeout: 10000 }, state.sweepId);
  await waitReady(page);
  checkNoProblems(page);
  await page.closeAll();
});

test('the sweep chart: time vs streams per variant, prediction and floor as lines, speed-up', async () => {
  const page = await newPage();
  await open(page, `#/sweep/${state.sweepId}`);
  await page.waitForSelector('#sweep-time-canvas', { timeout: 10000 });
  const chart = await datasetsOf(page, '#sweep-time-canvas');
  check(chart, 'a Chart.js chart on #sweep-time-canvas', 'a chart', null);
  const series = chart.datasets.filter((d) => !d.band && !d.kind).map((d) => d.label).sort();
  check(JSON.stringify(series) === JSON.stringify(['async_v1', 'async_v2', 'sequential']), 'one line per variant', 'async_v1,async_v2,sequential', series);
  const v1 = chart.datasets.find((d) => d.label === 'async_v1');
  check(v1.n === 6, 'async_v1 has a point per streams value', 6, v1.n);
  check(chart.xType === 'logarithmic', 'streams 1…32 on a log axis', 'logarithmic', chart.xType);
  const withFloor = state.sweepPoints.filter((e) => e.result && e.result.floor_ms > 0).length;
  const floors = chart.datasets.filter((d) => d.kind === 'floor');
  check(!withFloor || floors.length >= 1, 'the machine\'s floor is drawn as a line', '>= 1 floor line', floors.length);
  const withPred = state.sweepPoints.filter((e) => e.result && Number.isFinite(e.result.predicted_ms) && e.result.predicted_ms >= 0).length;
  const preds = chart.datasets.filter((d) => d.kind === 'pred');
  check(!withPred || preds.length >= 1, 'the model\'s prediction is drawn where results carry one', '>= 1 prediction line', `${preds.length} (results with predicted_ms: ${withPred})`);
  const speed = await datasetsOf(page, '#sweep-speedup-canvas');
  const title = await page.$eval('#speedup-title', (el) => el.textContent);
  check(speed && title === 'Speed-up over sequential', 'speed-up over sequential is drawn', 'Speed-up over sequential', title);
  check(speed.datasets.every((d) => d.label !== 'sequential'), 'sequential is the baseline, not a line', 'no sequential line', speed.datasets.map((d) => d.label));
  const rows = await page.$$eval('#sweep-table tbody tr', (trs) => trs.length);
  check(rows === 18, 'the points table lists every point', 18, rows);
  await shot(page, '07-sweep');
  // deep link: x axis and y scale from the hash
  await open(page, `#/sweep/${state.sweepId}?x=variant&logy=0`);
  await page.waitForSelector('#sweep-time-canvas', { timeout: 10000 });
  const cat = await datasetsOf(page, '#sweep-time-canvas');
  check(cat.xType === 'category', 'x=variant in the hash puts variants on the x axis', 'category', cat.xType);
  checkNoProblems(page);
  await page.closeAll();
});

// A run whose reps fall in two groups says so under its total: the reps are a lent H200's
// 2^25 async_v1 x64 (examples/h200-lent.json, e-239229329bf5a8fc), each of two modes drawn five
// times, put on a sim run's result; the sim run itself (every rep alike) says nothing.
test('run detail: reps in two groups are told under the total, with how they lie', async () => {
  const h200 = [3.530, 3.034, 3.035, 3.030, 3.525, 3.529, 3.036, 3.044, 3.507, 3.530];
  const r = await apiCall('POST', '/api/experiments', { variant: 'async_v1', streams: 4, size: 2 ** 22, reps: 10, warmup: 0, label: 'web-test modes' });
  check(r.status === 202, 'POST a sim run', 202, `${r.status} ${r.text}`);
  const e = await waitFinished(r.json.id);
  check(e.status === 'done' && e.result.rep_modes === null, 'the sim run is done, its reps one group', 'done, rep_modes null', `${e.status} ${JSON.stringify(e.result?.rep_modes)}`);
  const bundle = await apiGet(`/api/export?experiment=${e.id}`);
  const id = `${e.id}-two-modes`;
  await importAs(bundle, e.id, id, (b, xe) => {
    xe.result.backend = 'cuda';
    xe.result.reps_ms = h200;
    const sorted = [...h200].sort((a, c) => a - c);
    xe.result.total_ms = { median: (sorted[4] + sorted[5]) / 2, min: sorted[0], max: sorted[9], mean: sorted.reduce((a, c) => a + c) / 10, stddev: 0.25 };
  });
  const page = await newPage();
  await open(page, `#/run/${id}`);
  await page.waitForSelector('#summary', { timeout: 10000 });
  const note = await page.$eval('#rep-modes', (el) => el.textContent).catch(() => null);
  check(note && /^two groups: 3\.0\d+ ms × 5 and 3\.5\d+ ms × 5; the slow reps interleaved with the fast ones \(3 stretches\)/.test(note),
    'the total says two groups, each median and count, and that the slow reps are interleaved',
    'two groups: 3.03… ms × 5 and 3.52… ms × 5; the slow reps interleaved with the fast ones (3 stretches): …', note);
  await open(page, `#/run/${e.id}`);
  await page.waitForSelector('#summary', { timeout: 10000 });
  check(!(await page.$('#rep-modes')), 'a run of one group has no such line', 'absent', 'present');

  // the runs list marks its median with ▲, the groups on hover; the sim run's not
  await open(page, '#/runs');
  await page.waitForSelector('#runs-table', { timeout: 10000 });
  const marks = await page.$$eval('#runs-table tbody tr', (trs) => Object.fromEntries(trs.map((tr) => [tr.dataset.id, tr.querySelector('.modes-mark')?.title || null])));
  check(/^two groups: .* × 5 and .* × 5: the median is neither$/.test(marks[id] || '') && marks[e.id] === null,
    'the runs list marks the run of two groups, not the other', { [id]: 'two groups: … × 5 and … × 5: the median is neither', [e.id]: null }, { [id]: marks[id], [e.id]: marks[e.id] });

  // in a sweep: the point is a triangle carrying its groups, and its row says them
  const sw = await apiCall('POST', '/api/sweeps', { base: { variant: 'async_v1', size: 2 ** 22, reps: 10, warmup: 0, label: 'web-test modes sweep' }, axes: { streams: [2, 4] } });
  check(sw.status === 202, 'POST a sim sweep', 202, `${sw.status} ${sw.text}`);
  for (const x of sw.json.experiments) await waitFinished(x);
  let text = JSON.stringify(await apiGet(`/api/export?sweep=${sw.json.id}`));
  for (const old of [sw.json.id, ...sw.json.experiments]) text = text.split(old).join(`${old}-m`);
  const sb = JSON.parse(text);
  const two = sb.experiments.find((x) => x.spec.streams === 4);
  two.result.backend = 'cuda';
  two.result.reps_ms = h200;
  const imp = await apiCall('POST', '/api/import', sb);
  check(imp.status === 200, 'POST /api/import of the sweep', 200, `${imp.status} ${imp.text.slice(0, 300)}`);
  await open(page, `#/sweep/${sw.json.id}-m`);
  await page.waitForSelector('#sweep-time-canvas', { timeout: 10000 });
  const chart = await datasetsOf(page, '#sweep-time-canvas');
  const line = chart.datasets.find((d) => d.label === 'async_v1');
  const marked = (line?.data || []).filter((pt) => pt.modes).map((pt) => pt.x);
  check(JSON.stringify(marked) === '[4]', 'the chart marks the point whose reps fell in two groups, only it', '[4]', marked);
  const rowNotes = await page.$$eval('#sweep-table tbody tr', (trs) => trs.map((tr) => tr.querySelector('.rep-modes')?.textContent || null));
  check(rowNotes.filter(Boolean).length === 1 && /^two groups: 3\.0\d+ ms × 5 and 3\.5\d+ ms × 5$/.test(rowNotes.find(Boolean)),
    'the points table says the groups on that row only', 'two groups: 3.03… ms × 5 and 3.52… ms × 5', rowNotes);
  checkNoProblems(page);
  await page.closeAll();
});

test('run detail: how long the host took to issue a rep, and whether it set the pace', async () => {
  const page = await newPage();
  const cases = [
    { spec: { variant: 'async_v1', streams: 256, size: 2 ** 22, reps: 3, label: 'web-test host-bound' }, pace: 'the host sets the pace: more streams will not help' },
    { spec: { variant: 'async_v1', streams: 8, size: 2 ** 25, reps: 3, label: 'web-test gpu-bound' }, pace: 'the GPU sets the pace' },
  ];
  for (const c of cases) {
    const r = await apiCall('POST', '/api/experiments', c.spec);
    check(r.status === 202, `POST a sim run (${c.spec.label})`, 202, `${r.status} ${r.text}`);
    const e = await waitFinished(r.json.id);
    const us = e.result?.extra?.timing?.issue_us_clean;
    check(e.status === 'done' && us > 0 && us / 1000 < e.result.total_ms.median, 'the sim reports its issue time, under the total',
      '0 < issue_us_clean < total', `${e.status} ${us} / ${e.result?.total_ms?.median}`);
    await open(page, `#/run/${e.id}`);
    await page.waitForSelector('#summary', { timeout: 10000 });
    const line = await page.$eval('#host-issue', (el) => el.textContent).catch(() => null);
    const per = Number((us / c.spec.streams).toPrecision(3)).toLocaleString('en-US', { maximumFractionDigits: 6 });
    const want = new RegExp(`^host issue [0-9.,]+ (ms|µs) \\(${per.replace('.', '\\.')} µs a chunk; calibrated [0-9.]+\\): [0-9.]+ % of the total, ${c.pace}$`);
    check(line && want.test(line), `the total card says the host's issue time and who set the pace (${c.spec.label})`, want.source, line);
  }
  // a blocking copy holds the host: no such line for the sequential variant
  const r = await apiCall('POST', '/api/experiments', { variant: 'sequential', size: 2 ** 22, reps: 3, label: 'web-test sequential' });
  const e = await waitFinished(r.json.id);
  await open(page, `#/run/${e.id}`);
  await page.waitForSelector('#summary', { timeout: 10000 });
  check(!(await page.$('#host-issue')), 'a sequential run has no host-issue line', 'absent', 'present');
  checkNoProblems(page);
  await page.closeAll();
});

test('run detail: a simulated point of the seeds\' table says what the profile\'s GPU measured there', async () => {
  const page = await newPage();
  const r = await apiCall('POST', '/api/experiments', { variant: 'async_v1', streams: 64, size: 2 ** 25, reps: 3, label: 'web-test seeds point' });
  check(r.status === 202, 'POST a sim run of a seeds\' point', 202, `${r.status} ${r.text}`);
  const e = await waitFinished(r.json.id);
  const ref = e.result?.extra?.reference;
  check(ref && ref.profile === 'lent-h100' && ref.median_ms > 0 && Array.isArray(ref.rounds_ms),
    'the API gives the plain program\'s measurement (result.extra.reference)', 'lent-h100, median_ms, rounds_ms', ref);
  await open(page, `#/run/${e.id}`);
  await page.waitForSelector('#summary', { timeout: 10000 });
  const line = await page.$eval('#reference-line', (el) => el.textContent).catch(() => null);
  const pct = Math.abs(ref.sim_error_pct).toFixed(1).replace('.', '\\.');
  const side = ref.sim_error_pct >= 0 ? 'slower' : 'faster';
  const want = new RegExp(`^measured on lent-h100's GPU \\(GPU-406d4a42, 2026-11-26\\) by a plain CUDA program: [0-9.]+ ms \\(5 rounds, [0-9.]+ ms to [0-9.]+ ms\\); the simulation is ${pct}% ${side}$`);
  check(line && want.test(line), 'the total card says what the profile\'s GPU measured, its rounds and how far the sim is', want.source, line);
  // and where it falls among every lent GPU of the kind (result.extra.fleet)
  const fleet = e.result?.extra?.fleet;
  check(fleet && fleet.tables > 1 && fleet.min_ms <= fleet.p25_ms && fleet.p25_ms <= fleet.p75_ms && fleet.p75_ms <= fleet.max_ms,
    'the API gives the lent GPUs\' band (result.extra.fleet)', 'tables > 1, min <= p25 <= p75 <= max', fleet);
  const fline = await page.$eval('#fleet-line', (el) => el.textContent).catch(() => null);
  // 2^25 async_v1 x64 runs in one of two modes on the lent H100s: its tables fall in two groups (extra.fleet.groups)
  const g = fleet.groups;
  check(Array.isArray(g) && g.length === 2 && g[0].tables + g[1].tables === fleet.tables && g[0].median_ms < g[1].median_ms,
    'the API gives the two groups of the lent tables, the quicker first', 'two groups summing to the tables', g);
  const gside = e.result.total_ms.median < Math.sqrt(g[0].max_ms * g[1].min_ms) ? 'quicker' : 'slower';
  const fwant = new RegExp(`^${fleet.tables} lent tables of this kind \\(${fleet.gpus} GPUs, ${fleet.from} to ${fleet.to}\\): `
    + `[0-9.]+ ms to [0-9.]+ ms, the middle half [0-9.]+ ms to [0-9.]+ ms; the simulation is slower than ${Math.round(fleet.sim_rank_pct)}% of them`
    + `\\. They fall in two groups here, ${g[0].tables} near [0-9.]+ ms and ${g[1].tables} near [0-9.]+ ms`
    + `: a loan measures one or the other, and the simulation is on the ${gside} side of the gap$`);
  check(fline && fwant.test(fline), 'the total card says where the sim falls among the lent GPUs, and in which of their two groups', fwant.source, fline);
  // off the seeds' table (another kernel): no such line
  const r2 = await apiCall('POST', '/api/experiments', { variant: 'async_v1', streams: 64, size: 2 ** 25, reps: 3, kernel: 'compute', label: 'web-test off the table' });
  const e2 = await waitFinished(r2.json.id);
  await open(page, `#/run/${e2.id}`);
  await page.waitForSelector('#summary', { timeout: 10000 });
  check(!(await page.$('#reference-line')), 'a run off the seeds\' table has no measured line', 'absent', 'present');
  check(!(await page.$('#fleet-line')), 'a run off the seeds\' table has no lent GPUs\' band', 'absent', 'present');
  checkNoProblems(page);
  await page.closeAll();
});

test('run detail: a simulated run says how far the host\'s pace moves it', async () => {
  const page = await newPage();
  // 2^25 async_v1 x64: the first kernels' channels, set by the host's pace, pick one of two modes
  const r = await apiCall('POST', '/api/experiments', { variant: 'async_v1', streams: 64, size: 2 ** 25, reps: 3, label: 'web-test host pace' });
  check(r.status === 202, 'POST a sim run', 202, `${r.status} ${r.text}`);
  const e = await waitFinished(r.json.id);
  const pace = e.result?.extra?.host_pace;
  check(pace && pace.max_ms > 1.05 * pace.min_ms, 'the API gives a band wider than 5% (result.extra.host_pace)', '> 5%', pace);
  await open(page, `#/run/${e.id}`);
  await page.waitForSelector('#summary', { timeout: 10000 });
  const line = await page.$eval('#host-pace', (el) => el.textContent).catch(() => null);
  // as the dashboard writes ms (3 significant digits; the band here is 3-4 ms)
  const ms = (x) => `${Number(x.toPrecision(3)).toLocaleString('en-US', { maximumFractionDigits: 6 })} ms`;
  const want = `with the host's calls 0.9–2× as dear as calibrated, as lent hosts issued them: ${ms(pace.min_ms)} to ${ms(pace.max_ms)}`;
  check(line === want, 'the total card gives the band', want, line);
  // a copy-bound run (2^25 x4) does not move with the host: no such line
  const r2 = await apiCall('POST', '/api/experiments', { variant: 'async_v1', streams: 4, size: 2 ** 25, reps: 3, label: 'web-test copy-bound' });
  const e2 = await waitFinished(r2.json.id);
  await open(page, `#/run/${e2.id}`);
  await page.waitForSelector('#summary', { timeout: 10000 });
  check(!(await page.$('#host-pace')), 'a copy-bound run has no host-pace line', 'absent', 'present');
  checkNoProblems(page);
  await page.closeAll();
});

test('the sweep chart: a simulated sweep of the seeds\' table draws what the profile\'s GPU measured beside it', async () => {
  const page = await newPage();
  const sw = await apiCall('POST', '/api/sweeps', { base: { variant: 'async_v1', size: 2 ** 25, reps: 3, label: 'web-test reference sweep' }, axes: { streams: [4, 64] } });
  check(sw.status === 202, 'POST a sim sweep of two seeds\' points', 202, `${sw.status} ${sw.text}`);
  const done = [];
  for (const x of sw.json.experiments) done.push(await waitFinished(x));
  const want = done.map((e) => e.result?.extra?.reference?.median_ms).sort();
  check(want.length === 2 && want.every((v) => v > 0), 'each point carries the profile\'s measurement', '2 medians', want);
  await open(page, `#/sweep/${sw.json.id}`);
  await page.waitForSelector('#sweep-time-canvas', { timeout: 10000 });
  const chart = await datasetsOf(page, '#sweep-time-canvas');
  await shot(page, '07b-sweep-measured-beside');
  const ref = chart.datasets.find((d) => d.kind === 'ref');
  const ys = (ref?.data || []).map((pt) => pt.y).sort();
  check(ref && ref.label === 'async_v1 measured on lent-h100\'s GPU' && JSON.stringify(ys) === JSON.stringify(want),
    'a series of the plain program\'s medians at the sweep\'s points', `async_v1 measured on lent-h100's GPU: ${want}`, ref && `${ref.label}: ${ys}`);
  check(chart.legend.includes('measured on its GPU (plain CUDA)') && !chart.legend.includes(ref?.label),
    'one legend entry says what the squares are', 'measured on its GPU (plain CUDA)', chart.legend);
  // the lent GPUs' middle half there (result.extra.fleet): a grey band, one legend entry
  const lentY = (label) => (chart.datasets.find((d) => d.kind === 'fleet' && d.label === label)?.data || []).map((pt) => pt.y);
  const fleetBy = (key) => done.map((e) => [e.spec.streams, e.result.extra.fleet?.[key]]).sort((a, b) => a[0] - b[0]).map((v) => v[1]);
  check(fleetBy('p25_ms').every((v) => v > 0) && JSON.stringify(lentY('async_v1 lent p25')) === JSON.stringify(fleetBy('p25_ms'))
    && JSON.stringify(lentY('async_v1 lent p75')) === JSON.stringify(fleetBy('p75_ms')),
  'a grey band from each point\'s fleet p25_ms to its p75_ms', `${fleetBy('p25_ms')} … ${fleetBy('p75_ms')}`,
  `${lentY('async_v1 lent p25')} … ${lentY('async_v1 lent p75')}`);
  check(chart.legend.includes('lent GPUs of its kind, middle half') && !chart.legend.includes('async_v1 lent p25'),
    'one legend entry says what the grey band is', 'lent GPUs of its kind, middle half', chart.legend);
  // a simulated point's band is its host pace (result.extra.host_pace), not its alike reps
  const byStreams = (key) => done.map((e) => [e.spec.streams, e.result.extra.host_pace[key]]).sort((a, b) => a[0] - b[0]).map((v) => v[1]);
  const bandY = (label) => (chart.datasets.find((d) => d.band && d.label === label)?.data || []).map((pt) => pt.y);
  check(JSON.stringify(bandY('async_v1 min')) === JSON.stringify(byStreams('min_ms'))
    && JSON.stringify(bandY('async_v1 max')) === JSON.stringify(byStreams('max_ms')),
  'the band runs from each point\'s host_pace.min_ms to its max_ms', `${byStreams('min_ms')} … ${byStreams('max_ms')}`,
  `${bandY('async_v1 min')} … ${bandY('async_v1 max')}`);
  const caption = await page.evaluate(() => document.body.innerText);
  check(caption.includes('band: min … max (simulated: the host\'s calls 0.9-2× as dear)'), 'the caption says what a simulated band is',
    'band: min … max (simulated: …)', caption.slice(0, 400));
  const stray = await page.evaluate(() => document.body.innerText.split('\n').map((l) => l.trim()).filter((l) => l === 'null').length);
  check(stray === 0, 'a one-axis sweep\'s header writes no stray "null" (no x-axis toggle)', 0, stray);
  // off the table (2^20): no such series
  const sw2 = await apiCall('POST', '/api/sweeps', { base: { variant: 'async_v1', size: 2 ** 20, reps: 3, label: 'web-test off-table sweep' }, axes: { streams: [4, 8] } });
  for (const x of sw2.json.experiments) await waitFinished(x);
  await open(page, `#/sweep/${sw2.json.id}`);
  await page.waitForSelector('#sweep-time-canvas', { timeout: 10000 });
  const chart2 = await datasetsOf(page, '#sweep-time-canvas');
  check(!chart2.datasets.some((d) => ['ref', 'ref-legend', 'fleet', 'fleet-legend'].includes(d.kind)), 'a sweep off the seeds\' table draws no measured series and no lent band', 'none', chart2.datasets.map((d) => d.kind));
  checkNoProblems(page);
  await page.closeAll();
});

test('run detail: the Gantt timeline has one lane per stream, hover and zoom work', async () => {
  const target = state.sweepPoints.find((e) => e.spec.variant === 'async_v1' && e.spec.streams === 32);
  check(target, 'the sweep has an async_v1 32-stream point', 'present', 'absent');
  const tl = await apiGet(`/api/experiments/${target.id}/timeline`);
  const pairs = new Set(tl.ops.filter((o) => o.op !== 'host').map((o) => `${o.device}:${o.stream}`));
  const page = await newPage();
  await open(page, `#/run/${target.id}`);
  await page.waitForSelector('#timeline-canvas');
  check(pairs.size === 32, 'the API\'s timeline uses 32 streams', 32, pairs.size);
  const paint = await checkGanttLanes(page, '#timeline-canvas', 32, 'async_v1 × 32 streams');
  const ops = Number(await page.$eval('#timeline-canvas', (c) => c.dataset.ops));
  check(ops === tl.ops.length, 'every op of the timeline is on the chart', tl.ops.length, ops);
  const kinds = new Set(paint.flatMap((p) => Object.keys(p)));
  for (const k of ['h2d', 'kernel', 'd2h']) check(kinds.has(k), `${k} bars are drawn in their colour`, k, [...kinds]);
  // the model's timeline beside it, from the sweep's 1-stream run, one lane per stream too
  await page.waitForSelector('#predicted-canvas', { timeout: 10000 });
  await checkGanttLanes(page, '#predicted-canvas', 32, 'predicted async_v1 × 32 streams');

  // summary: numbers from the result
  const summary = await page.$eval('#summary', (el) => el.textContent);
  check(/efficiency/i.test(summary) && /overlap/i.test(summary) && /verified/i.test(summary) && /H2D/.test(summary), 'the summary shows efficiency, overlap, bandwidth and verification', 'all four', summary.slice(0, 300));
  const specText = await page.$eval('.spec-table', (el) => el.textContent);
  check(specText.includes('kernel_iters') && specText.includes('default_stream'), 'the full spec is shown', 'every field', specText.slice(0, 200));

  // hover a copy: op, chunk, bytes, µs and GB/s
  const lane0 = paint.find((p) => p.h2d);
  // the notes above the Gantt (span, the host's first call) can push its lanes below the fold
  await page.$eval('#timeline-canvas', (c) => c.scrollIntoView({ block: 'center' }));
  let box = await (await page.$('#timeline-canvas')).boundingBox();
  await page.mouse.move(box.x + lane0.h2d.x + 2, box.y + lane0.h2d.y);
  await page.waitForSelector('.gantt-tip:not([hidden])', { timeout: 5000 });
  const tip = await page.$eval('.gantt-tip', (el) => el.textContent);
  for (const want of ['H2D copy', 'chunk', 'bytes', 'µs', 'GB/s', 'stream']) check(tip.includes(want), `the tooltip shows ${want}`, want, tip);
  await shot(page, '08-run');

  // zoom: drag over the first quarter of the plot; the range goes into the hash (the screenshot
  // may have scrolled the page: the canvas into view again, and where it is now)
  await page.$eval('#timeline-canvas', (c) => c.scrollIntoView({ block: 'center' }));
  box = await (await page.$('#timeline-canvas')).boundingBox();
  const left = Number(await page.$eval('#timeline-canvas', (c) => c.dataset.plotLeft));
  const fullRange = await page.$eval('.range-text', (el) => el.textContent);
  const y = box.y + 40;
  await page.mouse.move(box.x + left + 10, y);
  await page.mouse.down();
  await page.mouse.move(box.x + left + 120, y, { steps: 5 });
  await page.mouse.move(box.x + left + (box.width - left) / 4, y, { steps: 5 });
  await page.mouse.up();
  await page.waitForFunction(() => /t0=/.test(location.hash) && /t1=/.test(location.hash), { timeout: 5000 });
  // the hash changes first, the chart and its range text on the next render
  await page.waitForFunction((full) => document.querySelector('.range-text')?.textContent !== full, { timeout: 5000 },
                             fullRange);
  const hash = await page.evaluate(() => location.hash);
  const range = await page.$eval('.range-text', (el) => el.textContent);
  await shot(page, '09-run-zoomed');
  // the deep link restores the zoom
  const page2 = await newPage();
  await open(page2, hash);
  await page2.waitForSelector('#timeline-canvas');
  const range2 = await page2.$eval('.range-text', (el) => el.textContent);
  check(range2 === range, 'the zoomed range comes back from the link', range, range2);
  checkNoProblems(page2);
  await page2.closeAll();

  // the trace and JSON links work
  const trace = await page.$eval('#trace-link', (a) => a.getAttribute('href'));
  const tr = await apiGet(trace);
  check(Array.isArray(tr.traceEvents) && tr.traceEvents.length > 0, 'the Chrome trace link serves trace events', 'traceEvents', Object.keys(tr || {}));
  const json = await page.$eval('#json-link', (a) => a.getAttribute('href'));
  check((await apiGet(json)).id === target.id, 'the JSON link serves the experiment', target.id, json);
  checkNoProblems(page);
  await page.closeAll();
});

test('a run of 256 streams × 3 ops draws 256 lanes', async () => {
  const r = await apiCall('POST', '/api/experiments', { variant: 'async_v1', streams: 256, size: 2 ** 24, label: 'web-test 256' });
  check(r.status === 202, 'POST /api/experiments with 256 streams', 202, `${r.status} ${r.text}`);
  const e = await waitFinished(r.json.id);
  check(e.status === 'done', 'the 256-stream run is done', 'done', `${e.status} ${e.error || ''}`);
  const tl = await apiGet(`/api/experiments/${e.id}/timeline`);
  check(tl.ops.length === 768, 'the timeline has 256 streams × 3 ops', 768, tl.ops.length);
  const page = await newPage();
  await open(page, `#/run/${e.id}`);
  await page.waitForSelector('#timeline-canvas');
  await checkGanttLanes(page, '#timeline-canvas', 256, '256 streams');
  const drawn = Number(await page.$eval('#timeline-canvas', (c) => c.dataset.drawn));
  check(drawn === 768 + tl.calls.length && tl.calls.length === 768, 'every op drawn once, and every op\'s host call',
    768 * 2, drawn);
  await shot(page, '10-run-256-streams');
  checkNoProblems(page);
  await page.closeAll();
});

test('a multi-GPU run has one lane per stream and device', async () => {
  const health = await apiGet('/api/health');
  check(health.devices >= 2, 'the test server runs with 2 simulated devices', '>= 2', health.devices);
  const r = await apiCall('POST', '/api/experiments', { variant: 'multi_gpu', devices: [0, 1], streams: 4, size: 2 ** 22 });
  check(r.status === 202, 'POST a multi_gpu experiment', 202, `${r.status} ${r.text}`);
  const e = await waitFinished(r.json.id);
  check(e.status === 'done', 'the multi_gpu run is done', 'done', `${e.status} ${e.error || ''}`);
  const tl = await apiGet(`/api/experiments/${e.id}/timeline`);
  const pairs = new Set(tl.ops.filter((o) => o.op !== 'host').map((o) => `${o.device}:${o.stream}`));
  const devices = new Set(tl.ops.map((o) => o.device));
  check(devices.size === 2, 'the timeline spans both devices', 2, devices.size);
  const page = await newPage();
  await open(page, `#/run/${e.id}`);
  await page.waitForSelector('#timeline-canvas');
  await checkGanttLanes(page, '#timeline-canvas', pairs.size, 'multi_gpu on 2 devices');
  const chip = await page.$eval('.run-head .machine-chip', (el) => el.textContent);
  check(/2 × Simulated NVIDIA H100/.test(chip), 'the machine of two GPUs is named with both', '… · 2 × Simulated NVIDIA H100 …', chip);
  await shot(page, '11-run-multi-gpu');
  checkNoProblems(page);
  await page.closeAll();
});

// A timeline says how far it is from the run (issue 21): a sim run spans its total and has
// no note; the same run imported with its median rep's ops made twice as long, as if recorded
// on a GPU with a CUDA event around every op, says so in words above its Gantt.
test('run detail: the timeline\'s span against the median, and a note where it is stretched', async () => {
  const r = await apiCall('POST', '/api/experiments', { variant: 'async_v1', streams: 4, size: 2 ** 25, reps: 3, warmup: 0, label: 'web-test stretch' });
  check(r.status === 202, 'POST a sim run', 202, `${r.status} ${r.text}`);
  const e = await waitFinished(r.json.id);
  check(e.status === 'done', 'the sim run is done', 'done', `${e.status} ${e.error || ''}`);
  const page = await newPage();
  await open(page, `#/run/${e.id}`);
  await page.waitForSelector('#timeline-canvas');
  const line = await page.$eval('#timeline-span', (el) => el.textContent).catch(() => null);
  check(line && /timeline spans .*ms/.test(line) && /the run's median .*ms/.test(line), 'the span and the median near the Gantt',
    'timeline spans … ms · the run\'s median … ms', line);
  const tlj = await apiGet(`/api/experiments/${e.id}/timeline`);
  const leadText = `from its first op at ${Number(tlj.lead_us.toPrecision(4))} µs`;
  check(line && line.includes(leadText), 'the span line says where the first op starts', leadText, line);
  check(!(await page.$('#stretch-note')), 'a sim run (stretch 1) has no note', 'absent', 'present');
  // the host's calls: a lane of their own above the streams, every call drawn, and a note on
  // the wait before the first op, which the first call fills
  check(Array.isArray(tlj.calls) && tlj.calls.length === tlj.ops.length && tlj.calls.length > 0,
    'the sim records a call for every op', tlj.ops.length, tlj.calls?.length);
  await page.waitForFunction(() => document.querySelector('#timeline-canvas')?.dataset.drawn !== undefined, { timeout: 10000 });
  const ds = await page.$eval('#timeline-canvas', (c) => ({ ...c.dataset }));
  check(ds.callLanes === '1' && Number(ds.calls) === tlj.calls.length, 'a host-calls lane holding every call',
    `1 lane, ${tlj.calls.length} calls`, `${ds.callLanes} lane, ${ds.calls} calls`);
  check(Number(ds.drawn) === tlj.ops.length + tlj.calls.length, 'every op and every call drawn at full range',
    tlj.ops.length + tlj.calls.length, ds.drawn);
  const leadNote = await page.$eval('#lead-note', (el) => el.textContent).catch(() => null);
  const firstCall = tlj.calls.reduce((m, c) => (c.start_us < m.start_us ? c : m));
  check(leadNote && leadNote.includes(`waited ${Number(tlj.lead_us.toPrecision(4))} µs`) && /host's first call/.test(leadNote)
    && leadNote.includes(`stream ${firstCall.stream}`), 'a note: the GPU waited for the host\'s first call',
    `The GPU waited ${Number(tlj.lead_us.toPrecision(4))} µs … the host's first call … stream ${firstCall.stream}`, leadNote);

  // the same run, its median rep's ops twice as long, as a GPU run timed by events
  const bundle = await apiGet(`/api/export?experiment=${e.id}`);
  const stretchedId = `${e.id}-stretched`;
  const other = await importAs(bundle, e.id, stretchedId, (b, xe) => {
    xe.result.backend = 'cuda';
    xe.spec.trace_ops = 'all'; // an event pair around every op (the sim stored the default, sampled)
    const median = b.timelines[stretchedId].find((t) => t.rep === xe.result.median_rep);
    const first = Math.min(...median.ops.map((o) => o.start_us));
    for (const o of median.ops) {
      o.start_us = first + 2 * (o.start_us - first);
      o.end_us = first + 2 * (o.end_us - first);
    }
  });
  const x = other.experiments[0];
  const tl = await apiGet(`/api/experiments/${stretchedId}/timeline`);
  check(Math.abs(tl.stretch - 2) < 0.02, 'the API says the imported timeline is 2× its median', 2, tl.stretch);
  await open(page, `#/run/${stretchedId}`);
  await page.waitForSelector('#timeline-canvas');
  const note = await page.$eval('#stretch-note', (el) => el.textContent).catch(() => null);
  check(note && /2(\.0)?× the run's median/.test(note) && /CUDA event around every operation/.test(note)
    && /Op durations on the engines are still right/.test(note), 'the note says how far and why, in words', 'This timeline is 2.0× the run\'s median: … CUDA event …', note);
  // the same stretch under the default sampled timeline: the note says why in its own words
  const sampledId = `${e.id}-sampled`;
  await importAs(other, stretchedId, sampledId, (b, xe) => { xe.spec.trace_ops = 'sampled'; });
  const page3 = await newPage();
  await open(page3, `#/run/${sampledId}`);
  await page3.waitForSelector('#timeline-canvas');
  const note3 = await page3.$eval('#stretch-note', (el) => el.textContent).catch(() => null);
  check(note3 && /composed from several traced repetitions/.test(note3) && !/CUDA event around every operation/.test(note3)
    && !/stayed more than 3% off/.test(note3),
    'a sampled timeline\'s note says it is composed, not taxed by every op\'s events', 'composed from several traced repetitions', note3);
  // ... and where the run says some shares' repetitions stayed off, the note counts them
  // (the stretched run again, as a sampled one with these share_reps: its Run view's note)
  const sampledNote = async (id, shareReps) => {
    await importAs(other, stretchedId, id, (b, xe) => {
      xe.spec.trace_ops = 'sampled';
      xe.result.extra = { ...(xe.result.extra || {}), timing: { shares: 8, share_reps: shareReps } };
    });
    const pg = await newPage();
    await open(pg, `#/run/${id}`);
    await pg.waitForSelector('#stretch-note');
    const text = await pg.$eval('#stretch-note', (el) => el.textContent);
    await pg.closeAll();
    return text;
  };
  const offId = `${e.id}-sampled-off`;
  const note4 = await sampledNote(offId,
    { timelines: 4, run: 70, redone: 38, off: 5, cut: 1, whole: 2, whole_one_rep: 1, tolerance_pct: 3 });
  check(/5 of the 32 shares' traced repetitions stayed more than 3% off/.test(note4),
    'the note counts the shares whose repetitions stayed off', '5 of the 32 shares\' … stayed more than 3% off', note4);
  check(/2 of the 4 timelines took their farthest shares from one repetition with every operation traced/.test(note4),
    'the note counts the timelines whose farthest shares came from one every-op-traced repetition',
    '2 of the 4 timelines took their farthest shares …', note4);
  check(/1 of them every share, so each of those is that one repetition's timeline/.test(note4),
    'the note counts the timelines built as the one every-op-traced repetition', '1 of them every share …', note4);
  check(!/took their farthest shares/.test(note3), 'a run with no whole rep used says none', 'no "took their farthest shares"', note3);
  // ... and where no timeline was the whole rep alone (the usual case), says nothing of one
  const noteW = await sampledNote(`${e.id}-sampled-whole`,
    { timelines: 4, run: 60, redone: 20, off: 0, cut: 0, whole: 3, whole_one_rep: 0, tolerance_pct: 3 });
  check(/3 of the 4 timelines took their farthest shares/.test(noteW) && !/every share, so each of those/.test(noteW),
    'a run whose whole reps served some shares only says so, and no one-rep timeline', '3 of the 4 … and no "every share"', noteW);
  // a CUPTI-timed run says what its recording cost it, from the reps run before CUPTI started
  const cuptiId = `${e.id}-cupti`;
  await importAs(other, stretchedId, cuptiId, (b, xe) => {
    xe.spec.timing = 'cupti';
    xe.result.backend = 'cuda';
    xe.result.extra = { ...(xe.result.extra || {}), timing: {
      without_cupti: { reps: 3, median_ms: 3.174, cost_pct: 15.07 },
      between_reps: { median_us: 1532.4, check_median_us: 1210, check_path: 'avx2', about: 'host time between reps' },
      cross_check: { start_diff_us_median: 4.2, start_diff_us_max: 37.8, end_diff_us_median: 6.1, end_diff_us_max: 21.25,
        attempts: 2, rep_off_pct: 3.21, rep_ms: [3.1, 3.2], shares: 2,
        worst_starts: [[5, 'kernel', 3, 7, 120.5, 130.0, 158.3, 163.1], [2, 'd2h', 0, 0, 90.0, 120.0, 80.1, 119.0]] } } };
  });
  const page5 = await newPage();
  await open(page5, `#/run/${cuptiId}`);
  await page5.waitForSelector('#cupti-cost');
  const note5 = await page5.$eval('#cupti-cost', (el) => el.textContent);
  const xc5 = await page5.$eval('#cupti-cross-check', (el) => el.textContent).catch(() => null);
  const gap5 = await page5.$eval('#between-reps', (el) => el.textContent).catch(() => null);
  await page5.closeAll();
  check(/took 15\.1% longer than 3 run before the recording started \(median 3\.17\d? ms\)/.test(note5),
    'a CUPTI run says what its recording cost', 'took 15.1% longer than 3 run before the recording started (median 3.17 ms)', note5);
  // ... and how far its events' timeline lay from CUPTI's timestamps of the same reps (the cross-check)
  check(xc5 && /start each op a median 4\.2 µs apart \(at most 37\.8 µs\) and end it 6\.1 µs apart \(at most 21\.2\d? µs\)/.test(xc5)
    && /run 2 times; the one kept was at most 3\.2% off/.test(xc5),
    'a CUPTI run says how far events and CUPTI part on the same reps, and how many tries that took',
    'a median 4.2 µs apart (at most 37.8 µs) … 6.1 µs (at most 21.25 µs) … run 2 times … 3.2% off', xc5);
  // ... and how long its GPU waited between reps (extra.timing.between_reps)
  check(gap5 && /waited a median 1\.532 ms while the host checked/.test(gap5)
    && /1\.21 ms of it checking the output \(its avx2 checksum\)/.test(gap5) && /not in the total/.test(gap5),
    'a GPU run says how long its GPU waited between reps, and how much of that was the check',
    'waited a median 1.532 ms … 1.21 ms of it checking the output (its avx2 checksum) … not in the total', gap5);
  check(xc5 && /The start that parted most: the kernel of stream 3, chunk 7, at 120\.5 µs by its events and 158\.3 µs by CUPTI\./.test(xc5),
    'the cross-check note names the op whose start parted most', 'the kernel of stream 3, chunk 7, at 120.5 µs … 158.3 µs by CUPTI', xc5);
  const page6 = await newPage();
  await open(page6, `#/run/${offId}`);
  await page6.waitForSelector('#stretch-note');
  check(!(await page6.$('#cupti-cost')), 'an events run has no CUPTI cost note', 'absent', 'present');
  check(!(await page6.$('#cupti-cross-check')), 'an events run has no cross-check note', 'absent', 'present');
  check(!(await page6.$('#between-reps')), 'a run that does not say its time between reps has no note of it', 'absent', 'present');
  await page6.closeAll();
  await page3.closeAll();
  const visible = await page.$eval('#stretch-note', (el) => el.offsetHeight > 0 && getComputedStyle(el).visibility !== 'hidden');
  check(visible, 'the note is visible', 'visible', 'hidden');
  const line2 = await page.$eval('#timeline-span', (el) => el.textContent);
  check(/(1\.9\d|2\.0\d)× the median/.test(line2), 'the span line gives the stretch', '2.00× the median', line2);
  // another rep, whose ops were left as they were: no note
  const otherRep = (x.result.median_rep + 1) % x.result.reps;
  await open(page, `#/run/${stretchedId}?rep=${otherRep}`);
  await page.waitForSelector('#timeline-canvas');
  check(!(await page.$('#stretch-note')), `rep ${otherRep}, not stretched, has no note`, 'absent', 'present');
  await open(page, `#/run/${stretchedId}`);
  await page.waitForSelector('#stretch-note');
  await shot(page, '11b-run-stretched-timeline');
  checkNoProblems(page);
  await page.closeAll();
});

test('runs: filter, sort, select several and compare them', async () => {
  const page = await newPage();
  await open(page, '#/runs');
  await page.waitForSelector('#runs-table');
  await page.select('#filters select[name="variant"]', 'async_v2');
  await page.waitForFunction(() => /variant=async_v2/.test(location.hash), { timeout: 5000 });
  await waitReady(page);
  const variants = await page.$$eval('#runs-table tbody tr td:nth-child(5)', (tds) => tds.map((td) => td.textContent));
  check(variants.length === 6 && variants.every((v) => v === 'async_v2'), 'the variant filter keeps only async_v2 (6 runs)', '6 × async_v2', variants);
  // sort by total, ascending
  await page.click('#runs-table thead a[href*="sort=total"]');
  await page.waitForFunction(() => /sort=total/.test(location.hash), { timeout: 5000 });
  await waitReady(page);
  const ids = await page.$$eval('#runs-table tbody tr', (trs) => trs.map((tr) => tr.dataset.id));
  const totals = [];
  for (const id of ids) totals.push((await apiGet(`/api/experiments/${id}`)).result.total_ms.median);
  check(totals.every((t, i) => i === 0 || totals[i - 1] <= t), 'sorted by total, ascending', 'non-decreasing', totals);
  // filter by streams and by label, then clear
  await open(page, '#/runs?streams=32&size=2%5E22');
  const streams = await page.$$eval('#runs-table tbody tr', (trs) => trs.map((tr) => `${tr.children[5].textContent} ${tr.children[6].textContent}`));
  check(streams.length === 3 && streams.every((s) => s === '2^22 32'), 'the size and streams filters keep the sweep\'s 32-stream runs', '3 × "2^22 32"', streams);
  await open(page, '#/runs?label=web-test%20256');
  const labelled = await page.$$eval('#runs-table tbody tr', (trs) => trs.length);
  check(labelled === 1, 'the label filter finds the 256-stream run', 1, labelled);
  // select three 16-stream runs of the sweep and compare them
  await open(page, '#/runs?streams=16');
  const boxes = await page.$$('#runs-table input.pick');
  check(boxes.length >= 3, 'three runs to select', '>= 3', boxes.length);
  for (const b of boxes.slice(0, 3)) await b.click();
  const href = await page.$eval('#compare-selected', (a) => a.getAttribute('href'));
  const sel = await page.evaluate(() => new URLSearchParams(location.hash.split('?')[1]).get('sel'));
  check(sel && sel.split(',').length === 3, 'the selection is kept in the hash', '3 ids', sel);
  await shot(page, '12-runs');
  await page.click('#compare-selected');
  await page.waitForFunction(() => location.hash.startsWith('#/compare?ids='), { timeout: 5000 });
  await waitReady(page);
  check(href.split('ids=')[1].split(',').length === 3, 'compare gets the three ids', 3, href);
  const bars = await datasetsOf(page, '#compare-bars-canvas');
  check(bars && bars.datasets.length === 1 && bars.datasets[0].n === 3, 'grouped bars: one machine, three configurations', '1 dataset × 3', bars && bars.datasets.map((d) => d.n));
  await shot(page, '13-compare-one-machine');
  checkNoProblems(page);
  await page.closeAll();
});

test('compare: runs from two machines side by side, ratios and machine properties', async () => {
  // a second machine: this store's export of the sweep, re-labelled as another host that is
  // half as fast (every time doubled, every bandwidth halved), imported through the API
  const bundle = await apiGet(`/api/export?sweep=${state.sweepId}`);
  const machines = bundle.machines || [];
  check(machines.length >= 1, 'the export bundle holds the machine', '>= 1 machine', Object.keys(bundle));
  let text = JSON.stringify(bundle);
  const rename = (from, to) => { text = text.split(from).join(to); };
  rename(machines[0].id, `${machines[0].id}-b`);
  for (const sw of bundle.sweeps || []) rename(sw.id, `${sw.id}-b`);
  for (const e of bundle.experiments || []) rename(e.id, `${e.id}-b`);
  const otherBundle = JSON.parse(text);
  const twice = (x) => (typeof x === 'number' ? x * 2 : x);
  for (const m of otherBundle.machines) {
    m.hostname = 'labbox-b';
    m.label = 'labbox-b';
    for (const g of m.gpus || m.devices || []) {
      for (const k of Object.keys(g.calibration || {})) if (/gbps/.test(k)) g.calibration[k] /= 2;
    }
  }
  for (const e of otherBundle.experiments || []) {
    const r = e.result;
    if (!r) continue;
    for (const k of Object.keys(r.total_ms || {})) if (k !== 'stddev') r.total_ms[k] = twice(r.total_ms[k]);
    r.total_ms.stddev = twice(r.total_ms.stddev);
    r.reps_ms = (r.reps_ms || []).map(twice);
    for (const k of ['h2d_ms', 'kernel_ms', 'd2h_ms', 'host_ms', 'floor_ms', 'predicted_ms']) r[k] = twice(r[k]);
    for (const k of ['h2d_gbps', 'd2h_gbps']) if (typeof r[k] === 'number') r[k] /= 2;
  }
  for (const reps of Object.values(otherBundle.timelines || {})) {
    for (const rep of reps) for (const op of rep.ops || []) {
      op.start_us *= 2;
      op.end_us *= 2;
    }
  }
  const imp = await apiCall('POST', '/api/import', otherBundle);
  check(imp.status === 200, 'POST /api/import of a second machine\'s bundle', 200, `${imp.status} ${imp.text.slice(0, 300)}`);
  const ids = [];
  for (const streams of [1, 4, 16]) {
    for (const suffix of ['', '-b']) {
      const e = state.sweepPoints.find((x) => x.spec.variant === 'async_v1' && x.spec.streams === streams);
      ids.push(`${e.id}${suffix}`);
    }
  }
  const page = await newPage();
  await open(page, `#/compare?ids=${ids.join(',')}`);
  await page.waitForSelector('#compare-bars-canvas');
  const bars = await datasetsOf(page, '#compare-bars-canvas');
  check(bars.datasets.length === 2, 'one bar series per machine', 2, bars.datasets.map((d) => d.label));
  check(bars.datasets.every((d) => d.n === 3 && d.data.every((v) => v > 0)), 'three configurations per machine', '3 bars each', bars.datasets.map((d) => d.data));
  const ratios = await page.$$eval('#ratio-table tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td.ratio')].map((td) => td.textContent)));
  check(ratios.length === 3, 'a ratio row per configuration', 3, ratios.length);
  check(ratios.every((r) => r.length === 1 && /^2(\.0+)?×$/.test(r[0])), 'the other machine is 2× the baseline', '2×', ratios);
  // how long the host took to issue a chunk, each machine's (the imported copy keeps the sim's)
  const issues = await page.$$eval('#ratio-table tbody tr td.issue', (tds) => tds.map((td) => td.textContent));
  const perChunk = (e) => Number((e.result.extra.timing.issue_us_clean / e.spec.chunks).toPrecision(3)).toLocaleString('en-US', { maximumFractionDigits: 6 });
  const wantIssues = [1, 4, 16].map((n) => state.sweepPoints.find((x) => x.spec.variant === 'async_v1' && x.spec.streams === n))
    .map((e) => `${perChunk(e)} / ${perChunk(e)}`);
  check(JSON.stringify(issues) === JSON.stringify(wantIssues), 'the host issue per chunk of each run, machine by machine', wantIssues, issues);
  const props = await page.$$eval('#machines-card thead th', (ths) => ths.length);
  check(props === 3, 'machines side by side: a column per machine', '3 columns (property + 2)', props);
  const differs = await page.$$eval('#machines-card tr.differs th', (ths) => ths.map((th) => th.textContent));
  check(differs.some((t) => /hostname/.test(t)), 'the machines table marks the properties that differ', 'hostname among them', differs);
  await shot(page, '13-compare-two-machines');
  checkNoProblems(page);
  await page.closeAll();
});

// ---- simulating another machine (spec.sim_of) ----
// The store's machines, this one, and the profile machine named `name` (lent-h100, lent-h200).
async function profileMachine(name) {
  const data = await apiGet('/api/machines');
  const items = data.items || [];
  const m = items.find((x) => x.profile && x.profile.name === name);
  check(m, `GET /api/machines lists the profile machine ${name}`, name, items.map((x) => `${x.id}:${x.profile ? x.profile.name : '-'}`));
  return { m, items, thisId: data.this };
}
const H200_CONFIG = { variant: 'async_v1', size: 2 ** 22, streams: 4 };

test('submit: the Machine choice offers this machine and every simulatable machine, the two profiles among them', async () => {
  const { items, thisId } = await profileMachine('lent-h200');
  await profileMachine('lent-h100');
  check(items.find((x) => x.id === thisId)?.simulatable === true, 'this machine is simulatable in a fresh store', true, items.find((x) => x.id === thisId));
  const expected = items.filter((x) => x.simulatable === true && x.id !== thisId).map((x) => x.id).sort();
  const page = await newPage();
  await open(page, '#/submit');
  await page.waitForSelector('#machine-pick');
  const offered = await page.$$eval('#machine-pick label.chip', (ls) => ls.map((l) => ({
    id: l.dataset.machine, profile: l.dataset.profile, text: l.textContent, checked: l.querySelector('input').checked,
  })));
  check(offered[0] && offered[0].id === '' && /this machine/.test(offered[0].text) && offered[0].checked, 'the first choice is this machine, chosen', 'this machine (checked)', offered[0]);
  const ids = offered.slice(1).map((o) => o.id).sort();
  check(JSON.stringify(ids) === JSON.stringify(expected), 'every simulatable machine but this one is offered', expected, ids);
  for (const name of ['lent-h100', 'lent-h200']) {
    const m = items.find((x) => x.profile && x.profile.name === name);
    const o = offered.find((x) => x.id === m.id);
    const date = String(m.profile.measured_at).slice(0, 10);
    check(o && o.text.includes(`simulate ${name}`) && o.text.includes(date) && !o.checked, `the profile ${name} is offered with its name and date, not chosen`, `simulate ${name} … ${date}`, o);
  }
  await shot(page, '17-submit-machines');
  checkNoProblems(page);
  await page.closeAll();
});

test('submit a simulation of the H200: spec.sim_of is its id, and Runs, Run and Sweep mark it simulated', async () => {
  const { m: h200 } = await profileMachine('lent-h200');
  const page = await newPage();
  await open(page, '#/submit');
  await page.waitForSelector('#machine-pick');
  await page.click(`#machine-pick label.chip:has(input[value="${h200.id}"])`);
  await setText(page, '#f-size', '2^22');
  await setText(page, '#f-streams', '4');
  await setText(page, '#f-label', 'web-test sim h200');
  const preview = JSON.parse((await page.$eval('#request-preview', (el) => el.textContent)).split('\n').slice(1).join('\n'));
  check(preview.sim_of === h200.id && preview.backend === 'sim', 'the request carries sim_of and backend sim', `sim_of ${h200.id}, backend sim`, preview);
  const cudaOff = await page.$eval('input[name="backend"][value="cuda"]', (i) => i.disabled);
  check(cudaOff, 'the cuda backend cannot be chosen while simulating another machine', 'disabled', cudaOff);
  const hash = await page.evaluate(() => location.hash);
  check(hash.includes(`sim_of=${h200.id}`), 'the machine choice is in the hash', `sim_of=${h200.id}`, hash);
  await page.click('#submit-button');
  await page.waitForFunction(() => location.hash.startsWith('#/run/'), { timeout: 10000 });
  const id = decodeURIComponent(await page.evaluate(() => location.hash.slice('#/run/'.length).split('?')[0]));
  const e = await waitFinished(id);
  check(e.status === 'done', 'the simulation of the H200 is done', 'done', `${e.status} ${e.error || ''}`);
  check(e.spec.sim_of === h200.id, 'the stored spec names the simulated machine', h200.id, e.spec.sim_of);
  check(e.result.backend === 'sim' && /H200/.test(e.result.extra?.device || ''), 'the result is simulated, on the H200', 'backend sim, device …H200…', { backend: e.result.backend, device: e.result.extra?.device });
  state.simRunId = id;
  // the run page: a badge beside the machine, and the simulated machine's card
  await page.waitForSelector('#timeline-canvas', { timeout: 60000 });
  await waitReady(page);
  const runBadge = await page.$eval('.run-head .badge.sim', (el) => el.textContent).catch(() => null);
  check(runBadge === 'sim of lent-h200', 'the run page marks the run as a simulation of lent-h200', 'sim of lent-h200', runBadge);
  const machineHead = await page.$eval('#machine-card h2', (el) => el.textContent);
  check(/Simulated machine/.test(machineHead) && /lent-h200/.test(machineHead), 'the machine card shows the simulated machine', 'Simulated machine lent-h200 …', machineHead);
  const modelText = await page.$eval('#machine-card #sim-model', (el) => el.textContent).catch(() => null);
  check(modelText && /8 connections/.test(modelText) && /4 channels for H2D/.test(modelText) && /8 for kernels/.test(modelText),
    'the machine card says which model simulated the run: the channel pools, from result.extra', '… 8 connections … 4 channels for H2D … 8 for kernels …', modelText);
  await shot(page, '18-run-sim-of-h200');
  // the runs list: this run marked "sim of lent-h200", a run of this machine plain "sim"
  await open(page, '#/runs?label=web-test%20sim%20h200');
  const rows = await page.$$eval('#runs-table tbody tr', (trs) => trs.map((tr) => ({ id: tr.dataset.id, badge: tr.querySelector('.badge.sim')?.textContent || null })));
  const row = rows.find((x) => x.id === id);
  check(row && row.badge === 'sim of lent-h200', 'the runs list marks the run simulated, of lent-h200', `${id}: sim of lent-h200`, rows);
  await open(page, '#/runs?label=web-test%20256');
  const here = await page.$$eval('#runs-table tbody tr', (trs) => trs.map((tr) => tr.querySelector('.badge.sim')?.textContent || null));
  check(here.length >= 1 && here.every((b) => b === 'sim'), 'a run on this GPU-less server is marked "sim", of no other machine', 'sim', here);
  await shot(page, '19-runs-sim');

  // a sweep simulating the H200: every point carries sim_of, the sweep view says so
  await open(page, `#/submit?mode=sweep&sim_of=${h200.id}&streams=1,2&size=2%5E20&label=web-test%20sim%20sweep`);
  await page.waitForSelector('#machine-pick');
  const chosen = await page.$eval('#machine-pick input:checked', (i) => i.value);
  check(chosen === h200.id, 'a link with sim_of opens the form with that machine chosen', h200.id, chosen);
  const sweepReq = JSON.parse((await page.$eval('#request-preview', (el) => el.textContent)).split('\n').slice(1).join('\n'));
  check(sweepReq.base.sim_of === h200.id && sweepReq.base.backend === 'sim' && !sweepReq.axes.backend, 'the sweep\'s base carries sim_of and backend sim', `base.sim_of ${h200.id}`, sweepReq);
  await page.click('#submit-button');
  await page.waitForFunction(() => location.hash.startsWith('#/queue?sweep='), { timeout: 10000 });
  const sweepId = decodeURIComponent(await page.evaluate(() => new URLSearchParams(location.hash.split('?')[1]).get('sweep')));
  const points = await until(async () => {
    const ps = await sweepExperiments(sweepId);
    return ps.length === 2 && ps.every((p) => p.status === 'done') ? ps : null;
  }, 'the simulated sweep to finish', 60000, 200);
  check(points.every((p) => p.spec.sim_of === h200.id && p.result.backend === 'sim'), 'every point of the sweep simulates the H200', h200.id, points.map((p) => [p.spec.sim_of, p.result.backend]));
  await open(page, `#/sweep/${sweepId}`);
  await page.waitForSelector('#sweep-time-canvas', { timeout: 10000 });
  const sweepBadges = await page.$$eval('#sweep-machines .badge.sim', (els) => els.map((el) => el.textContent));
  check(sweepBadges.length === 1 && sweepBadges[0] === 'sim of lent-h200', 'the sweep view marks its points as a simulation of lent-h200', 'sim of lent-h200', sweepBadges);
  checkNoProblems(page);
  await page.closeAll();
});

test('compare: a simulation of the H200 beside this machine, labelled and coloured apart', async () => {
  check(state.simRunId, 'the previous test stored a simulation of the H200', 'an id', state.simRunId);
  const { m: h200, items, thisId } = await profileMachine('lent-h200');
  const mine = items.find((x) => x.id === thisId);
  const r = await apiCall('POST', '/api/experiments', { ...H200_CONFIG, label: 'web-test sim here' });
  check(r.status === 202, 'POST the same configuration on this machine', 202, `${r.status} ${r.text}`);
  const e = await waitFinished(r.json.id);
  check(e.status === 'done' && !e.spec.sim_of, 'this machine\'s run is done and simulates no other machine', 'done, no sim_of', `${e.status} ${e.spec.sim_of}`);
  const page = await newPage();
  await open(page, `#/compare?ids=${e.id},${state.simRunId}`);
  await page.waitForSelector('#compare-bars-canvas');
  const bars = await datasetsOf(page, '#compare-bars-canvas');
  check(bars.datasets.length === 2, 'one series per source: this machine and the simulated H200', 2, bars.datasets.map((d) => d.label));
  const sim = bars.datasets.find((d) => d.simOf === h200.id);
  const local = bars.datasets.find((d) => d.simOf !== h200.id);
  check(sim && sim.simulated && /simulation of lent-h200/.test(sim.label) && /H200/.test(sim.label), 'a series labelled as the simulation of the H200', 'simulation of lent-h200 · NVIDIA H200', sim && sim.label);
  check(local && !/H200|lent-h200/.test(local.label) && local.label.includes(mine.label || mine.hostname), 'beside it a series of this machine, named after it', `${mine.label || mine.hostname} …`, local && local.label);
  check(bars.datasets.every((d) => d.n === 1 && d.data[0] > 0), 'both series have the one configuration', '1 bar each', bars.datasets.map((d) => d.data));
  check(sim.color !== local.color, 'each machine keeps its own colour', 'two colours', [sim.color, local.color]);
  check(sim.fill !== sim.color, 'the simulation is drawn in a lighter shade of its machine\'s colour', `not ${sim.color}`, sim.fill);
  check(bars.legend.some((t) => /simulation of lent-h200/.test(t)) && bars.legend.length === 2, 'the legend says which is which', 'simulation of lent-h200 + this machine', bars.legend);
  // a simulated bar's tooltip gives its host-pace band (result.extra.host_pace), not its alike reps' min … max
  const pace = (await apiGet(`/api/experiments/${state.simRunId}`)).result.extra.host_pace;
  const tip = await page.$eval('#compare-bars-canvas', (c) => {
    const ch = window.Chart.getChart(c);
    const d = ch.data.datasets.find((x) => x.simulated && x.simOf);
    return ch.options.plugins.tooltip.callbacks.label({ dataset: d, dataIndex: 0, raw: d.data[0] });
  });
  const num = (x) => Number(x.toPrecision(3)).toLocaleString('en-US', { maximumFractionDigits: 6 });
  const fm = (x) => (x < 1 ? `${num(x * 1000)} µs` : `${num(x)} ms`); // as ui.js fmtMs writes them
  check(pace && tip.includes(`(host's calls 0.9–2× as dear: ${fm(pace.min_ms)} … ${fm(pace.max_ms)})`) && tip.endsWith(', simulated'),
    'the simulated bar\'s tooltip gives the host-pace band', `… (host's calls 0.9–2× as dear: ${pace && fm(pace.min_ms)} … ${pace && fm(pace.max_ms)}), simulated`, tip);
  const heads = await page.$$eval('#ratio-table thead th', (ths) => ths.map((th) => th.textContent));
  check(heads.some((t) => /sim of lent-h200/.test(t)), 'the ratio table names the simulated source', 'sim of lent-h200', heads);
  const machineCols = await page.$$eval('#machines-card thead th', (ths) => ths.map((th) => th.textContent));
  check(machineCols.length === 3 && machineCols.some((t) => /lent-h200/.test(t)), 'the machines table shows this machine and the simulated H200', 'property + 2 machines', machineCols);
  await shot(page, '20-compare-sim-h200');
  checkNoProblems(page);
  await page.closeAll();
});

test('a 401 asks for the bearer token, keeps it in sessionStorage and retries', async () => {
  check(TOKEN_URL && TOKEN, 'run.sh started a second server with a token', 'STREAMLAB_TOKEN_URL set', TOKEN_URL);
  const page = await newPage();
  await open(page, '#/submit', TOKEN_URL);
  await page.click('#submit-button');
  await page.waitForSelector('#token-dialog[open]', { timeout: 10000 });
  await shot(page, '14-token-dialog');
  await page.type('#token-input', TOKEN);
  await page.click('#token-dialog button[value="ok"]');
  await page.waitForFunction(() => location.hash.startsWith('#/run/'), { timeout: 10000 });
  const kept = await page.evaluate(() => sessionStorage.getItem('streamlab.token'));
  check(kept === TOKEN, 'the token is kept in sessionStorage', TOKEN, kept);
  await waitReady(page);
  checkNoProblems(page, [resourceError(401)]);
  await page.closeAll();
});

test('the queue view cancels a queued experiment (DELETE, asking for the token on 401)', async () => {
  // the token server has no workers (--workers 0): what is queued there stays queued
  const ids = [];
  for (let i = 0; i < 3; i++) {
    const r = await apiCall('POST', '/api/experiments', { variant: 'async_v1', streams: 8, label: `to cancel ${i}` }, { base: TOKEN_URL, token: TOKEN });
    check(r.status === 202, 'POST with the token', 202, `${r.status} ${r.text}`);
    ids.push(r.json.id);
  }
  const page = await newPage();
  await open(page, '#/queue', TOKEN_URL);
  const target = ids[1];
  const button = `#queued tr[data-id="${target}"] button.cancel`;
  await page.waitForSelector(button, { timeout: 10000 });
  await shot(page, '15-queue-queued');
  await page.click(button);
  await page.waitForSelector('#token-dialog[open]', { timeout: 10000 });
  await page.type('#token-input', TOKEN);
  await page.keyboard.press('Enter'); // Enter uses the token (it does not forget it)
  await until(async () => (await apiGet(`/api/experiments/${target}`, { base: TOKEN_URL })).status === 'cancelled', 'the experiment to be cancelled', 10000);
  await until(() => page.$(`#queued tr[data-id="${target}"]`).then((x) => !x), 'the cancelled row to leave the queue view', 10000);
  for (const other of [ids[0], ids[2]]) {
    const st = (await apiGet(`/api/experiments/${other}`, { base: TOKEN_URL })).status;
    check(st === 'queued', 'the other experiments stay queued', 'queued', st);
  }
  // cancelling it again: 409, said beside the button
  await page.evaluate(async (id) => {
    const { api } = await import('/js/api.js');
    try {
      await api.cancel(id);
    } catch (err) {
      window.lastCancelError = { status: err.status, code: err.code };
    }
  }, target);
  const again = await page.evaluate(() => window.lastCancelError);
  check(again && again.status === 409, 'a second cancel is a 409 conflict', 409, again);
  checkNoProblems(page, [resourceError(401), resourceError(409)]);
  await page.closeAll();
});

test('thousands of runs: the runs view pages with the API cursor', async () => {
  const ids = [];
  for (let k = 0; k < 2; k++) {
    const streams = Array.from({ length: 1000 }, (_, i) => 1 + ((i + k * 1000) % 1024));
    const r = await apiCall('POST', '/api/sweeps', { base: { variant: 'async_v2', size: 2 ** 20, reps: 1, warmup: 0, label: `bulk ${k}` }, axes: { streams } });
    check(r.status === 202, `POST a 1000-point sweep (${k + 1} of 2)`, 202, `${r.status} ${r.text.slice(0, 200)}`);
    ids.push(...r.json.experiments);
  }
  const page = await newPage();
  await open(page, '#/runs');
  await page.waitForSelector('#runs-table');
  const seen = new Set();
  let firstIds = null;
  for (let p = 0; p < 4; p++) {
    const rows = await page.$$eval('#runs-table tbody tr', (trs) => trs.map((tr) => tr.dataset.id));
    check(rows.length === 50, `page ${p + 1} holds 50 runs`, 50, rows.length);
    for (const id of rows) {
      check(!seen.has(id), 'no run appears on two pages', 'unique', id);
      seen.add(id);
    }
    if (p === 0) {
      firstIds = rows;
      check(rows[0] === ids.at(-1), 'newest first', ids.at(-1), rows[0]);
      await shot(page, '16-runs-thousands');
    }
    await page.$eval('#view', (el) => { el.dataset.ready = '0'; });
    await page.click('#next-page');
    await waitReady(page);
  }
  // back to newer pages, the same rows as before
  for (let p = 0; p < 4; p++) {
    await page.$eval('#view', (el) => { el.dataset.ready = '0'; });
    await page.click('#prev-page');
    await waitReady(page);
  }
  const again = await page.$$eval('#runs-table tbody tr', (trs) => trs.map((tr) => tr.dataset.id));
  check(JSON.stringify(again) === JSON.stringify(firstIds), '"newer" pages back to the first page', firstIds.slice(0, 3), again.slice(0, 3));
  check(await page.$('#prev-page') === null, 'the first page has no "newer" link', 'absent', 'present');
  // the queue view lists thousands without freezing: the first 200 and a count
  await open(page, '#/queue');
  const more = await page.$eval('#queued tfoot', (el) => el.textContent).catch(() => '');
  check(/more/.test(more), 'the queue view shows a count of the rest', '… and N more', more);
  checkNoProblems(page);
  await page.closeAll();
});

// ---------------------------------------------------------------------------------------
const resultFile = process.env.RESULT_FILE;
let outcome = { passed: 0, failed: 1 };
try {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await launch();
  console.log(`browser tests against ${BASE}; screenshots in ${ARTIFACTS}`);
  outcome = await runAll();
} catch (err) {
  console.log(`FAIL the browser did not start: ${err.stack || err}`);
} finally {
  await close();
}
if (resultFile) fs.writeFileSync(resultFile, `${outcome.passed} ${outcome.failed}\n`);
process.exit(outcome.failed ? 1 : 0);
