// test/architecture/import-graph.test.ts: walks every .ts file's imports and enforces the layering of
// ARCHITECTURE.md and STYLE.md: `http → actors → (machines, storage, providers, tools) → contracts`,
// machines/ imports only xstate and contracts/, config/ is a composition helper (like app.ts) that never
// reaches actors/ or http/, only app.ts, main.ts, tests and bench import http/ and config/; plus no
// `export default`, no index.ts barrels, and relative imports that spell out an existing `.ts` file.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** One import edge as written in a source file. */
interface ImportEdge {
  specifier: string;
  typeOnly: boolean;
}

/** Extracts static, side-effect and dynamic imports and re-exports (checked by the first test below). */
function extractImports(source: string): ImportEdge[] {
  const out: ImportEdge[] = [];
  for (const m of source.matchAll(/^[ \t]*(?:import|export)\s+(type\s+)?[^'";]*?\bfrom\s*['"]([^'"]+)['"]/gm)) {
    out.push({ specifier: m[2], typeOnly: m[1] !== undefined });
  }
  for (const m of source.matchAll(/^[ \t]*import\s*['"]([^'"]+)['"]/gm)) out.push({ specifier: m[1], typeOnly: false });
  for (const m of source.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push({ specifier: m[1], typeOnly: false });
  return out;
}

const LAYERED = ['contracts', 'machines', 'storage', 'providers', 'tools', 'actors', 'http', 'config', 'client', 'cli'] as const;
type Area = (typeof LAYERED)[number] | 'app.ts' | 'main.ts' | 'test' | 'bench';
const FREE: ReadonlySet<Area> = new Set(['main.ts', 'test', 'bench']);

/** Areas each layered area may import (relative imports). Anything not listed is a violation. */
const MAY_IMPORT: Record<Exclude<Area, 'main.ts' | 'test' | 'bench'>, readonly Area[]> = {
  contracts: ['contracts'],
  machines: ['machines', 'contracts'],
  storage: ['storage', 'contracts'],
  providers: ['providers', 'contracts'],
  tools: ['tools', 'contracts'],
  actors: ['actors', 'machines', 'storage', 'providers', 'tools', 'contracts'],
  // Handlers reach state only through actors/ (commands and the query module), never the store.
  http: ['http', 'actors', 'contracts'],
  // A composition helper for app.ts/main.ts (flags, realm files, logger): it may use the lower layers
  // (config/realm.ts reads storage/store.ts's backend list) but never the runtime or the transport.
  config: ['config', 'machines', 'storage', 'providers', 'tools', 'contracts'],
  // The typed client (client/, its own npm package) sees only the wire contracts, never the server.
  client: ['client', 'contracts'],
  'app.ts': ['contracts', 'machines', 'storage', 'providers', 'tools', 'actors', 'http', 'config'],
  // Command families besides `serve` (cli/workgraph-*.ts): composition like app.ts, run from main.ts.
  cli: ['cli', 'contracts', 'machines', 'storage', 'providers', 'tools', 'actors', 'config'],
};

/** npm packages an area may import; areas not listed may import any package or node: builtin. */
const PACKAGES: Partial<Record<Area, readonly string[]>> = {
  contracts: ['typebox'],
  machines: ['xstate'],
  // The client's only dependency is a type-only one: typebox's Static (erased at run time).
  client: ['typebox'],
};

/**
 * Narrow, deliberate exceptions. Each must stay type-only and is checked to still be in use, so it goes
 * away when the code is fixed.
 */
const ALLOWANCES: ReadonlyArray<{ from: RegExp; to: string; why: string }> = [];

function areaOf(file: string): Area | undefined {
  const [first, ...rest] = file.split('/');
  if (rest.length === 0) return first === 'app.ts' || first === 'main.ts' ? first : undefined;
  return (LAYERED as readonly string[]).includes(first) || first === 'test' || first === 'bench' ? (first as Area) : undefined;
}

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    // dist/ folders are build output (git-ignored: the server's and the client package's), not sources.
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
    const full = join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(full, out);
    else if (/\.[cm]?ts$/.test(entry.name)) out.push(relative(ROOT, full).split(sep).join('/'));
  }
  return out;
}

