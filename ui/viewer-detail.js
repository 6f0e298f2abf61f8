// ui/viewer-detail.js: the parts of the viewer that show time and a turn: time in state (live spans on the
// server's clock, all ticking together), a session's turn in flight (model call, pending tool calls), a
// mob's members, and a session's transcript and ledger tails. ui/viewer.js calls them.
const $ = (sel) => document.querySelector(sel);

/** Server clock minus this browser's clock (ms), from the last answer's now_ms. */
let skew = 0;

export function el(tag, attrs = {}, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

/** 'idle' | {running: 'calling_model'} -> 'running.calling_model' */
export function statePath(value) {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    const [k, sub] = Object.entries(value)[0] ?? [];
    if (k === undefined) return '';
    const rest = statePath(sub);
    return rest ? `${k}.${rest}` : k;
  }
  return '';
}

// ---- time -----------------------------------------------------------------------------------------

const serverNow = () => Date.now() + skew;

export function noteServerClock(nowMs) {
  if (typeof nowMs === 'number') skew = nowMs - Date.now();
}

/** 12.3 s, 4 m 05 s, 2 h 03 m, 3 d 4 h */
function formatDuration(ms) {
  const s = Math.max(0, ms) / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} m ${String(Math.floor(s % 60)).padStart(2, '0')} s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h} h ${String(m % 60).padStart(2, '0')} m`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} kB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

export const clockTime = (ms) => new Date(ms).toISOString().slice(11, 23);

/** A span showing the live time since `sinceMs` (server clock); every such span ticks together. */
export function ageSpan(sinceMs, prefix = '', attrs = {}) {
  const span = el('span', { class: 'age', 'data-since': String(sinceMs), 'data-prefix': prefix, ...attrs });
  span.textContent = prefix + formatDuration(serverNow() - sinceMs);
  return span;
}

export function tickAges() {
  const now = serverNow();
  for (const e of document.querySelectorAll('[data-since]'))
    e.textContent = e.dataset.prefix + formatDuration(now - Number(e.dataset.since));
}

export function pre(obj) {
  return el('pre', {}, JSON.stringify(obj, null, 1));
}

/** A session's turn in flight: the model call (provider, model, elapsed, bytes, deltas), pending tools, interrupt. */
export function renderTurn(a, session) {
  const running = a.kind === 'session' && a.state === 'running';
  const f = session?.in_flight ?? null;
  $('#turn-box').hidden = !running && !f;
  $('#interrupt').hidden = !running;
  const info = $('#turn-info');
  const tools = $('#tools');
  info.replaceChildren();
  tools.replaceChildren();
  if (!f) {
    info.append(el('dd', { class: 'muted' }, running ? 'starting or committing (no model call or tool)' : 'no turn in flight'));
    return;
  }
  const row = (k, ...v) => {
    const dd = el('dd');
    dd.append(...v);
    info.append(el('dt', {}, k), dd);
  };
  row('request', f.request_id);
  row('turn', ageSpan(f.started_ms, 'running for '), ` · ${f.model_calls} model call${f.model_calls === 1 ? '' : 's'}`);
  const c = f.model_call;
  if (c) {
    const call = el(
      'span',
      { id: 'model-call', 'data-provider': c.provider, 'data-model': c.model },
      `#${c.number} ${c.provider} / ${c.model}`,
    );
    row('model call', call);
    row('waiting', ageSpan(c.started_ms, '', { id: 'call-age' }), ` since ${clockTime(c.started_ms)}`);
    const reasoning = c.reasoning_deltas ? ` · ${c.reasoning_deltas} reasoning deltas` : '';
    row(
      'received',
      el('span', { id: 'call-received' }, `${formatBytes(c.bytes_received)} · ${c.text_deltas} text deltas (≈ tokens)${reasoning}`),
    );
    if (c.retries) row('retries', String(c.retries));
  } else {
    row('model call', `none now (${f.provider} / ${f.model}${f.pending_tools.length ? '; tools running' : ''})`);
  }
  for (const t of f.pending_tools) {
    const li = el('li', { 'data-tool-id': t.id }, `${t.name} `);
    li.append(el('code', {}, t.id), ' ', ageSpan(t.since_ms, 'for '));
    tools.append(li);
  }
  if (f.pending_tools.length === 0) tools.append(el('li', { class: 'muted' }, 'none'));
}

/** A mob's members, each with its state and time in it (click: `onSelect(kind, id)`). */
export function renderMembers(members, onSelect) {
  $('#members-box').hidden = !members;
  const ol = $('#members');
  ol.replaceChildren();
  for (const m of members ?? []) {
    const li = el('li', { 'data-actor-id': m.id }, `${m.labels.agent_identity ?? m.id} · ${statePath(m.value)} · `);
    li.append(ageSpan(m.state_since_ms));
    li.onclick = () => onSelect(m.kind, m.id);
    ol.append(li);
  }
}

export function renderTails(session) {
  $('#transcript').replaceChildren(
    ...session.transcript_tail.map((m) => {
      const li = el('li', {}, m.role);
      li.append(pre(m.content ?? m.blocks ?? m.results));
      return li;
    }),
  );
  $('#ledger').replaceChildren(
    ...session.ledger_tail
      .slice()
      .reverse()
      .map((e) => {
        const li = el('li', { value: String(e.seq) }, `#${e.seq} ${e.payload.type}`);
        li.append(pre(e.payload));
        return li;
      }),
  );
}
