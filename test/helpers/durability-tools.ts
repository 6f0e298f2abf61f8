// test/helpers/durability-tools.ts: building blocks of the kill -9 durability test: a seeded PRNG,
// scripted replies, the bookkeeping types, a raw JSON request helper and the history parser.
import { Compile } from 'typebox/compile';
import { Message } from '../../contracts/transcript.ts';

const checkMessage = Compile(Message);
const REQUEST_TIMEOUT_MS = 15_000;

/**
 * The seeds of a seeded kill -9 campaign: the `fixed` set (the same kill plans every run, so a regression they
 * once caught is caught again) plus one random seed (new plans each run, so coverage grows over runs); the
 * caller logs each seed. `envName` set to a seed runs that seed alone, to reproduce a logged failure.
 */
export function killSeeds(envName: string, fixed: readonly number[]): number[] {
  const pinned = envInt(envName);
  if (pinned !== undefined) return [pinned];
  return [...fixed, (Date.now() ^ (process.pid << 8)) >>> 0];
}

export function envInt(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer (got '${raw}')`);
  return n;
}

/** mulberry32: a small seeded PRNG, so one seed replays the same script and kill plan. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

export type Rng = () => number;
export const intIn = (rng: Rng, lo: number, hi: number): number => lo + Math.floor(rng() * (hi - lo + 1));

/**
 * The `[providers.scripted]` replies: small random delays, several chunks, and now and then a tool call
 * (task_create writes a record to the store mid-turn; datetime does not), so kills land in every phase.
 */
export function scriptReplies(rng: Rng, count: number): Array<Record<string, unknown>> {
  const replies: Array<Record<string, unknown>> = [];
  for (let i = 0; i < count; i++) {
    const chunks = Array.from({ length: intIn(rng, 1, 5) }, (_, c) => `r${i}c${c}-${Math.floor(rng() * 1e6).toString(36)} `);
    const reply: Record<string, unknown> = {
      chunks,
      delay_ms: rng() < 0.25 ? 0 : intIn(rng, 1, 25),
      usage: { input_tokens: intIn(rng, 1, 50), output_tokens: intIn(rng, 1, 20) },
    };
    const roll = rng();
    if (roll < 0.12) reply.tool_calls = [{ name: 'task_create', args: { subject: `t${i}`, description: 'kill test' } }];
    else if (roll < 0.2) reply.tool_calls = [{ name: 'datetime', args: {} }];
    replies.push(reply);
  }
  return replies;
}

// ---- the client's record of what it asked for and what it was told ----

/** acked: HTTP 200 came back. unknown: the server died with the request open. committed/lost: an unknown turn, settled by a restart. */
export type Outcome = 'acked' | 'unknown' | 'committed' | 'lost';

export interface TurnRec {
  prompt: string;
  outcome: Outcome;
  /** The reply text (acked) or the text found in history (committed). */
  text?: string;
  iteration: number;
}

export interface SessRec {
  /** Client key, also the session's `dk` label: finds a session whose create reply never came back. */
  key: string;
  id?: string;
  turns: TurnRec[];
  busy: boolean;
  held: boolean;
  /** Its create never committed and it was never seen: out of the game. */
  gone: boolean;
  touched: boolean;
}

export type Mode = 'mid' | 'phase' | 'between';

export interface Stats {
  kills: Record<Mode, number>;
  ackedTurns: number;
  settledCommitted: number;
  settledLost: number;
  holds: number;
  /** Furthest durable ledger event of each turn that was in flight at a kill (where the kill landed). */
  phases: Record<string, number>;
  probes: number;
  restartMs: number[];
}

export interface Reply {
  status: number;
  body: any;
}

export async function request(base: string, method: string, path: string, body?: unknown): Promise<Reply> {
  const res = await fetch(base + path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: kept as text for the failure message
  }
  return { status: res.status, body: parsed };
}

/** Runs `fn` over `items` with at most `limit` at a time. */
export async function forEachLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

// ---- history parsing ----

export interface HistTurn {
  prompt: string;
  text: string;
}

/** Splits history into turns; every row must be a whole, schema-valid message and every turn complete. */
export function parseHistory(rows: unknown[]): { turns: HistTurn[]; problem?: string } {
  const turns: HistTurn[] = [];
  let i = 0;
  for (const [n, row] of rows.entries()) {
    if (!checkMessage.Check(row)) return { turns, problem: `row ${n} is not a valid message: ${JSON.stringify(row)}` };
  }
  const msgs = rows as Message[];
  while (i < msgs.length && msgs[i].role === 'system') i++;
  while (i < msgs.length) {
    const user = msgs[i];
    if (
      user.role !== 'user' ||
      (user.transcript_role !== undefined && user.transcript_role !== 'conversational') ||
      typeof user.content !== 'string'
    ) {
      return { turns, problem: `row ${i} should open a turn with a user prompt, found ${JSON.stringify(user)}` };
    }
    i++;
    let text = '';
    for (;;) {
      const a = msgs[i];
      if (!a || a.role !== 'block_assistant')
        return { turns, problem: `turn '${user.content}' has no assistant row at ${i} (partial turn)` };
      i++;
      const t = a.blocks
        .filter((b) => b.block_type === 'text')
        .map((b) => (b as { data: { text: string } }).data.text)
        .join('');
      if (t) text = t;
      const calls = a.blocks.filter((b) => b.block_type === 'tool_use').map((b) => (b as { data: { id: string } }).data.id);
      if (calls.length === 0) break;
      if (a.stop_reason !== 'tool_use') return { turns, problem: `row ${i - 1}: tool calls with stop_reason ${a.stop_reason}` };
      const r = msgs[i];
      if (!r || r.role !== 'tool_results')
        return { turns, problem: `turn '${user.content}' ends after a tool call at ${i} (partial turn)` };
      const ids = r.results.map((x) => x.tool_use_id);
      if (JSON.stringify(ids) !== JSON.stringify(calls))
        return { turns, problem: `row ${i}: tool results ${ids} do not answer calls ${calls}` };
      i++;
    }
    turns.push({ prompt: user.content, text });
  }
  return { turns };
}

// ---- one campaign: start, drive, kill, restart, check; repeated ----
