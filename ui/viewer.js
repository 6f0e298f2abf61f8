// ui/viewer.js: Warren's live actor viewer (plain ES module, no build step). Lists resident actors of
// every kind (GET /inspect/actors), draws the selected actor's machine from its definition
// (GET /inspect/machines/{kind}) laid out by elkjs, highlights the current state and animates
// transitions from the one inspection stream (GET /inspect/events, SSE), and steps through a
// session's ledger (GET /inspect/sessions/{id}/timeline) for time travel.
const $ = (sel) => document.querySelector(sel);
const SVG = 'http://www.w3.org/2000/svg';
const elk = new window.ELK();

const view = {
  actors: [],
  selected: null, // { kind, id }
  graphs: new Map(), // kind -> { graph, svg }
  chartKind: null,
  value: null, // state value shown on the chart
  timeline: null, // { steps } while time travelling
  travelIndex: 0,
  recent: [],
};

async function api(path) {
  const res = await fetch(path, { headers: { accept: 'application/json' } });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

function el(tag, attrs = {}, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function svgEl(tag, attrs = {}, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

/** 'idle' | {running: 'calling_model'} -> 'running.calling_model' */
function statePath(value) {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    const [k, sub] = Object.entries(value)[0] ?? [];
    if (k === undefined) return '';
    const rest = statePath(sub);
    return rest ? `${k}.${rest}` : k;
  }
  return '';
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
        void refreshList();
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
  for (const a of view.actors) {
    const tr = el('tr', { 'data-actor-kind': a.kind, 'data-actor-id': a.id, class: a.awake ? '' : 'shed' });
    if (view.selected && view.selected.kind === a.kind && view.selected.id === a.id) tr.classList.add('selected');
    tr.append(el('td', {}, a.kind), el('td', { class: 'id', title: a.id }, a.id.slice(0, 13)));
    tr.append(
      el('td', { class: `state-${a.state}` }, statePath(a.value) + (a.awake ? '' : ' (shed)')),
      el('td', {}, String(a.mailbox_depth)),
    );
    tr.onclick = () => void select(a.kind, a.id);
    body.append(tr);
  }
}

// ---- statechart ---------------------------------------------------------------------------------

function elkGraph(graph) {
  const nodes = new Map(graph.states.map((s) => [s.id, { ...s, children: [] }]));
  let root = null;
  for (const s of nodes.values()) {
    if (s.parent === null) root = s;
    else nodes.get(s.parent).children.push(s);
  }
  const isAncestor = (a, b) => b.startsWith(`${a}.`);
  const toNode = (s) => {
    const width = Math.max(96, s.key.length * 7.5 + 28);
    if (s.children.length === 0) return { id: s.id, width, height: 36 };
    return {
      id: s.id,
      layoutOptions: { 'elk.padding': '[top=30,left=16,bottom=16,right=16]' },
      children: s.children.map(toNode),
    };
  };
  // One edge per source/target pair, labelled with every event that takes it.
  const pairs = new Map();
  for (const t of graph.transitions) {
    for (const target of t.targets) {
      if (target === t.source || isAncestor(t.source, target) || isAncestor(target, t.source)) continue;
      const key = `${t.source}->${target}`;
      const p = pairs.get(key) ?? { source: t.source, target, events: [] };
      if (!p.events.includes(t.event)) p.events.push(t.event);
      pairs.set(key, p);
    }
  }
  const edges = [...pairs.values()].map((p, i) => ({
    id: `e${i}`,
    sources: [p.source],
    targets: [p.target],
    events: p.events,
    labels: [{ text: p.events.join(', '), width: p.events.join(', ').length * 5.6, height: 12 }],
  }));
  return {
    root,
    elkRoot: {
      id: '__root',
      layoutOptions: {
        'elk.algorithm': 'layered',
        'elk.direction': 'DOWN',
        'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
        'elk.layered.spacing.nodeNodeBetweenLayers': '46',
        'elk.spacing.nodeNode': '36',
        'elk.spacing.edgeLabel': '4',
        'elk.edgeLabels.placement': 'CENTER',
        'elk.padding': '[top=12,left=12,bottom=12,right=12]',
      },
      children: root.children.map(toNode),
      edges,
    },
  };
}

async function drawMachine(kind) {
  let cached = view.graphs.get(kind);
  if (!cached) {
    const graph = await api(`/inspect/machines/${encodeURIComponent(kind)}`);
    const { root, elkRoot } = elkGraph(graph);
    const laid = await elk.layout(elkRoot);
    cached = { graph, svg: renderSvg(graph, root, laid) };
    view.graphs.set(kind, cached);
  }
  $('#chart').replaceChildren(cached.svg);
  view.chartKind = kind;
}

function renderSvg(graph, root, laid) {
  const svg = svgEl('svg', {
    viewBox: `0 0 ${laid.width} ${laid.height}`,
    width: laid.width,
    height: laid.height,
    'data-machine': graph.machine_id,
  });
  const defs = svgEl('defs');
  const marker = svgEl('marker', {
    id: 'arrow',
    viewBox: '0 0 10 10',
    refX: 9,
    refY: 5,
    markerWidth: 7,
    markerHeight: 7,
    orient: 'auto-start-reverse',
  });
  marker.append(svgEl('path', { d: 'M0,0 L10,5 L0,10 z', fill: '#8c959f' }));
  defs.append(marker);
  svg.append(defs);
  const offsets = new Map([['__root', { x: 0, y: 0 }]]);
  const nodesLayer = svgEl('g');
  const initialOf = new Map(graph.states.filter((s) => s.initial).map((s) => [s.initial, true]));
  const drawNode = (n, ox, oy, parentG) => {
    const x = ox + n.x;
    const y = oy + n.y;
    offsets.set(n.id, { x, y });
    const state = graph.states.find((s) => s.id === n.id);
    const compound = Boolean(n.children && n.children.length);
    const g = svgEl('g', { class: `node${compound ? ' compound' : ''}`, 'data-state-id': n.id, 'data-active': 'false' });
    g.append(svgEl('rect', { x, y, width: n.width, height: n.height, rx: compound ? 10 : 16 }));
    g.append(
      svgEl(
        'text',
        compound ? { x: x + 12, y: y + 19, 'font-weight': 600 } : { x: x + n.width / 2, y: y + n.height / 2 + 4, 'text-anchor': 'middle' },
        state.key,
      ),
    );
    if (initialOf.has(n.id)) g.append(svgEl('circle', { class: 'initial-dot', cx: x - 6, cy: y + 8, r: 4 }));
    parentG.append(g);
    for (const c of n.children ?? []) drawNode(c, x, y, g);
  };
  for (const c of laid.children) drawNode(c, 0, 0, nodesLayer);
  svg.append(nodesLayer);
  const edgesLayer = svgEl('g');
  for (const e of laid.edges ?? []) {
    const off = offsets.get(e.container ?? '__root') ?? { x: 0, y: 0 };
    const g = svgEl('g', { class: 'edge', 'data-source': e.sources[0], 'data-target': e.targets[0], 'data-events': e.events.join(' ') });
    for (const s of e.sections ?? []) {
      const pts = [s.startPoint, ...(s.bendPoints ?? []), s.endPoint].map((p) => `${off.x + p.x},${off.y + p.y}`);
      g.append(svgEl('path', { d: `M${pts.join(' L')}`, 'marker-end': 'url(#arrow)' }));
    }
    for (const l of e.labels ?? []) g.append(svgEl('text', { x: off.x + l.x, y: off.y + l.y + 9 }, l.text));
    edgesLayer.append(g);
  }
  svg.append(edgesLayer);
  svg.dataset.root = root.id;
  return svg;
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

// ---- detail pane ----------------------------------------------------------------------------------

function pre(obj) {
  return el('pre', {}, JSON.stringify(obj, null, 1));
}

function renderRecent() {
  const ol = $('#recent');
  ol.replaceChildren();
  for (const t of view.recent.slice(-30).reverse()) {
    const li = el('li', {}, `${new Date(t.at_ms).toISOString().slice(11, 23)} ${t.event.type} → ${t.state}`);
    li.append(pre(t.event));
    ol.append(li);
  }
}

async function refreshDetail() {
  if (!view.selected) return;
  const { kind, id } = view.selected;
  let d;
  try {
    d = await api(`/inspect/actors/${encodeURIComponent(kind)}/${encodeURIComponent(id)}`);
  } catch {
    $('#detail-summary').textContent = 'actor is no longer resident';
    return;
  }
  const dl = el('dl');
  const row = (k, v) => dl.append(el('dt', {}, k), el('dd', {}, v));
  row('kind', d.actor.kind);
  row('id', d.actor.id);
  row('state', statePath(d.actor.value));
  row('mailbox depth', String(d.actor.mailbox_depth));
  row('subscribers', String(d.actor.subscribers));
  row('awake', String(d.actor.awake));
  if (Object.keys(d.actor.labels).length) row('labels', JSON.stringify(d.actor.labels));
  if (d.session) {
    row('turn phase', d.session.turn_phase ?? '-');
    row('messages', String(d.session.message_count));
  }
  $('#detail-summary').replaceChildren(dl);
  if (d.recent_events.length > view.recent.length) view.recent = d.recent_events;
  renderRecent();
  $('#session-extra').hidden = !d.session;
  $('#travel-open').hidden = kind !== 'session';
  if (d.session) {
    const tr = $('#transcript');
    tr.replaceChildren(
      ...d.session.transcript_tail.map((m) => {
        const li = el('li', {}, m.role);
        li.append(pre(m.content ?? m.blocks ?? m.results));
        return li;
      }),
    );
    const lg = $('#ledger');
    lg.replaceChildren(
      ...d.session.ledger_tail
        .slice()
        .reverse()
        .map((e) => {
          const li = el('li', { value: String(e.seq) }, `#${e.seq} ${e.payload.type}`);
          li.append(pre(e.payload));
          return li;
        }),
    );
  }
  if (!view.timeline && d.actor.kind === view.chartKind) highlight(d.actor.value);
}

async function select(kind, id) {
  view.selected = { kind, id };
  view.recent = [];
  view.timeline = null;
  $('#travel').hidden = true;
  $('#chart-title').textContent = `${kind} ${id}`;
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
    // e.g. a memory realm keeps no ledger (SESSION_PERSISTENCE_DISABLED).
    $('#travel').hidden = false;
    $('#travel-info').textContent = `no time travel: ${err.message}`;
    return;
  }
  view.timeline = t;
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
  void refreshDetail();
}

// ---- live stream ----------------------------------------------------------------------------------

let detailTimer = null;
let listTimer = null;

function onTransition(t) {
  const row = view.actors.find((a) => a.kind === t.kind && a.id === t.id);
  if (row) {
    row.value = t.value;
    row.state = t.state.split('.')[0];
    row.awake = t.event.type !== 'xstate.stop';
    renderRows();
  }
  // Counts per state (and actors new to the list) follow within a quarter second.
  listTimer ??= setTimeout(() => {
    listTimer = null;
    void refreshList();
  }, 250);
  if (!view.selected || view.selected.kind !== t.kind || view.selected.id !== t.id) return;
  view.recent.push(t);
  if (view.recent.length > 50) view.recent.shift();
  renderRecent();
  if (!view.timeline) highlight(t.value, t.event.type);
  detailTimer ??= setTimeout(() => {
    detailTimer = null;
    void refreshDetail();
  }, 300);
}

function connect() {
  const es = new EventSource('/inspect/events');
  es.addEventListener('inspect_loaded', () => {
    document.body.dataset.connected = 'true';
  });
  es.addEventListener('transition', (ev) => onTransition(JSON.parse(ev.data)));
  es.addEventListener('stream_truncated', () => {
    void refreshList();
    void refreshDetail();
  });
  es.onerror = () => {
    document.body.dataset.connected = 'false';
  };
}

function start() {
  for (const id of ['#f-kind', '#f-state']) $(id).addEventListener('change', () => void refreshList());
  $('#f-label').addEventListener('input', () => void refreshList());
  $('#filters').addEventListener('submit', (e) => e.preventDefault());
  $('#travel-open').onclick = () => void openTravel();
  $('#travel-slider').oninput = (e) => travelTo(Number(e.target.value));
  $('#travel-prev').onclick = () => travelTo(view.travelIndex - 1);
  $('#travel-next').onclick = () => travelTo(view.travelIndex + 1);
  $('#travel-live').onclick = leaveTravel;
  connect();
  void refreshList();
  setInterval(() => void refreshList(), 3000);
  const params = new URLSearchParams(location.search);
  if (params.get('kind') && params.get('id')) void select(params.get('kind'), params.get('id'));
}

start();
