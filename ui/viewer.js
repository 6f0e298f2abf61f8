// ui/viewer.js: Warren's live actor viewer (plain ES modules, no build step). Lists resident actors of
// every kind (GET /inspect/actors) with their time in state, a mob's members under it; draws the selected
// actor's machine (ui/viewer-chart.js), highlights the current state and animates transitions from the one
// inspection stream (GET /inspect/events); shows a session's turn in flight (model call, pending tools) with
// an interrupt button, and steps through its ledger for time travel. Requests carry the API key the page
// asked for when the server wants one (ui/viewer-net.js). A session's turns offer a fork or a replay from
// each, and a replay session shows its report (ui/viewer-replay.js). docs/viewer.md describes each part.
import { api, NeedsKey, onKey, readSse, Refused, request, setupKeyForm } from '/ui/viewer-net.js';
import { machineSvg } from '/ui/viewer-chart.js';
import { hideSession, lineage, renderSession, setupReplay } from '/ui/viewer-replay.js';
import {
  ageSpan,
  clockTime,
  el,
  noteServerClock,
  pre,
  renderMembers,
  renderTails,
  renderTurn,
  statePath,
  tickAges,
} from '/ui/viewer-detail.js';

const $ = (sel) => document.querySelector(sel);

const view = {
  actors: [],
  selected: null, // { kind, id }
  graphs: new Map(), // kind -> svg
  chartKind: null,
  value: null, // state value shown on the chart
  timeline: null, // { steps } while time travelling
  travelIndex: 0,
  recent: [],
  stream: null, // AbortController of the open inspection stream
  livePoll: null, // timer refreshing a running session's detail
  transitions: 0, // transitions of the selected actor received so far (a detail fetched before the last is stale)
};

/** Runs a promise for its effect: a missing key is the prompt's business, anything else goes to the console. */
function safely(p) {
  p.catch((err) => {
    if (!(err instanceof NeedsKey)) console.warn(err);
  });
}

// ---- actor list ---------------------------------------------------------------------------------

function filterQuery() {
  const q = new URLSearchParams();
  if ($('#f-kind').value) q.set('kind', $('#f-kind').value);
  if ($('#f-state').value) q.set('state', $('#f-state').value);
  const label = $('#f-label').value.trim();
  if (label.includes('=')) q.set('label', label);
  return q;
}

async function refreshList() {
  const list = await api(`/inspect/actors?${filterQuery()}`);
  noteServerClock(list.now_ms);
  view.actors = list.actors;
  const kindSel = $('#f-kind');
  for (const k of list.kinds) if (![...kindSel.options].some((o) => o.value === k)) kindSel.append(el('option', { value: k }, k));
  const states = new Set(Object.values(list.counts).flatMap((c) => Object.keys(c)));
  const stateSel = $('#f-state');
  for (const s of states) if (![...stateSel.options].some((o) => o.value === s)) stateSel.append(el('option', { value: s }, s));
  const counts = $('#counts');
  counts.replaceChildren();
  for (const [kind, byState] of Object.entries(list.counts)) {
    for (const [state, n] of Object.entries(byState)) {
      const chip = el('span', { class: 'chip', 'data-kind': kind, 'data-state': state }, `${kind} ${state}`);
      chip.append(el('b', {}, String(n)));
      chip.onclick = () => {
        $('#f-kind').value = kind;
        $('#f-state').value = state;
        safely(refreshList());
      };
      counts.append(chip);
    }
  }
  renderRows();
  $('#list-note').textContent =
    `${list.total} matching actor${list.total === 1 ? '' : 's'}${list.total > list.actors.length ? `, ${list.actors.length} shown` : ''}`;
}

function renderRows() {
  const body = $('#actors tbody');
  body.replaceChildren();
  // A mob lists its members right under it; they are not repeated on their own rows.
  const mobs = new Set(view.actors.filter((a) => a.kind === 'mob' && a.members).map((a) => a.id));
  for (const a of view.actors) {
    if (a.kind === 'mob_member' && mobs.has(a.labels.mob_id)) continue;
    body.append(rowOf(a));
    for (const m of a.members ?? []) body.append(rowOf(m, a));
  }
}

