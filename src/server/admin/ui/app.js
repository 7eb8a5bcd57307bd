// The dashboard page: asks for the token when the listener needs one, then polls the admin
// API (docs/dashboard.md) and fills each panel.
import { api, setToken, token, whenUnauthorized } from './api.js';
import { draw, merge, since } from './charts.js';
import { blockingRules, loadRules, ruleNames } from './rules.js';

const $ = (id) => document.getElementById(id);
let timers = [];

// A poll that cannot reach sluice (a restart, a network cut) marks the page as disconnected
// and tries again at its next tick; the first answer clears the mark. No rejection escapes.
function lost(e) {
  $('connection').hidden = false;
  $('connection').textContent = `connection lost (${e.message}): retrying`;
}
function reached() { $('connection').hidden = true; }
function every(ms, poll) {
  return setInterval(() => poll().then(reached, lost), ms);
}

function askToken(answer) {
  for (const t of timers) clearInterval(t);
  timers = [];
  $('main').hidden = true;
  $('token-form').hidden = false;
  $('token-error').textContent = token() ? (answer.error || 'the token does not match') : '';
}

async function series() {
  const r = await api('/v1/stats/series?since=' + since());
  if (!r.ok) return;
  const answer = await r.json();
  merge(answer);
  draw();
  $('series-memory').textContent = `History: ${answer.memory_bytes} bytes held for these series ` +
    `(at most ${answer.max_memory_bytes}), ${answer.capacity_points} points each at ` +
    `${answer.resolution_seconds} s.`;
}

function table(headers, rows) {
  const t = document.createElement('table');
  const head = t.createTHead().insertRow();
  for (const h of headers) head.appendChild(document.createElement('th')).textContent = h;
  const body = t.createTBody();
  for (const r of rows) {
    const tr = body.insertRow();
    for (const v of r) tr.insertCell().textContent = v ?? '';
  }
  return t;
}

async function status() {
  const r = await api('/v1/status');
  if (!r.ok) return;
  const s = await r.json();
  $('build').textContent = `${s.version} (${s.commit}), config version ${s.config.version}`;
  const parts = [];
  const p = (text) => { const e = document.createElement('p'); e.textContent = text; return e; };
  parts.push(p(`Config file: ${s.config.file || '(none)'}; admin changes written back: ` +
    (s.config.write_back ? 'yes' : 'no')));
  parts.push(table(['listener', 'address'], s.listeners.map((l) => [l.name, l.address])));
  if (s.redis) {
    const b = s.redis.breaker_loops;
    parts.push(p(`Redis: ${s.redis.connected_loops} loops connected; breaker closed ${b.closed}, ` +
      `open ${b.open}, half-open ${b.half_open}; ${s.redis.failures} failed calls, ` +
      `${s.redis.breaker_opens} outages; failure policy ${s.redis.on_failure}`));
  } else {
    parts.push(p('Redis: not configured (every rule is kept in this process).'));
  }
  parts.push(table(['rule', 'storage', 'on failure', 'keys', 'capacity', 'memory bytes', 'evictions', 'idle drops'],
    s.rules.map((x) => [x.name, x.storage, x.on_failure, x.table?.keys, x.table?.capacity,
      x.table?.memory_bytes, x.table?.evictions, x.table?.idle_drops])));
  $('status-body').replaceChildren(...parts);
  overload(s.overload || []);
}

// Each route's adaptive limit and breaker, from /v1/status (their gauges and counters).
function overload(routes) {
  const n = (v, digits = 0) => (v === undefined ? '' : Number(v).toFixed(digits));
  const rows = routes.map((r) => [r.route, n(r.adaptive?.limit), n(r.adaptive?.in_flight),
    n(r.adaptive?.queued), n(r.adaptive?.min_rtt_ms, 3), n(r.adaptive?.shed),
    r.breaker?.state ?? '', n(r.breaker?.opens), n(r.breaker?.fallbacks)]);
  const body = $('overload-body');
  if (!rows.length) {
    const e = document.createElement('p');
    e.className = 'note';
    e.textContent = 'No route has an adaptive concurrency limit or a breaker.';
    body.replaceChildren(e);
    return;
  }
  body.replaceChildren(table(['route', 'adaptive limit', 'in flight', 'queued', 'min RTT ms',
    'shed', 'breaker', 'opens', 'fallbacks'], rows));
}

