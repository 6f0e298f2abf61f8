// bench/turn-files.ts: how many project files one POST /sessions runs, measured with V8 precise coverage
// after warm-up (issue 38). Starts the app in-process (createApp, lmdb realm in a temp dir, scripted
// provider), runs --warmup create+turn requests, starts precise coverage (call counts), runs one more,
// and lists the project files (outside node_modules) with any function called during that request.
//   npx tsx bench/turn-files.ts [--warmup 50] [--list]
import { mkdtemp, rm } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { createApp } from '../app.ts';
import { createScriptedProvider } from '../providers/scripted.ts';
import { parseProgramLine } from '../config/cli-args.ts';

const { values } = parseProgramLine(
  'bench/turn-files.ts',
  { warmup: { type: 'string', default: '50' }, list: { type: 'boolean', default: false }, functions: { type: 'boolean', default: false } },
  { positionals: false },
);
const root = fileURLToPath(new URL('..', import.meta.url));
const dir = await mkdtemp(join(tmpdir(), 'warren-turn-files-'));
const provider = createScriptedProvider([]);
const app = await createApp({
  host: '127.0.0.1',
  port: 0,
  stateRoot: dir,
  contextRoot: dir,
  realm: 'files',
  logger: pino({ level: 'silent' }),
  providerOverrides: { openai: provider, anthropic: provider, gemini: provider, scripted: provider },
});
const create = async (): Promise<void> => {
  const res = await fetch(`${app.url}/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'hi', provider: 'scripted' }),
  });
  if (res.status !== 200) throw new Error(`POST /sessions → ${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
};
try {
  for (let i = 0; i < Number(values.warmup); i++) await create();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  await session.post('Profiler.takePreciseCoverage'); // reset counts
  await create();
  // Let the turn's after-reply work (deferred writes, sweeps) run inside the window too.
  await new Promise((r) => setTimeout(r, 100));
  const { result } = await session.post('Profiler.takePreciseCoverage');
  await session.post('Profiler.stopPreciseCoverage');
  session.disconnect();
  const files = new Set<string>();
  const functions = new Map<string, string[]>();
  for (const script of result) {
    if (!script.url.startsWith('file://')) continue;
    const path = relative(root, fileURLToPath(script.url));
    if (path.startsWith('..') || path.includes('node_modules') || path.startsWith('bench/')) continue;
    const ran = script.functions.filter((f) => f.ranges[0].count > 0);
    if (ran.length === 0) continue;
    files.add(path);
    functions.set(
      path,
      ran.map((f) => f.functionName || '(anonymous)'),
    );
  }
  process.stdout.write(`project files run by one POST /sessions after ${values.warmup} warm-up requests: ${files.size}\n`);
  if (values.list || values.functions)
    for (const f of [...files].sort()) {
      const names = values.functions ? `: ${[...new Set(functions.get(f))].join(', ')}` : '';
      process.stdout.write(`  ${f}${names}\n`);
    }
} finally {
  await app.close();
  await rm(dir, { recursive: true, force: true });
}
