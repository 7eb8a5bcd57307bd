// Calls to the admin API with the admin token, when this listener needs one. The token is
// kept in this tab's sessionStorage, never in a cookie: no other site can make the browser
// send it (no CSRF), and it is gone when the tab closes.
const KEY = 'sluice-admin-token';
let onUnauthorized = () => {};

export function token() { return sessionStorage.getItem(KEY) || ''; }
export function setToken(t) {
  if (t) sessionStorage.setItem(KEY, t); else sessionStorage.removeItem(KEY);
}
export function whenUnauthorized(f) { onUnauthorized = f; }

export async function api(path, options = {}) {
  const headers = { ...(options.headers || {}) };
  if (token()) headers.Authorization = 'Bearer ' + token();
  const r = await fetch(path, { ...options, headers, cache: 'no-store' });
  if (r.status === 401) onUnauthorized(await r.clone().json().catch(() => ({})));
  return r;
}
