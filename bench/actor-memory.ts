// bench/actor-memory.ts: heap cost of the parts of a resident session, measured apart from the server:
// a started XState actor of machines/session-machine.ts restored from a persisted snapshot (what every
// resident SessionActor holds), and the decoded session record alone. Run in its own process with
// --expose-gc by bench/scenarios/memory.ts; prints one JSON line.
import { randomUUID } from 'node:crypto';
import { createActor } from 'xstate';
import { sessionMachine } from '../machines/session-machine.ts';

const gc = (globalThis as { gc?: () => void }).gc;

function heap(): number {
  for (let i = 0; i < 4; i++) gc?.();
  return process.memoryUsage().heapUsed;
}

function perItem<T>(n: number, make: (i: number) => T): { bytes: number; keep: T[] } {
  const keep: T[] = [];
  const h0 = heap();
  for (let i = 0; i < n; i++) keep.push(make(i));
  const h1 = heap();
  return { bytes: (h1 - h0) / n, keep };
}

const n = Number(process.argv[2] ?? 10_000);
const record = JSON.parse(process.argv[3] ?? '{}') as { state?: { machine?: unknown } };
const snapshot = record.state?.machine as Parameters<typeof createActor<typeof sessionMachine>>[1] extends infer O
  ? O extends { snapshot?: infer S }
    ? S
    : never
  : never;

const ids = Array.from({ length: n }, () => randomUUID());
const actors = perItem(n, (i) => {
  const a = createActor(sessionMachine, { input: { sessionId: ids[i] }, ...(snapshot ? { snapshot } : {}) });
  a.subscribe({ error: () => {} });
  a.start();
  return a;
});
const records = perItem(n, () => JSON.parse(JSON.stringify(record)) as unknown);
process.stdout.write(`${JSON.stringify({ n, actorBytes: actors.bytes, recordBytes: records.bytes, gc: Boolean(gc) })}\n`);
void actors.keep.length;
void records.keep.length;
