// The HTTP API client: JSON requests with the API key (kept in sessionStorage) and typed
// errors, so the UI can tell "ask for a key" (401) from other failures.

const KEY = "tether.apiKey";

/** The server answered 401: the user must give (another) API key. */
export class AuthRequired extends Error {}

/** The server answered with another error status; `status` and `body` say which. */
export class ApiError extends Error {
  constructor(status, body) {
    super(problemText(status, body));
    this.status = status;
    this.body = body;
  }
}

/** The API key in use, or null. */
export function apiKey() {
  return sessionStorage.getItem(KEY);
}

/** Remember `key` for this browser tab (sessionStorage); an empty key forgets it. */
export function setApiKey(key) {
  if (key) sessionStorage.setItem(KEY, key);
  else sessionStorage.removeItem(KEY);
}

function problemText(status, body) {
  if (body && typeof body === "object") {
    const text = body.message || body.detail || body.title;
    const kind = body.error_type || body.type;
    if (typeof text === "string") return kind && typeof kind === "string" ? `${kind}: ${text}` : text;
  }
  return `the server answered ${status}`;
}

async function readProblem(res) {
  try {
    return await res.json();
  } catch {
    return null;
  }
}

/** Send a request; returns the Response, throws AuthRequired on 401 and ApiError on 4xx/5xx. */
export async function request(method, path, { body, accept, signal, headers = {} } = {}) {
  const all = { ...headers };
  if (body !== undefined) all["Content-Type"] = "application/json";
  if (accept) all.Accept = accept;
  const key = apiKey();
  if (key) all.Authorization = `Bearer ${key}`;
  const res = await fetch(path, {
    method,
    headers: all,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
    cache: "no-store",
  });
  if (res.status === 401) throw new AuthRequired((await readProblem(res))?.message || "");
  if (!res.ok) throw new ApiError(res.status, await readProblem(res));
  return res;
}

/** Send a request and parse its JSON answer (null for an empty answer). */
export async function json(method, path, body) {
  const res = await request(method, path, { body, accept: "application/json" });
  const text = await res.text();
  return text ? JSON.parse(text) : null;
}
