// ui/viewer-chart.js: draws an actor kind's machine as a statechart: the flat definition from
// GET /inspect/machines/{kind} becomes an elkjs graph (nested states inside their parent, one edge per
// source/target pair labelled with its events), laid out and rendered as SVG. The viewer highlights states on it.
const SVG = 'http://www.w3.org/2000/svg';
const elk = new window.ELK();

function svgEl(tag, attrs = {}, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

/** The SVG chart of a machine definition. */
export async function machineSvg(graph) {
  const { root, elkRoot } = elkGraph(graph);
  const laid = await elk.layout(elkRoot);
  return renderSvg(graph, root, laid);
}

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
