// harness.mjs — what the browser tests share: Debian's chromium driven by puppeteer-core,
// a page that records every console error and page error, waiting with deadlines (never a
// fixed sleep), the real server's API from node (fetch), screenshots, and a tiny test
// runner that prints each test's name and, on failure, expected and actual.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import puppeteer from 'puppeteer-core';

export const BASE = process.env.STREAMLAB_URL || 'http://127.0.0.1:8080';
export const ARTIFACTS = process.env.ARTIFACTS || path.join(path.dirname(new URL(import.meta.url).pathname), 'artifacts');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

export class Failure extends Error {}

export function check(cond, what, expected, actual) {
  if (!cond) {
    throw new Failure(`${what}\n      expected: ${expected}\n      actual:   ${typeof actual === 'string' ? actual : JSON.stringify(actual)}`);
  }
}

// Poll fn() until it returns something truthy; fail with `what` after the deadline.
export async function until(fn, what, timeoutMs = 30000, everyMs = 100) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (err) {
      last = err.message;
    }
    if (Date.now() > deadline) throw new Failure(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${JSON.stringify(last)})`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

// ---- the API, from node ----
export async function apiCall(method, p, body, { base = BASE, token } = {}) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (token) headers.Authorization = `Bearer ${token}`;
  const res = await fetch(base + p, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  return { status: res.status, json, text };
}
export async function apiGet(p, opts) {
  const r = await apiCall('GET', p, undefined, opts);
  check(r.status === 200, `GET ${p}`, 'status 200', `${r.status} ${r.text.slice(0, 300)}`);
  return r.json;
}
export async function waitFinished(id, timeoutMs = 120000) {
  return until(async () => {
    const e = await apiGet(`/api/experiments/${id}`);
    return ['done', 'failed', 'cancelled'].includes(e.status) ? e : null;
  }, `experiment ${id} to finish`, timeoutMs, 200);
}

// ---- the browser ----
let browser = null;
let userDataDir = null;
export async function launch() {
  userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'streamlab-chromium-'));
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      `--user-data-dir=${userDataDir}`],
  });
  return browser;
}
export async function close() {
  if (browser) await browser.close().catch(() => {});
  if (userDataDir) fs.rmSync(userDataDir, { recursive: true, force: true });
}

// A fresh page (own sessionStorage) that records console errors and page errors.
export async function newPage() {
  const ctx = await browser.createBrowserContext();
  const page = await ctx.newPage();
  await page.setViewport({ width: 1440, height: 900 });
  page.problems = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'assert') page.problems.push(`console.${m.type()}: ${m.text()} ${m.location()?.url || ''}`);
  });
  page.on('pageerror', (e) => page.problems.push(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) => {
    if (!r.url().startsWith('data:')) page.problems.push(`requestfailed: ${r.method()} ${r.url()} ${r.failure()?.errorText}`);
  });
  page.closeAll = () => ctx.close();
  return page;
}

// Open a hash route and wait until the view says it is ready.
export async function open(page, hash, base = BASE) {
  const url = `${base}/${hash}`;
  if (page.url().startsWith(base)) {
    // same document: mark the view unready first, so that we wait for the new one
    const same = await page.evaluate((h) => {
      if (location.hash === h) return true;
      document.getElementById('view').dataset.ready = '0';
      location.hash = h;
      return false;
    }, hash);
    if (same) await page.reload({ waitUntil: 'load' });
  } else {
    await page.goto(url, { waitUntil: 'load' });
  }
  await waitReady(page);
}
export async function waitReady(page, timeoutMs = 30000) {
  await page.waitForFunction(() => document.getElementById('view')?.dataset.ready === '1', { timeout: timeoutMs });
}

// No console or page errors but those the test expects (each pattern at most `count` times).
export function checkNoProblems(page, allowed = []) {
  const left = page.problems.filter((p) => {
    const a = allowed.find((x) => x.re.test(p) && x.count > 0);
    if (a) {
      a.count -= 1;
      return false;
    }
    return true;
  });
  check(left.length === 0, 'no console errors or page errors', 'none', left.join('\n                ') || '');
}

export async function shot(page, name) {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  // from the top (sticky header and panels in place), once charts and canvases have drawn
  await page.evaluate(() => new Promise((r) => {
    window.scrollTo(0, 0);
    requestAnimationFrame(() => requestAnimationFrame(r));
  }));
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

// ---- the runner ----
const tests = [];
export function test(name, fn) {
  tests.push({ name, fn });
}
export async function runAll() {
  let passed = 0;
  let failed = 0;
  for (const t of tests) {
    const t0 = Date.now();
    try {
      await t.fn();
      passed += 1;
      console.log(`ok   ${t.name} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    } catch (err) {
      failed += 1;
      console.log(`FAIL ${t.name}\n      ${err instanceof Failure ? err.message : err.stack || err}`);
    }
  }
  return { passed, failed };
}
