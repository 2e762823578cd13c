// make-examples.mjs — example bundles for the browser tests, made the way the repo's
// examples/ are: runs on one server (SRC_URL), exported with GET /api/export?…&ops=median,
// written into OUT_DIR. Two bundles, each as if from its own machine (the machine's id and
// label, and the ids of the sweep and experiments, renamed: one host can only be one machine),
// holding the same configurations, so that Compare can put the two side by side.
// Usage: node make-examples.mjs SRC_URL OUT_DIR. Exits non-zero, saying why, on any failure.

import fs from 'node:fs';
import path from 'node:path';

const [src, out] = process.argv.slice(2);
if (!src || !out) {
  console.error('usage: node make-examples.mjs SRC_URL OUT_DIR');
  process.exit(2);
}

async function call(method, p, body) {
  const res = await fetch(src + p, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, json: text ? JSON.parse(text) : null };
}

async function main() {
  const sw = await call('POST', '/api/sweeps', {
    base: { variant: 'async_v1', size: 2 ** 20, reps: 3, warmup: 0, label: 'web-test example' },
    axes: { streams: [1, 4] },
  });
  if (sw.status !== 202) throw new Error(`POST /api/sweeps: ${sw.status} ${sw.text}`);
  const deadline = Date.now() + 60000;
  for (;;) {
    const s = await call('GET', `/api/sweeps/${sw.json.id}`);
    const c = (s.json && s.json.counts) || {};
    if (c.done === sw.json.experiments.length) break;
    if (c.failed || c.cancelled) throw new Error(`the example sweep did not finish: ${JSON.stringify(c)}`);
    if (Date.now() > deadline) throw new Error(`the example sweep took over 60 s: ${JSON.stringify(c)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const ex = await call('GET', `/api/export?sweep=${sw.json.id}&ops=median`);
  if (ex.status !== 200) throw new Error(`GET /api/export?sweep=…&ops=median: ${ex.status} ${ex.text.slice(0, 300)}`);
  const bundle = ex.json;
  fs.mkdirSync(out, { recursive: true });
  for (const name of ['a', 'b']) {
    let text = JSON.stringify(bundle);
    const rename = (from, to) => { text = text.split(from).join(to); };
    for (const m of bundle.machines) rename(m.id, `m-webtest-${name}`);
    for (const s of bundle.sweeps || []) rename(s.id, `${s.id}-${name}`);
    for (const e of bundle.experiments) rename(e.id, `${e.id}-${name}`);
    const b = JSON.parse(text);
    for (const m of b.machines) {
      m.label = `example-${name}`;
      m.hostname = `example-${name}`;
      delete m.profile;
    }
    fs.writeFileSync(path.join(out, `web-test-${name}.json`), JSON.stringify(b, null, 1));
  }
}

main().catch((err) => {
  console.error(`make-examples: ${err.message}`);
  process.exit(1);
});
