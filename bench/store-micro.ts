// bench/store-micro.ts: store-only micro-benchmark of the turn write path (no HTTP, no actors).
// Runs turn-shaped commit pairs from several sessions at once and reports CPU µs per turn and commits/s.
// Usage: tsx bench/store-micro.ts [--backend lmdb|jsonl|memory] [--turns 5000] [--sessions 10] [--runs 3]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Message } from '../contracts/transcript.ts';
import { openJsonlStore } from '../storage/jsonl-store.ts';
import { openLmdbStore } from '../storage/lmdb-store.ts';
import { createMemoryStore } from '../storage/memory-store.ts';
import type { LedgerEntry, SessionRecord, Store } from '../storage/store.ts';
import { parseProgramLine } from '../config/cli-args.ts';

const { values: args } = parseProgramLine(
  'bench/store-micro.ts',
  {
    backend: { type: 'string', default: 'lmdb' },
    turns: { type: 'string', default: '5000' },
    sessions: { type: 'string', default: '10' },
    runs: { type: 'string', default: '3' },
    tokens: { type: 'string', default: '8' },
  },
  { positionals: false },
);
const backend = args.backend as 'lmdb' | 'jsonl' | 'memory';
const TURNS = Number(args.turns);
const SESSIONS = Number(args.sessions);
const RUNS = Number(args.runs);
const TOKENS = Number(args.tokens);

const SYSTEM_PROMPT = 'You are a careful assistant. '.repeat(12);

/** A session record shaped like the actor's: settings, pending input and a persisted machine snapshot. */
function record(id: string, turn: number, now: number, pending: boolean): SessionRecord {
  return {
    v: 2,
    session_id: id,
    created_at_ms: 1_700_000_000_000,
    updated_at_ms: now,
    archived: false,
    labels: { team: 'bench', env: 'micro' },
    message_count: turn * 2,
    total_tokens: turn * 40,
    state: {
      settings: {
        provider: 'self_hosted',
        model: 'fake-model',
        system_prompt: SYSTEM_PROMPT,
        max_tokens: 1024,
        temperature: 0.2,
        tools: [],
      },
      usage: { input_tokens: turn * 30, output_tokens: turn * 10 },
      ...(pending ? { pending: { request_id: `req-${id}-${turn}`, kind: 'continue', input: 'hello there, how are you?' } } : {}),
      machine: {
        status: 'active',
        value: pending ? 'busy' : 'idle',
        historyValue: {},
        context: { generation: turn, turnCount: turn, currentRequestId: null },
        children: {},
      },
    },
  };
}

function rows(turn: number): Message[] {
  return [
    { role: 'user', content: `hello there, how are you? (${turn})`, created_at: '2026-11-23T01:31:36.591Z' },
    {
      role: 'block_assistant',
      blocks: [{ block_type: 'text', data: { text: ' tok'.repeat(TOKENS) } }],
      stop_reason: 'end_turn',
      created_at: '2026-11-23T01:31:36.592Z',
    },
  ];
}

function entry(seq: number, kind: string, payload: unknown): LedgerEntry {
  return { seq, kind, timestamp_ms: 1_700_000_000_000 + seq, payload };
}

/** One session's turns, each two commits like the actor's: pending input + start events, then rows + record + the rest. */
async function runSession(store: Store, id: string, turns: number): Promise<void> {
  let seq = 0;
  for (let t = 0; t < turns; t++) {
    await store.commit([
      { op: 'putSession', session: record(id, t, 1_700_000_000_000 + t, true) },
      {
        op: 'appendLedger',
        sessionId: id,
        entries: [entry(++seq, 'run_started', { request_id: `req-${id}-${t}` }), entry(++seq, 'turn_started', { turn_number: t + 1 })],
      },
    ]);
    const done: LedgerEntry[] = [];
    for (let k = 0; k < TOKENS; k++) done.push(entry(++seq, 'text_delta', { delta: ' tok' }));
    done.push(entry(++seq, 'text_complete', { content: ' tok'.repeat(TOKENS) }));
    done.push(entry(++seq, 'turn_completed', { stop_reason: 'end_turn', usage: { input_tokens: 30, output_tokens: 10 } }));
    done.push(entry(++seq, 'run_completed', { request_id: `req-${id}-${t}` }));
    await store.commit([
      { op: 'putRows', sessionId: id, fromIndex: t * 2, rows: rows(t) },
      { op: 'putSession', session: record(id, t + 1, 1_700_000_000_001 + t, false) },
      { op: 'appendLedger', sessionId: id, entries: done },
    ]);
  }
}

async function open(dir: string): Promise<Store> {
  if (backend === 'lmdb') return openLmdbStore(dir);
  if (backend === 'jsonl') return openJsonlStore(dir);
  return createMemoryStore();
}

async function once(run: number): Promise<{ cpuUsPerTurn: number; userUs: number; sysUs: number; commitsPerS: number; turnsPerS: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'warren-store-micro-'));
  const store = await open(dir);
  try {
    const perSession = Math.ceil(TURNS / SESSIONS);
    // Warm-up on other session ids so the JIT and the lmdb maps are hot before measuring.
    await Promise.all(Array.from({ length: SESSIONS }, (_, i) => runSession(store, `warm-${run}-${i}`, 50)));
    const cpu0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    await Promise.all(Array.from({ length: SESSIONS }, (_, i) => runSession(store, `s-${run}-${i}`, perSession)));
    const wallS = Number(process.hrtime.bigint() - t0) / 1e9;
    const cpu = process.cpuUsage(cpu0);
    const turns = perSession * SESSIONS;
    return {
      cpuUsPerTurn: (cpu.user + cpu.system) / turns,
      userUs: cpu.user / turns,
      sysUs: cpu.system / turns,
      commitsPerS: (2 * turns) / wallS,
      turnsPerS: turns / wallS,
    };
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

const results = [];
for (let r = 0; r < RUNS; r++) results.push(await once(r));
const fmt = (n: number): string => n.toFixed(1);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const [i, r] of results.entries()) {
  process.stdout.write(
    `run ${i + 1}: ${fmt(r.cpuUsPerTurn)} CPU µs/turn (user ${fmt(r.userUs)}, sys ${fmt(r.sysUs)}), ${Math.round(r.commitsPerS)} commits/s, ${Math.round(r.turnsPerS)} turns/s\n`,
  );
}
process.stdout.write(
  `${backend}, ${TURNS} turns from ${SESSIONS} sessions, median of ${RUNS}: ${fmt(median(results.map((r) => r.cpuUsPerTurn)))} CPU µs/turn, ` +
    `${Math.round(median(results.map((r) => r.commitsPerS)))} commits/s\n`,
);