function packageName(specifier: string): string {
  if (specifier.startsWith('node:')) return specifier;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

interface Graph {
  files: string[];
  edges: Array<{ from: string; to: string; typeOnly: boolean; specifier: string }>;
  packages: Array<{ from: string; name: string }>;
  problems: string[];
}

function buildGraph(): Graph {
  const files = sourceFiles(ROOT).sort();
  const graph: Graph = { files, edges: [], packages: [], problems: [] };
  for (const from of files) {
    const source = readFileSync(join(ROOT, from), 'utf8');
    if (/^\s*export\s+default\b/m.test(source) || /\bexport\s*\{[^}]*\bas\s+default\b/.test(source)) {
      graph.problems.push(`${from}: export default (use named exports)`);
    }
    for (const { specifier, typeOnly } of extractImports(source)) {
      if (!specifier.startsWith('.')) {
        graph.packages.push({ from, name: packageName(specifier) });
        continue;
      }
      const target = relative(ROOT, resolve(ROOT, dirname(from), specifier))
        .split(sep)
        .join('/');
      if (!specifier.endsWith('.ts')) graph.problems.push(`${from}: import '${specifier}' must spell out the .ts file`);
      else if (!existsSync(join(ROOT, target))) graph.problems.push(`${from}: import '${specifier}' does not exist`);
      graph.edges.push({ from, to: target, typeOnly, specifier });
    }
  }
  return graph;
}

describe('import graph', () => {
  const graph = buildGraph();

  it('the extractor sees multi-line, type-only, re-export, side-effect and dynamic imports', () => {
    const source = [
      "import {\n  a,\n  b,\n} from './multi.ts';",
      "import type { T } from '../types.ts';",
      "export { x } from './re.ts';",
      "export type { Y } from './re-type.ts';",
      "import './side.ts';",
      // Split so that this file's own text holds no dynamic import for the walker to follow.
      'const m = await imp' + "ort('./dyn.ts');",
      'const s = \'not an import from "./nope.ts"\';',
    ].join('\n');
    assert.deepEqual(
      extractImports(source).sort((p, q) => p.specifier.localeCompare(q.specifier)),
      [
        { specifier: '../types.ts', typeOnly: true },
        { specifier: './dyn.ts', typeOnly: false },
        { specifier: './multi.ts', typeOnly: false },
        { specifier: './re-type.ts', typeOnly: true },
        { specifier: './re.ts', typeOnly: false },
        { specifier: './side.ts', typeOnly: false },
      ],
    );
  });

  it('walks the real tree', () => {
    assert.ok(graph.files.length > 50, `only ${graph.files.length} files found`);
    assert.ok(
      graph.edges.some((e) => e.from === 'app.ts' && e.to.startsWith('http/')),
      'app.ts -> http/ edge seen',
    );
    assert.ok(
      graph.edges.some((e) => e.from === 'main.ts' && e.to === 'app.ts'),
      'main.ts dynamic import of app.ts seen',
    );
  });

  it('every file lives in a known area of the layout', () => {
    const unknown = graph.files.filter((f) => areaOf(f) === undefined);
    assert.deepEqual(unknown, [], 'new top-level folders need a row in MAY_IMPORT (ARCHITECTURE.md "Layout")');
  });

  it('imports point one way: http → actors → (machines, storage, providers, tools) → contracts', () => {
    const used = new Set<number>();
    const violations: string[] = [];
    for (const edge of graph.edges) {
      const from = areaOf(edge.from);
      const to = areaOf(edge.to);
      if (from === undefined || FREE.has(from)) continue;
      if (to !== undefined && MAY_IMPORT[from as keyof typeof MAY_IMPORT].includes(to)) continue;
      const allowance = ALLOWANCES.findIndex((a) => a.from.test(edge.from) && a.to === edge.to);
      if (allowance >= 0 && edge.typeOnly) {
        used.add(allowance);
        continue;
      }
      violations.push(`${edge.from} -> ${edge.to}${edge.typeOnly ? ' (type-only)' : ''}`);
    }
    assert.deepEqual(violations, []);
    const stale = ALLOWANCES.filter((_, i) => !used.has(i)).map((a) => `${a.from} -> ${a.to}`);
    assert.deepEqual(stale, [], 'an allowance no longer needed must be removed');
  });

  it('machines/ imports only xstate and contracts/; contracts/ only typebox', () => {
    const violations = graph.packages
      .filter((p) => {
        const allowed = PACKAGES[areaOf(p.from)!];
        return allowed !== undefined && !allowed.includes(p.name);
      })
      .map((p) => `${p.from} imports ${p.name}`);
    assert.deepEqual(violations, []);
  });

  it('client/ imports contracts/ type-only, so the client loads nothing of the server at run time', () => {
    const runtime = graph.edges.filter((e) => areaOf(e.from) === 'client' && areaOf(e.to) === 'contracts' && !e.typeOnly);
    assert.deepEqual(
      runtime.map((e) => `${e.from} -> ${e.to}`),
      [],
    );
    assert.ok(
      graph.edges.some((e) => areaOf(e.from) === 'client' && areaOf(e.to) === 'contracts'),
      'client types come from contracts/',
    );
  });

  it('only app.ts, main.ts, cli/, tests and bench import http/, config/ or app.ts', () => {
    const composers = new Set<Area>(['app.ts', 'main.ts', 'cli', 'test', 'bench']);
    const violations = graph.edges
      .filter((e) => {
        const from = areaOf(e.from);
        const to = areaOf(e.to);
        if (from === undefined || composers.has(from) || from === to) return false;
        return to === 'http' || to === 'config' || to === 'app.ts' || to === 'main.ts';
      })
      .map((e) => `${e.from} -> ${e.to}`);
    assert.deepEqual(violations, []);
  });

  it('has no export default, no index.ts barrels, and relative imports name existing .ts files', () => {
    const barrels = graph.files.filter((f) => /(^|\/)index\.[cm]?ts$/.test(f));
    assert.deepEqual(barrels, [], 'no index.ts barrels (import from the defining file)');
    assert.deepEqual(graph.problems, []);
  });
});