function rowOf(a, parent) {
  const tr = el('tr', { 'data-actor-kind': a.kind, 'data-actor-id': a.id });
  if (!a.awake) tr.classList.add('shed');
  if (parent) {
    tr.classList.add('member');
    tr.dataset.parentId = parent.id;
  }
  if (view.selected && view.selected.kind === a.kind && view.selected.id === a.id) tr.classList.add('selected');
  const name = parent ? (a.labels.agent_identity ?? a.id) : a.id;
  tr.append(
    el('td', { class: 'kind' }, parent ? '└ member' : a.kind),
    el('td', { class: 'id', title: a.id }, name.length > 16 ? `${name.slice(0, 13)}…` : name),
    stateCell(a),
  );
  const since = el('td', { class: 'since' });
  since.append(ageSpan(a.state_since_ms));
  tr.append(since, el('td', {}, String(a.mailbox_depth)));
  tr.onclick = () => safely(select(a.kind, a.id));
  return tr;
}

/** The full state name, free to wrap after each dot (never cut off). */
function stateCell(a) {
  const td = el('td', { class: `state state-${a.state}`, title: statePath(a.value) });
  statePath(a.value)
    .split('.')
    .forEach((part, i) => (i === 0 ? td.append(part) : td.append('.', el('wbr'), part)));
  if (!a.awake) td.append(' (shed)');
  return td;
}

/** Every listed copy of an actor (a member is listed on its own and under its mob). */
function* listed(kind, id) {
  for (const a of view.actors) {
    if (a.kind === kind && a.id === id) yield a;
    for (const m of a.members ?? []) if (m.kind === kind && m.id === id) yield m;
  }
}

// ---- statechart ---------------------------------------------------------------------------------

async function drawMachine(kind) {
  let svg = view.graphs.get(kind);
  if (!svg) {
    svg = await machineSvg(await api(`/inspect/machines/${encodeURIComponent(kind)}`));
    view.graphs.set(kind, svg);
  }
  $('#chart').replaceChildren(svg);
  view.chartKind = kind;
}

/** Highlights the state `value` (and its ancestors); `fired` marks the edge the event took. */
function highlight(value, fired) {
  const svg = $('#chart svg');
  view.value = value;
  const path = statePath(value);
  $('#current-state').textContent = path;
  if (!svg) return;
  const leaf = `${svg.dataset.root}.${path}`;
  for (const g of svg.querySelectorAll('.node')) {
    const id = g.dataset.stateId;
    g.dataset.active = String(id === leaf);
    g.dataset.activeParent = String(leaf.startsWith(`${id}.`));
  }
  for (const e of svg.querySelectorAll('.edge.fired')) e.classList.remove('fired');
  if (fired) {
    for (const e of svg.querySelectorAll('.edge')) {
      const t = e.dataset.target;
      if (e.dataset.events.split(' ').includes(fired) && (leaf === t || leaf.startsWith(`${t}.`))) e.classList.add('fired');
    }
  }
}

/** The chart head's "for 12.3 s" (live), or nothing while time travelling. */
function showAge(sinceMs) {
  const box = $('#current-age');
  if (view.timeline || sinceMs === undefined) box.replaceChildren();
  else box.replaceChildren(ageSpan(sinceMs, 'for '));
}

// ---- detail pane ----------------------------------------------------------------------------------

function renderRecent() {
  const ol = $('#recent');
  ol.replaceChildren();
  for (const t of view.recent.slice(-30).reverse()) {
    const li = el('li', {}, `${clockTime(t.at_ms)} ${t.event.type} → ${t.state}`);
    li.append(pre(t.event));
    ol.append(li);
  }
}

