// ui/viewer-net.js: how the viewer talks to Warren. Every request goes through `request()`, which sends the
// API key kept in sessionStorage (when there is one) as `Authorization: Bearer`; a 401 opens the key prompt
// and the caller's work runs again once a key is given. The inspection stream is read with fetch (an
// EventSource cannot send a header) and parsed as SSE here. See docs/viewer.md.
const KEY = 'warren.viewer.key';

/** Thrown for a 401: the key prompt is open; the request is not retried by itself. */
export class NeedsKey extends Error {}

/** A refusal with the server's error envelope ({error, code, details}). */
export class Refused extends Error {
  constructor(status, body) {
    super(body?.error ?? `HTTP ${status}`);
    this.status = status;
    this.body = body ?? {};
  }
}

const listeners = new Set();
let prompting = false;

/** Called (again) once the user gave a key: the page reloads its data and reopens its stream. */
export function onKey(fn) {
  listeners.add(fn);
}

export function storedKey() {
  return sessionStorage.getItem(KEY);
}

function askForKey(reason) {
  prompting = true;
  const form = document.querySelector('#key-form');
  form.hidden = false;
  document.querySelector('#key-note').textContent = reason;
  document.body.dataset.auth = 'needed';
  document.querySelector('#key-input').focus();
}

export function setupKeyForm() {
  const form = document.querySelector('#key-form');
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const input = document.querySelector('#key-input');
    const key = input.value.trim();
    if (!key) return;
    sessionStorage.setItem(KEY, key);
    input.value = '';
    form.hidden = true;
    prompting = false;
    document.body.dataset.auth = 'key';
    for (const fn of listeners) fn();
  });
  document.querySelector('#key-forget').addEventListener('click', () => {
    sessionStorage.removeItem(KEY);
    document.body.dataset.auth = 'none';
    // Reloading asks for a key again if the server needs one.
    for (const fn of listeners) fn();
  });
  if (storedKey()) document.body.dataset.auth = 'key';
}

/**
 * fetch() with the stored key (and `body` sent as JSON, `headers` added). Answers the Response when it is ok; a 401 opens the key prompt (dropping a
 * key the server refused) and throws NeedsKey; any other failure throws Refused with the error envelope.
 */
export async function request(method, path, { accept = 'application/json', signal, body: json, headers: extra = {} } = {}) {
  const headers = { accept, ...extra };
  if (json !== undefined) headers['content-type'] = 'application/json';
  const key = storedKey();
  if (key) headers.authorization = `Bearer ${key}`;
  const res = await fetch(path, { method, headers, signal, body: json === undefined ? undefined : JSON.stringify(json) });
  if (res.ok) return res;
  const body = await res.json().catch(() => undefined);
  if (res.status === 401) {
    if (key) sessionStorage.removeItem(KEY);
    if (!prompting)
      askForKey(
        key
          ? `The server refused the key (${body?.error ?? 'unauthorized'}). Enter another API key.`
          : 'This Warren server requires an API key (wk_...). It is kept in this tab only (sessionStorage).',
      );
    throw new NeedsKey(body?.error ?? 'API key required');
  }
  throw new Refused(res.status, body);
}

export async function api(path) {
  return (await request('GET', path)).json();
}

/**
 * Reads an SSE stream through fetch until it ends or `signal` aborts; `onEvent(name, data)` for each frame
 * with data. Resolves when the stream ends; rejects like request().
 */
export async function readSse(path, signal, onEvent) {
  const res = await request('GET', path, { accept: 'text/event-stream', signal });
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value.replaceAll('\r\n', '\n');
    let end;
    while ((end = buf.indexOf('\n\n')) >= 0) {
      const frame = buf.slice(0, end);
      buf = buf.slice(end + 2);
      let event = 'message';
      const data = [];
      for (const line of frame.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length) onEvent(event, data.join('\n'));
    }
  }
}
