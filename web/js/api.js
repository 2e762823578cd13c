// api.js — the one client of streamlab's HTTP API (server/API.md). Every view calls the
// server through these functions and nothing else calls fetch. Errors come back as
// ApiError carrying the API's {"error": {code, message, field}} and the HTTP status.
// The bearer token (POST/DELETE when the server is configured with one) lives in
// sessionStorage; a 401 asks for it once and retries the request.

const TOKEN_KEY = 'streamlab.token';

export class ApiError extends Error {
  constructor(status, body) {
    const e = (body && body.error) || {};
    super(e.message || `HTTP ${status}`);
    this.status = status;
    this.code = e.code || String(status);
    this.field = e.field || null;
    this.retryAfter = null;
  }
}

export function getToken() {
  return sessionStorage.getItem(TOKEN_KEY) || '';
}

export function setToken(token) {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

// The app installs a function that asks the user for a token (returns it, or null).
let askToken = async () => null;
export function onTokenNeeded(fn) {
  askToken = fn;
}

async function request(method, path, body, retried = false) {
  const headers = { Accept: 'application/json' };
  const token = getToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  const init = { method, headers };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  const text = await res.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (res.status === 401 && !retried) {
    const entered = await askToken(data && data.error ? data.error.message : 'This server needs a token.');
    if (entered) {
      setToken(entered);
      return request(method, path, body, true);
    }
  }
  if (!res.ok) {
    const err = new ApiError(res.status, data);
    err.retryAfter = res.headers.get('Retry-After');
    throw err;
  }
  return data;
}

function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

const enc = encodeURIComponent;

export const api = {
  health: () => request('GET', '/api/health'),
  machines: () => request('GET', '/api/machines'),
  machine: (id) => request('GET', `/api/machines/${enc(id)}`),
  submit: (spec) => request('POST', '/api/experiments', spec),
  submitSweep: (base, axes) => request('POST', '/api/sweeps', { base, axes }),
  sweep: (id) => request('GET', `/api/sweeps/${enc(id)}`),
  // filters: status, variant, machine, sweep, size, streams, label, limit, before
  experiments: (filters) => request('GET', `/api/experiments${query(filters)}`),
  experiment: (id) => request('GET', `/api/experiments/${enc(id)}`),
  cancel: (id) => request('DELETE', `/api/experiments/${enc(id)}`),
  timeline: (id, rep) => request('GET', `/api/experiments/${enc(id)}/timeline${query({ rep })}`),
  predict: (body) => request('POST', '/api/predict', body),
  traceUrl: (id) => `/api/experiments/${enc(id)}/trace`,
  jsonUrl: (id) => `/api/experiments/${enc(id)}`,
  timelineUrl: (id) => `/api/experiments/${enc(id)}/timeline`,
  exportUrl: (params) => `/api/export${query(params)}`,
  // the example bundles the server ships (its --examples folder), and importing them all
  examples: () => request('GET', '/api/examples'),
  importExamples: () => request('POST', '/api/examples', {}),
};

// GET /api/machines may answer a list or {"items": [...]}/{"machines": [...]}: one shape for the views.
export function machineList(data) {
  if (Array.isArray(data)) return data;
  if (data && Array.isArray(data.items)) return data.items;
  if (data && Array.isArray(data.machines)) return data.machines;
  return [];
}