async function refreshDetail() {
  if (!view.selected) return;
  const { kind, id } = view.selected;
  clearTimeout(view.livePoll);
  const transitions = view.transitions;
  let d;
  try {
    d = await api(`/inspect/actors/${encodeURIComponent(kind)}/${encodeURIComponent(id)}`);
  } catch (err) {
    if (err instanceof NeedsKey) return;
    $('#detail-summary').textContent = 'actor is no longer resident';
    $('#turn-box').hidden = true;
    hideSession();
    return;
  }
  if (!view.selected || view.selected.kind !== kind || view.selected.id !== id) return;
  // A transition arrived while this was fetched: the answer may predate it (it would move the highlight back).
  // That transition scheduled a fresh fetch of its own (onTransition), which renders instead.
  if (view.transitions !== transitions) return;
  noteServerClock(d.now_ms);
  const a = d.actor;
  const dl = el('dl');
  const row = (k, v) => {
    const dd = el('dd');
    dd.append(v);
    dl.append(el('dt', {}, k), dd);
  };
  row('kind', a.kind);
  row('id', a.id);
  row('state', statePath(a.value));
  row('in state for', ageSpan(a.state_since_ms, '', { id: 'state-age' }));
  row('mailbox depth', String(a.mailbox_depth));
  row('subscribers', String(a.subscribers));
  row('awake', String(a.awake));
  if (Object.keys(a.labels).length) row('labels', JSON.stringify(a.labels));
  if (a.kind === 'mob_member' && a.labels.session_id) {
    const link = el('button', { type: 'button', class: 'link', id: 'member-session' }, a.labels.session_id);
    link.onclick = () => safely(select('session', a.labels.session_id));
    row('session', link);
  }
  if (d.session) {
    row('turn phase', d.session.turn_phase ?? '-');
    row('messages', String(d.session.message_count));
    lineage(a.labels, row);
  }
  $('#detail-summary').replaceChildren(dl);
  renderTurn(a, d.session);
  renderMembers(a.members, (kind, mid) => safely(select(kind, mid)));
  if (d.recent_events.length > view.recent.length) view.recent = d.recent_events;
  renderRecent();
  $('#session-extra').hidden = !d.session;
  $('#travel-open').hidden = kind !== 'session';
  if (d.session) {
    renderTails(d.session);
    safely(renderSession(a, d.session));
  } else hideSession();
  if (!view.timeline && a.kind === view.chartKind) {
    highlight(a.value);
    showAge(a.state_since_ms);
  }
  // A running session's counters (bytes, deltas, tools) change without a transition: read them again.
  clearTimeout(view.livePoll);
  if (a.kind === 'session' && a.state === 'running') view.livePoll = setTimeout(() => safely(refreshDetail()), 1000);
}

async function interrupt() {
  if (!view.selected || view.selected.kind !== 'session') return;
  const note = $('#action-note');
  const button = $('#interrupt');
  note.className = '';
  note.textContent = 'interrupting…';
  button.disabled = true;
  try {
    const r = await (await request('POST', `/sessions/${encodeURIComponent(view.selected.id)}/interrupt`)).json();
    note.textContent = r.interrupted ? 'interrupt sent' : 'nothing to interrupt';
  } catch (err) {
    note.className = 'refusal';
    if (err instanceof NeedsKey) note.textContent = 'Refused: an API key is needed. Enter one above, then try again.';
    else if (err instanceof Refused && err.status === 403) {
      const d = err.body.details ?? {};
      const has = Array.isArray(d.scopes) ? ` (it has: ${d.scopes.join(', ')})` : '';
      note.textContent = `Refused: this API key lacks the '${d.required ?? 'sessions'}' scope needed to interrupt${has}.`;
    } else note.textContent = `Interrupt failed: ${err.message}`;
  } finally {
    button.disabled = false;
    safely(refreshDetail());
  }
}

async function select(kind, id) {
  view.selected = { kind, id };
  view.recent = [];
  view.timeline = null;
  $('#travel').hidden = true;
  $('#action-note').textContent = '';
  $('#chart-title').textContent = `${kind} ${id}`;
  // The address names the selection: a reload (or a shared link) opens it again.
  history.replaceState(null, '', `?kind=${encodeURIComponent(kind)}&id=${encodeURIComponent(id)}`);
  renderRows();
  await drawMachine(kind);
  await refreshDetail();
}

// ---- time travel ----------------------------------------------------------------------------------

async function openTravel() {
  if (!view.selected || view.selected.kind !== 'session') return;
  let t;
  try {
    t = await api(`/inspect/sessions/${encodeURIComponent(view.selected.id)}/timeline?limit=5000`);
  } catch (err) {
    if (err instanceof NeedsKey) return;
    // e.g. a memory realm keeps no ledger (SESSION_PERSISTENCE_DISABLED).
    $('#travel').hidden = false;
    $('#travel-info').textContent = `no time travel: ${err.message}`;
    return;
  }
  view.timeline = t;
  showAge(undefined);
  const slider = $('#travel-slider');
  slider.max = String(Math.max(0, t.steps.length - 1));
  slider.value = slider.max;
  $('#travel').hidden = false;
  travelTo(Number(slider.max));
}