async function instances() {
  const r = await api('/v1/instances');
  const body = $('instances-body');
  const p = (text) => { const e = document.createElement('p'); e.className = 'note'; e.textContent = text; return e; };
  if (!r.ok) { body.replaceChildren(p(`the list is not available (${r.status})`)); return; }
  const s = await r.json();
  if (!s.redis) { body.replaceChildren(p('No Redis configured: this instance shares nothing.')); return; }
  body.replaceChildren(p(`Each instance writes a heartbeat every ${s.heartbeat_every_ms / 1000} s, ` +
    `kept ${s.heartbeat_ttl_ms / 1000} s: down means two were missed.`),
  table(['instance', 'health', 'last seen', 'version', 'config version', 'listeners'],
    s.instances.map((i) => [i.id + (i.self ? ' (this one)' : ''), i.live ? 'up' : 'down',
      `${i.seen_seconds_ago.toFixed(1)} s ago`, i.version, i.config_version,
      (i.listeners || []).map((l) => `${l.name} ${l.address}`).join(', ')])));
}

async function topKeys() {
  const boxes = [];
  for (const name of ruleNames) {
    const r = await api(`/v1/rules/${encodeURIComponent(name)}/top?by=denied&n=10`);
    const box = document.createElement('div');
    box.className = 'top';
    box.dataset.rule = name;
    const h = document.createElement('h3');
    h.textContent = name;
    box.appendChild(h);
    if (!r.ok) {
      const e = document.createElement('p');
      e.className = 'note';
      e.textContent = r.status === 404 ? 'no top list for this rule' : `error ${r.status}`;
      box.appendChild(e);
    } else {
      const t = await r.json();
      const note = document.createElement('p');
      note.className = 'note';
      note.textContent = `by ${t.by}, last ${t.window_seconds} s, ${t.capacity} keys tracked`;
      box.append(note, table(['key', 'requests', 'denied'], t.keys.map((k) => [k.key, k.requests, k.denied])));
    }
    if (blockingRules.includes(name)) await blockedKeys(name, box);
    boxes.push(box);
  }
  $('top-keys').replaceChildren(...boxes);
}

// A rule's blocked keys (on_deny), the latest first, under its top keys.
async function blockedKeys(name, box) {
  const r = await api(`/v1/rules/${encodeURIComponent(name)}/blocks?n=10`);
  const note = document.createElement('p');
  note.className = 'note blocked';
  if (!r.ok) {
    note.textContent = `blocked keys: error ${r.status}`;
    box.appendChild(note);
    return;
  }
  const b = await r.json();
  note.textContent = `${b.total} keys blocked now` + (b.truncated ? `, the ${b.count} latest:` : '');
  const rows = b.blocks.map((k) => [k.key, (k.retry_after_ms / 1000).toFixed(0)]);
  box.append(note, table(['blocked key', 'seconds left'], rows));
  box.lastChild.classList.add('blocked');
}

async function keyCall(method) {
  const rule = $('key-rule').value, key = $('key-name').value;
  const r = await api(`/v1/rules/${encodeURIComponent(rule)}/keys/${encodeURIComponent(key)}`, { method });
  $('key-state').textContent = JSON.stringify(await r.json(), null, 2);
}

async function start() {
  const probe = await api('/v1/status');
  if (probe.status === 401) return;
  $('token-form').hidden = true;
  $('main').hidden = false;
  $('forget-token').hidden = !token();
  await Promise.all([status(), loadRules(), series(), instances()]);
  await topKeys();
  timers = [every(1000, series), every(2000, status), every(2000, topKeys), every(5000, instances)];
}

whenUnauthorized(askToken);
$('token-form').addEventListener('submit', (e) => {
  e.preventDefault();
  setToken($('token').value.trim());
  start().catch(lost);
});
$('forget-token').addEventListener('click', () => { setToken(''); location.reload(); });
$('key-form').addEventListener('submit', (e) => { e.preventDefault(); keyCall('GET'); });
$('key-reset').addEventListener('click', () => keyCall('DELETE'));
start().catch(lost);
