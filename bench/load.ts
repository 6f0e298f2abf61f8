// bench/load.ts: the load generator. A closed loop (N workers, each sends its next request when the last
// one answered) over undici Pools, a small Warren client, and CPU accounting of the server process.
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import type { ServerHandle } from './server-process.ts';
import { Samples, summarize, type LatencySummary } from './stats.ts';

export interface LoopResult {
  ops: number;
  errors: number;
  elapsedMs: number;
  opsPerSec: number;
  latency: LatencySummary;
  firstError?: string;
}

/** Runs `op` from `concurrency` workers until `durationMs` passed (or `maxOps` completed). */
export async function closedLoop(
  concurrency: number,
  durationMs: number,
  op: (worker: number, i: number) => Promise<void>,
  maxOps = Number.POSITIVE_INFINITY,
): Promise<LoopResult> {
  const lat = new Samples();
  let errors = 0;
  let started = 0;
  let firstError: string | undefined;
  const t0 = performance.now();
  const end = t0 + durationMs;
  const worker = async (w: number): Promise<void> => {
    let i = 0;
    while (performance.now() < end && started < maxOps) {
      started++;
      const s = performance.now();
      try {
        await op(w, i++);
        lat.push(performance.now() - s);
      } catch (err) {
        errors++;
        firstError ??= err instanceof Error ? err.message : String(err);
        if (errors > 1000 && errors > lat.length) throw new Error(`load aborted: ${firstError}`);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
  const elapsedMs = performance.now() - t0;
  const ops = lat.length;
  return {
    ops,
    errors,
    elapsedMs,
    opsPerSec: (ops * 1000) / elapsedMs,
    latency: summarize(lat.values()),
    ...(firstError ? { firstError } : {}),
  };
}

/** A loop result plus the server's CPU time and memory over the same window. */
export interface Measured extends LoopResult {
  serverCpuMs: number;
  cpuMsPerOp: number;
  /** Kernel share of the server CPU (stime ÷ utime+stime). */
  sysShare: number;
  /** Server CPU utilisation over the window (1 = one core busy). */
  serverCpuUtil: number;
  rssMB: number;
  /** LMDB write transactions (durable commits) per op over the window; null for non-lmdb backends. */
  commitsPerOp: number | null;
}

/** Runs `loop` and reads the server's utime+stime before and after. */
export async function measured(server: ServerHandle, loop: () => Promise<LoopResult>): Promise<Measured> {
  const x0 = server.lmdbTxnId();
  const c0 = await server.cpuMs();
  const r = await loop();
  const c1 = await server.cpuMs();
  const x1 = server.lmdbTxnId();
  const mem = await server.memory();
  const serverCpuMs = c1.total - c0.total;
  return {
    ...r,
    serverCpuMs,
    sysShare: serverCpuMs ? (c1.sys - c0.sys) / serverCpuMs : Number.NaN,
    cpuMsPerOp: r.ops ? serverCpuMs / r.ops : Number.NaN,
    serverCpuUtil: serverCpuMs / r.elapsedMs,
    rssMB: mem.rssBytes / 2 ** 20,
    commitsPerOp: x0 !== null && x1 !== null && r.ops ? (x1 - x0) / r.ops : null,
  };
}

export interface TurnOptions {
  provider?: 'self_hosted' | 'anthropic';
  model?: string;
  enableBuiltins?: boolean;
  /** Sent as `output_schema` (structured-output extraction after the turn). */
  outputSchema?: unknown;
  /** Extra body fields (the floor server's `history_turns`). */
  extra?: Record<string, unknown>;
}

/** The HTTP calls the scenarios make against Warren (one keep-alive Pool). */
export class WarrenClient {
  readonly pool: Pool;

  constructor(
    readonly url: string,
    connections: number,
  ) {
    this.pool = new Pool(url, { connections, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: 120_000, bodyTimeout: 120_000 });
  }

  private async post(path: string, body: unknown): Promise<Record<string, unknown>> {
    const res = await this.pool.request({
      method: 'POST',
      path,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`POST ${path} → ${res.statusCode}: ${text.slice(0, 300)}`);
    return JSON.parse(text) as Record<string, unknown>;
  }

  /** POST /sessions: creates a session and runs its first turn; returns the session id. */
  async create(prompt: string, o: TurnOptions = {}): Promise<string> {
    const r = await this.post('/sessions', {
      prompt,
      provider: o.provider ?? 'self_hosted',
      model: o.model ?? 'bench-model',
      ...(o.enableBuiltins ? { enable_builtins: true } : {}),
      ...(o.outputSchema !== undefined ? { output_schema: o.outputSchema } : {}),
      ...o.extra,
    });
    return String(r.session_id);
  }

  /** POST /sessions/{id}/messages: one more turn. */
  async continue(sessionId: string, prompt: string): Promise<Record<string, unknown>> {
    return this.post(`/sessions/${sessionId}/messages`, { session_id: sessionId, prompt });
  }

  /** GET /sessions/{id}/status (hydrates the session actor when it is not resident). */
  async status(sessionId: string): Promise<void> {
    const res = await this.pool.request({ method: 'GET', path: `/sessions/${sessionId}/status` });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`GET status → ${res.statusCode}: ${text.slice(0, 300)}`);
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** Calls the fake LLM directly with the body Warren would send: the floor of a turn. */
export class FloorClient {
  readonly pool: Pool;
  private readonly body: string;
  private readonly path: string;

  constructor(llmUrl: string, connections: number, wire: 'chat' | 'anthropic' = 'chat') {
    this.pool = new Pool(llmUrl, { connections, pipelining: 1, keepAliveTimeout: 60_000 });
    this.body = JSON.stringify(
      wire === 'chat'
        ? {
            model: 'bench-model',
            messages: [{ role: 'user', content: 'hello' }],
            stream: true,
            stream_options: { include_usage: true },
            max_tokens: 16384,
          }
        : {
            model: 'bench-model',
            max_tokens: 16384,
            stream: true,
            messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }],
          },
    );
    this.path = wire === 'chat' ? '/v1/chat/completions' : '/v1/messages';
  }

  async call(): Promise<void> {
    const res = await this.pool.request({
      method: 'POST',
      path: this.path,
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: this.body,
    });
    await res.body.text();
    if (res.statusCode !== 200) throw new Error(`fake LLM → ${res.statusCode}`);
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