function travelTo(i) {
  const steps = view.timeline?.steps ?? [];
  if (steps.length === 0) return;
  view.travelIndex = Math.max(0, Math.min(steps.length - 1, i));
  $('#travel-slider').value = String(view.travelIndex);
  const step = steps[view.travelIndex];
  $('#travel-info').textContent =
    `#${step.entry.seq} ${step.entry.payload.type}${step.machine_event ? ` ⇒ ${step.machine_event}` : ''} → ${step.state}`;
  const fired = step.machine_event ? step.machine_event.split(' → ').at(-1) : undefined;
  highlight(step.value, fired);
}

function leaveTravel() {
  view.timeline = null;
  $('#travel').hidden = true;
  safely(refreshDetail());
}

// ---- live stream ----------------------------------------------------------------------------------

let detailTimer = null;
let listTimer = null;

function onTransition(t) {
  let seen = false;
  for (const row of listed(t.kind, t.id)) {
    seen = true;
    // The server's own clock stamps the transition: time in state restarts only when the state changed.
    if (statePath(row.value) !== t.state) row.state_since_ms = t.at_ms;
    row.value = t.value;
    row.state = t.state.split('.')[0];
    row.awake = t.event.type !== 'xstate.stop';
  }
  if (seen) renderRows();
  // Counts per state (and actors new to the list) follow within a quarter second.
  listTimer ??= setTimeout(() => {
    listTimer = null;
    safely(refreshList());
  }, 250);
  if (!view.selected || view.selected.kind !== t.kind || view.selected.id !== t.id) return;
  view.transitions++;
  view.recent.push(t);
  if (view.recent.length > 50) view.recent.shift();
  renderRecent();
  if (!view.timeline) {
    if (statePath(view.value) !== t.state) showAge(t.at_ms);
    highlight(t.value, t.event.type);
  }
  detailTimer ??= setTimeout(() => {
    detailTimer = null;
    safely(refreshDetail());
  }, 300);
}

/** Opens the inspection stream (fetch-based, so it carries the key); reopens it after a drop. */
function connect() {
  view.stream?.abort();
  const ctl = new AbortController();
  view.stream = ctl;
  const onFrame = (event, data) => {
    if (event === 'inspect_loaded') document.body.dataset.connected = 'true';
    else if (event === 'transition') onTransition(JSON.parse(data));
    else if (event === 'stream_truncated') {
      safely(refreshList());
      safely(refreshDetail());
    }
  };
  const dropped = (err) => {
    if (view.stream !== ctl || ctl.signal.aborted) return;
    document.body.dataset.connected = 'false';
    // A missing key waits for the prompt (onKey reconnects); any other drop is retried.
    if (!(err instanceof NeedsKey)) setTimeout(() => view.stream === ctl && connect(), 2000);
  };
  readSse('/inspect/events', ctl.signal, onFrame).then(() => dropped(), dropped);
}

function start() {
  setupKeyForm();
  setupReplay({ select, safely });
  onKey(() => {
    connect();
    safely(refreshList());
    safely(refreshDetail());
  });
  for (const id of ['#f-kind', '#f-state']) $(id).addEventListener('change', () => safely(refreshList()));
  $('#f-label').addEventListener('input', () => safely(refreshList()));
  $('#filters').addEventListener('submit', (e) => e.preventDefault());
  $('#travel-open').onclick = () => safely(openTravel());
  $('#travel-slider').oninput = (e) => travelTo(Number(e.target.value));
  $('#travel-prev').onclick = () => travelTo(view.travelIndex - 1);
  $('#travel-next').onclick = () => travelTo(view.travelIndex + 1);
  $('#travel-live').onclick = leaveTravel;
  $('#interrupt').onclick = () => safely(interrupt());
  connect();
  safely(refreshList());
  setInterval(() => safely(refreshList()), 3000);
  setInterval(tickAges, 100);
  const params = new URLSearchParams(location.search);
  if (params.get('kind') && params.get('id')) safely(select(params.get('kind'), params.get('id')));
}

start();
