// ui/viewer-replay.js: forks and replays in the session detail (docs/viewer.md "Turns, forks and replays").
// A session's turns (GET /sessions/{id}/turns), each with "Fork here" (POST /sessions/{id}/fork {at_turn})
// and "Replay" (POST /sessions/{id}/replay {turns}, detached), which open the new session; where a session
// came from (forked from, replay of, rerun of) as links; and a replay session's report (GET
// /sessions/{id}/replay-report): its progress while it runs, then identical or the first divergence (turn,
// call, field path, recorded vs now). ui/viewer.js calls setupReplay, lineage, renderSession and hideSession.
import { api, NeedsKey, Refused, request } from '/ui/viewer-net.js';
import { el, pre } from '/ui/viewer-detail.js';

const $ = (sel) => document.querySelector(sel);
const enc = encodeURIComponent;
const short = (id) => (id.length > 12 ? `${id.slice(0, 8)}…` : id);

/** What viewer.js lends this module: select an actor, and run a promise for its effect. */
let host = { select: async () => {}, safely: (p) => p };

const view = {
  id: null, // the session shown
  turnsKey: null, // `${id}:${message_count}` of the turns list shown
  reportSeq: 0, // the newest report read (older answers are dropped)
  reportTimer: null,
  report: null,
  sourceTurns: null, // { id, turns } of a diverged replay's source
};

export function setupReplay(h) {
  host = h;
}

/** Opens a session: reads its status first (a fork is stored, not yet resident), then selects it. */
async function openSession(id) {
  await request('GET', `/sessions/${enc(id)}/status`);
  await host.select('session', id);
}

const LINKS = [
  ['warren.forked_from', 'forked from', 'forked-from'],
  ['warren.replay_of', 'replay of', 'replay-of'],
  ['warren.rerun_of', 'rerun of', 'rerun-of'],
];

/** Adds a row per session this one was made from (a link that opens it) through `row(name, element)`. */
export function lineage(labels, row) {
  for (const [label, name, id] of LINKS) {
    const src = labels[label];
    if (!src) continue;
    const link = el('button', { type: 'button', class: 'link', id, 'data-session-id': src }, src);
    link.onclick = () => host.safely(act(`open ${name}`, () => openSession(src)));
    row(name, link);
  }
}

export function hideSession() {
  view.id = null;
  clearTimeout(view.reportTimer);
  $('#turns-box').hidden = true;
  $('#replay-box').hidden = true;
}

/** A session's turns and, for a replay session, its report; `session` is the inspect detail's session part. */
export async function renderSession(actor, session) {
  const id = actor.id;
  if (view.id !== id) {
    view.id = id;
    view.turnsKey = null;
    view.report = null;
    clearTimeout(view.reportTimer);
    $('#replay-note').textContent = '';
    $('#replay-note').className = '';
    $('#turns').replaceChildren();
  }
  $('#turns-box').hidden = false;
  const isReplay = Boolean(actor.labels['warren.replay_of']);
  $('#replay-box').hidden = !isReplay;
  const key = `${id}:${session.message_count}`;
  const work = [];
  if (view.turnsKey !== key) {
    view.turnsKey = key;
    work.push(loadTurns(id));
  }
  if (isReplay && (!view.report || view.report.error === 'running')) work.push(loadReport(id));
  await Promise.all(work);
}

// ---- turns --------------------------------------------------------------------------------------------

async function loadTurns(id) {
  let t;
  try {
    t = await api(`/sessions/${enc(id)}/turns`);
  } catch (err) {
    if (err instanceof NeedsKey || view.id !== id) return;
    view.turnsKey = null;
    $('#turns').replaceChildren(el('li', { class: 'muted' }, `no turns: ${err.message}`));
    return;
  }
  if (view.id !== id) return;
  const ol = $('#turns');
  ol.replaceChildren(...t.turns.map(turnItem));
  if (t.turns.length === 0) ol.append(el('li', { class: 'muted' }, 'no turn yet'));
  markDivergence();
}

function turnItem(x) {
  const li = el('li', { 'data-turn': String(x.turn), value: String(x.turn) });
  li.append(el('span', { class: 'prompt', title: x.prompt }, x.prompt));
  const fork = el(
    'button',
    { type: 'button', class: 'fork', title: `a new session holding this one's history through turn ${x.turn}` },
    'Fork here',
  );
  fork.onclick = () => host.safely(forkAt(x.turn));
  const replay = el(
    'button',
    {
      type: 'button',
      class: 'replay',
      title: x.recorded
        ? `replay the recorded turns through turn ${x.turn} in a new session (no model, no tool)`
        : 'this turn has no recording',
    },
    'Replay',
  );
  replay.disabled = !x.recorded;
  replay.onclick = () => host.safely(replayThrough(x));
  const actions = el('span', { class: 'turn-actions' });
  actions.append(fork, replay);
  li.append(actions);
  return li;
}

function refusal(what, err) {
  if (err instanceof NeedsKey) return `Refused: an API key is needed to ${what}. Enter one above, then try again.`;
  if (err instanceof Refused && err.status === 403) {
    const d = err.body.details ?? {};
    const has = Array.isArray(d.scopes) ? ` (it has: ${d.scopes.join(', ')})` : '';
    return `Refused: this API key lacks the '${d.required ?? 'sessions'}' scope needed to ${what}${has}.`;
  }
  return `Could not ${what}: ${err.message}`;
}

