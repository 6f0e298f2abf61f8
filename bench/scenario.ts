// bench/scenario.ts: what every scenario under bench/scenarios/ receives (BenchContext) and returns
// (ScenarioResult), plus withServer, which gives a step a fresh temp state root and server process.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FakeLlm } from './fake-llm.ts';
import { startServer, type ServerHandle, type ServerOptions } from './server-process.ts';

export interface BenchContext {
  quick: boolean;
  /** Measured window of one step (ms). */
  durationMs: number;
  /** Warm-up before each measured step on a fresh server (ms). */
  warmupMs: number;
  /** Closed-loop concurrencies of the create+turn scenario. */
  concurrencies: number[];
  /** taskset pinning active (server on core 0, this process on core 1). */
  pin: boolean;
  /** Provider wire the turn scenarios use. */
  provider: 'self_hosted' | 'anthropic';
  fake: FakeLlm;
  /** Node flags added to every server (e.g. --cpu-prof). */
  nodeFlags: string[];
  /** Keep temp state roots (for inspection). */
  keep: boolean;
  /** Sizes of the memory scenario. */
  residentSizes: number[];
  storedSizes: number[];
  sseSubscribers: number;
  log(line: string): void;
}

export type Cell = string | number | boolean | null;
export type Row = Record<string, Cell>;

/** A target of the issue, as measured (never asserted). */
export interface TargetCheck {
  target: string;
  /** Human-readable bound, e.g. '<= 0.5 ms'. */
  bound: string;
  measured: number | null;
  unit: string;
  met: boolean | null;
  where: string;
}

export interface ScenarioResult {
  id: string;
  title: string;
  /** Column order of the table (keys of the rows). */
  columns: string[];
  rows: Row[];
  notes: string[];
  targets: TargetCheck[];
  /** Further tables (e.g. a breakdown), rendered after the main one. */
  extraTables?: Array<{ title: string; columns: string[]; rows: Row[] }>;
}

export interface Scenario {
  id: string;
  title: string;
  run(ctx: BenchContext): Promise<ScenarioResult>;
}

/** A fresh temp state root, removed afterwards unless ctx.keep. */
export async function withTempRoot<T>(ctx: BenchContext, fn: (root: string) => Promise<T>): Promise<T> {
  const root = await mkdtemp(join(tmpdir(), 'warren-bench-'));
  try {
    return await fn(root);
  } finally {
    if (ctx.keep) ctx.log(`  kept state root ${root}`);
    else await rm(root, { recursive: true, force: true });
  }
}

/** Runs `fn` against a fresh server on a fresh state root; the server is stopped afterwards. */
export async function withServer<T>(
  ctx: BenchContext,
  opts: Partial<Omit<ServerOptions, 'stateRoot' | 'llmUrl' | 'pin'>>,
  fn: (server: ServerHandle, root: string) => Promise<T>,
): Promise<T> {
  return withTempRoot(ctx, async (root) => {
    const server = await startServer({ stateRoot: root, llmUrl: ctx.fake.url, pin: ctx.pin, nodeFlags: ctx.nodeFlags, ...opts });
    try {
      return await fn(server, root);
    } finally {
      await server.stop();
    }
  });
}

/** target check helper: `measured <= bound` (or >= when `atLeast`). */
export function check(target: string, measured: number | null, limit: number, unit: string, where: string, atLeast = false): TargetCheck {
  const ok = measured === null || !Number.isFinite(measured) ? null : atLeast ? measured >= limit : measured <= limit;
  return { target, bound: `${atLeast ? '>=' : '<='} ${limit.toLocaleString('en-US')} ${unit}`, measured, unit, met: ok, where };
}
