// bench/resident-idle.ts: what N resident but idle sessions cost a server that does nothing else. Starts a
// bench server (bench/server-process.ts: compiled, lmdb realm, a fresh temp state root), creates N sessions
// with one turn each (32 at a time, against the loopback fake model), waits --settle-ms, then reads the
// server's CPU (utime + stime, every thread) over --window-ms of idleness. On an lmdb realm every process is
// a cluster node, so what it measures is mostly the renewal of the node's leases (one per resident session)
// and the orphan scan. --tree runs another checkout's server (its own bench/ files) for a before/after.
// Usage: npx tsx bench/resident-idle.ts [--sessions 5000] [--settle-ms 3000] [--window-ms 10000] [--tree <dir>]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseProgramLine, requirePositiveIntegers } from '../config/cli-args.ts';
import { startFakeLlm } from './fake-llm.ts';
import { WarrenClient } from './load.ts';
import type { ServerHandle, ServerOptions } from './server-process.ts';

const { values } = parseProgramLine(
  'bench/resident-idle.ts',
  {
    sessions: { type: 'string', default: '5000' },
    'settle-ms': { type: 'string', default: '3000' },
    'window-ms': { type: 'string', default: '10000' },
    tree: { type: 'string', default: '.' },
  },
  { positionals: false },
);
const sessions = Number(values.sessions);
const settleMs = Number(values['settle-ms']);
const windowMs = Number(values['window-ms']);
requirePositiveIntegers('bench/resident-idle.ts', { sessions, 'settle-ms': settleMs, 'window-ms': windowMs });
const tree = resolve(values.tree ?? '.');
const launcher = (await import(pathToFileURL(join(tree, 'bench/server-process.ts')).href)) as {
  startServer(o: ServerOptions): Promise<ServerHandle>;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fake = await startFakeLlm({ tokens: 5 });
const root = await mkdtemp(join(tmpdir(), 'warren-resident-idle-'));
const server = await launcher.startServer({ stateRoot: root, llmUrl: fake.url, pin: false });
const client = new WarrenClient(server.url, 32);
try {
  let made = 0;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (made < sessions) {
        made++;
        await client.create('hello', { provider: 'anthropic', model: 'claude-bench' });
      }
    }),
  );
  process.stderr.write(`created ${made} sessions in ${Date.now() - started} ms; idle for ${settleMs} ms, then measuring ${windowMs} ms\n`);
  await sleep(settleMs);
  const before = await server.cpuMs();
  await sleep(windowMs);
  const after = await server.cpuMs();
  const cpuMsPerSec = ((after.total - before.total) * 1000) / windowMs;
  const rss = await server.memory();
  process.stdout.write(
    `${tree}: ${made} resident idle sessions: server CPU ${cpuMsPerSec.toFixed(1)} ms per second of idleness ` +
      `(${((cpuMsPerSec * 1000) / made).toFixed(2)} µs per session per second), VmRSS ${(rss.rssBytes / 1048576).toFixed(1)} MiB\n`,
  );
} finally {
  await client.close();
  await server.stop();
  await fake.close();
  await rm(root, { recursive: true, force: true });
}
