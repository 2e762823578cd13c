// app.js — the router. The URL hash holds each view's whole state, so that any page can
// be linked: #/<view>[/<id>][?<params>], e.g. #/run/ID?t0=100&t1=900, #/compare?ids=a,b.
// A view module exports render(root, ctx) and may register cleanups (timers, charts) with
// ctx.onCleanup; the router runs them when the view is left. Views change their own
// state with ctx.replace(params) (no re-render) or ctx.go(hash) (a new page, drawn again
// even where the hash is the one shown).

import { api, onTokenNeeded, getToken, setToken } from './api.js';
import { chartDefaults, errorBox, h, hashFor } from './ui.js';
import * as submit from './submit.js';
import * as queue from './queue.js';
import * as runs from './runs.js';
import * as run from './run.js';
import * as sweep from './sweep.js';
import * as compare from './compare.js';

const VIEWS = { submit, queue, runs, run, sweep, compare };
const TITLES = {
  submit: 'Submit', queue: 'Queue', runs: 'Runs', run: 'Run', sweep: 'Sweep', compare: 'Compare',
};

const root = document.getElementById('view');
let cleanups = [];
let generation = 0;

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const q = raw.indexOf('?');
  const path = q < 0 ? raw : raw.slice(0, q);
  const params = new URLSearchParams(q < 0 ? '' : raw.slice(q + 1));
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  return { view: parts[0] || 'runs', id: parts[1] || null, params };
}

async function route() {
  for (const fn of cleanups.splice(0)) {
    try {
      fn();
    } catch {
      /* a view's cleanup must not stop the next view */
    }
  }
  generation += 1;
  const gen = generation;
  const { view, id, params } = parseHash();
  const mod = VIEWS[view];
  document.querySelectorAll('#nav a').forEach((a) => {
    a.classList.toggle('active', a.dataset.view === view || (view === 'run' && a.dataset.view === 'runs')
      || (view === 'sweep' && a.dataset.view === 'runs'));
  });
  document.title = `${TITLES[view] || 'streamlab'} · streamlab`;
  root.replaceChildren();
  root.dataset.view = view;
  root.dataset.ready = '0';
  if (!mod) {
    root.append(h('section', { class: 'empty' }, h('h2', {}, 'No such page'),
      h('p', {}, 'Try ', h('a', { href: '#/runs' }, 'the runs'), '.')));
    root.dataset.ready = '1';
    return;
  }
  const ctx = {
    id,
    params,
    alive: () => gen === generation,
    onCleanup: (fn) => cleanups.push(fn),
    replace(newParams) {
      history.replaceState(null, '', hashFor(view, id, newParams));
    },
    go(hash) {
      if (location.hash === hash) route();
      else location.hash = hash;
    },
  };
  try {
    await mod.render(root, ctx);
  } catch (err) {
    if (gen !== generation) return;
    root.append(errorBox(err));
  }
  if (gen === generation) root.dataset.ready = '1';
}

// ---- the header: health and queue depth, polled ----
async function pollHealth() {
  const el = document.getElementById('health');
  const depth = document.getElementById('queue-depth');
  try {
    const hl = await api.health();
    el.textContent = `${hl.backend || '?'} backend · ${hl.devices ?? 0} device${hl.devices === 1 ? '' : 's'} · v${hl.version || '?'}`;
    el.className = `health ok backend-${hl.backend}`;
    depth.textContent = hl.queue_depth ? String(hl.queue_depth) : '';
  } catch {
    el.textContent = 'server unreachable';
    el.className = 'health bad';
  }
}

// ---- the token: asked for on a 401, kept in sessionStorage ----
function askToken(why) {
  const dlg = document.getElementById('token-dialog');
  const input = document.getElementById('token-input');
  document.getElementById('token-why').textContent = why || 'This server needs a bearer token to submit or cancel.';
  input.value = getToken();
  return new Promise((resolve) => {
    dlg.addEventListener('close', () => {
      if (dlg.returnValue === 'ok' && input.value.trim()) resolve(input.value.trim());
      else {
        if (dlg.returnValue === 'clear') setToken('');
        resolve(null);
      }
      updateTokenButton();
    }, { once: true });
    dlg.showModal();
    input.focus();
  });
}
function updateTokenButton() {
  const b = document.getElementById('token-button');
  b.textContent = getToken() ? 'token ✓' : 'token';
}

onTokenNeeded(askToken);
document.getElementById('token-button').addEventListener('click', async () => {
  const t = await askToken('Set the bearer token sent with submit and cancel requests.');
  if (t) setToken(t);
  updateTokenButton();
});
updateTokenButton();

chartDefaults();
window.addEventListener('hashchange', route);
pollHealth();
setInterval(pollHealth, 4000);
route();
