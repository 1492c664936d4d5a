// The one way the dashboard reaches the memory: the /v1/ API, with a bearer token when the
// server wants one. The token lives in this tab's sessionStorage, never in a cookie:
// requests carry no ambient credentials (credentials: "omit"), so no other site can
// make the browser send them.

const TOKEN_KEY = "palimpsest.token";

export class ApiError extends Error {
  constructor(status, code, detail) {
    super(`${code}: ${detail}`);
    this.status = status;
    this.code = code;
    this.detail = detail;
  }
}

export const session = {
  token: sessionStorage.getItem(TOKEN_KEY),
  auth: null, // "loopback" | "tokens", from /v1/health
  access: null, // /v1/access
  ns: null, // the namespace this page reads (?ns=, else the caller's default)
  onUnauthorized: null,
};

export function setToken(token) {
  session.token = token;
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

/** Call the API: `api("/v1/timeline", {params: {subject: "user"}})`. Throws ApiError. */
export async function api(path, { method = "GET", params = {}, body, namespace = true } = {}) {
  const url = new URL(path, location.origin);
  if (namespace && session.ns) url.searchParams.set("namespace", session.ns);
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === "") continue;
    if (Array.isArray(v)) v.forEach((x) => url.searchParams.append(k, String(x)));
    else url.searchParams.set(k, String(v));
  }
  const headers = { Accept: "application/json" };
  if (session.token) headers.Authorization = `Bearer ${session.token}`;
  const init = { method, headers, credentials: "omit", cache: "no-store" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let r;
  try {
    r = await fetch(url, init);
  } catch (e) {
    throw new ApiError(0, "unreachable", "the server did not answer");
  }
  const text = await r.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch (e) {
    data = null;
  }
  if (!r.ok) {
    const err = new ApiError(r.status, data?.code ?? `http_${r.status}`, data?.detail ?? r.statusText);
    if (r.status === 401 && session.onUnauthorized) session.onUnauthorized(err);
    throw err;
  }
  return data;
}

/** A dashboard URL keeping the namespace: link("/ui/entity/Mira", {known_at}). */
export function link(path, params = {}) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== "") url.searchParams.set(k, String(v));
  }
  const ns = new URLSearchParams(location.search).get("ns");
  if (ns && !url.searchParams.has("ns")) url.searchParams.set("ns", ns);
  return url.pathname + url.search;
}

export function entityPath(name) {
  return "/ui/entity/" + encodeURIComponent(name);
}

export function canWrite() {
  return Boolean(session.access && session.access.can_write);
}