/** Runs an action, saying so under the turns; a failure is shown there, in red. */
async function act(what, fn) {
  const note = $('#replay-note');
  note.className = '';
  note.textContent = `${what}…`;
  try {
    const done = await fn();
    note.textContent = done ?? '';
  } catch (err) {
    note.className = 'refusal';
    note.textContent = refusal(what, err);
  }
}

function forkAt(turn) {
  const src = view.id;
  return act('fork', async () => {
    const r = await (await request('POST', `/sessions/${enc(src)}/fork`, { body: { at_turn: turn } })).json();
    await openSession(r.session_id);
    return `forked ${short(src)} at turn ${turn} (${r.message_count} messages)`;
  });
}

function replayThrough(x) {
  const src = view.id;
  return act('replay', async () => {
    const res = await request('POST', `/sessions/${enc(src)}/replay`, {
      body: { turns: x.replay_turns },
      headers: { prefer: 'respond-async' },
    });
    const r = await res.json();
    await openSession(r.replay_session_id);
    return `replay of ${short(src)} through turn ${x.turn}`;
  });
}

// ---- a replay's report ----------------------------------------------------------------------------------

async function loadReport(id) {
  const seq = ++view.reportSeq;
  clearTimeout(view.reportTimer);
  let r;
  try {
    r = await api(`/sessions/${enc(id)}/replay-report`);
  } catch (err) {
    if (err instanceof NeedsKey || view.id !== id || seq !== view.reportSeq) return;
    r = { status: 'failed', error: err.message, turns: 0, turns_replayed: 0, calls_checked: 0, tools_answered: 0 };
  }
  if (view.id !== id || seq !== view.reportSeq) return;
  const finished = view.report?.error === 'running' && r.error !== 'running';
  view.report = r;
  if (r.divergence && view.sourceTurns?.id !== r.source_session_id) {
    // The source's turn that diverged, to show its prompt (a failed turn is not in the replay session).
    try {
      view.sourceTurns = { id: r.source_session_id, turns: (await api(`/sessions/${enc(r.source_session_id)}/turns`)).turns };
    } catch {
      view.sourceTurns = null;
    }
    if (view.id !== id || seq !== view.reportSeq) return;
  }
  showReport(r);
  if (r.error === 'running') view.reportTimer = setTimeout(() => host.safely(loadReport(id)), 500);
  else if (finished) {
    view.turnsKey = null;
    await loadTurns(id);
  }
}

/** The turn of the replay session (and of its source) a divergence is at: earlier unrecorded turns come first. */
const divergedTurn = (r) => (r.unrecorded_turns ?? 0) + r.divergence.turn;

function showReport(r) {
  const box = $('#replay-report');
  const running = r.error === 'running';
  box.dataset.status = running ? 'running' : r.status;
  const head = el('p', { id: 'replay-status' });
  const parts = [head];
  if (running) {
    head.append(el('strong', {}, 'replaying… '), `${r.turns_replayed} of ${r.turns} turns done, ${r.calls_checked} model calls checked`);
    parts.push(el('progress', { id: 'replay-progress', max: String(Math.max(1, r.turns)), value: String(r.turns_replayed) }));
  } else if (r.status === 'identical') {
    head.append(
      el('strong', {}, 'identical'),
      `: ${r.turns_replayed} of ${r.turns} turns, ${r.calls_checked} model calls checked, ${r.tools_answered} tool results from the recording`,
    );
  } else if (r.status === 'diverged') {
    head.append(el('strong', {}, 'diverged'), ` after ${r.turns_replayed} identical turn${r.turns_replayed === 1 ? '' : 's'}`);
  } else head.append(el('strong', {}, 'failed'), `: ${r.error ?? 'unknown error'}`);
  if (r.unrecorded_turns)
    parts.push(el('p', { class: 'muted' }, `${r.unrecorded_turns} earlier turn(s) without a recording carried as history, not checked`));
  if (r.divergence) parts.push(divergenceBlock(r));
  box.replaceChildren(...parts);
  markDivergence();
}

function divergenceBlock(r) {
  const d = r.divergence;
  const turn = divergedTurn(r);
  const block = el('div', { id: 'divergence' });
  block.append(el('h4', {}, 'first divergence'));
  const dl = el('dl');
  const row = (k, v, id) => {
    const dd = el('dd', id ? { id } : {});
    dd.append(v);
    dl.append(el('dt', {}, k), dd);
  };
  const prompt = view.sourceTurns?.turns.find((x) => x.turn === turn)?.prompt;
  row('turn', `${turn}${prompt !== undefined ? ` · “${prompt.slice(0, 60)}”` : ''}`, 'divergence-turn');
  row('call', `${d.call} (the turn's model call #${d.call + 1})`, 'divergence-call');
  row('kind', d.kind, 'divergence-kind');
  row('field', el('code', {}, d.path), 'divergence-path');
  block.append(dl);
  const side = (cls, title, value) => {
    const div = el('div', { class: cls });
    div.append(el('h4', {}, title), pre(value));
    return div;
  };
  const diff = el('div', { class: 'diff' });
  diff.append(side('recorded', 'recorded', d.recorded), side('now', 'now', d.now));
  block.append(diff);
  return block;
}

/** Marks the diverged turn in the replay session's own turn list (when the turn got that far). */
function markDivergence() {
  for (const li of document.querySelectorAll('#turns li.diverged')) li.classList.remove('diverged');
  const r = view.report;
  if (!r?.divergence) return;
  document.querySelector(`#turns li[data-turn="${divergedTurn(r)}"]`)?.classList.add('diverged');
}
