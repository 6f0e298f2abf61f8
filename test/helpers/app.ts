// test/helpers/app.ts: starts the real server (createApp) on 127.0.0.1:0 with a temp state root and a
// scripted provider standing in for every vendor, plus small HTTP helpers.
import type { TestContext } from 'node:test';
import pino from 'pino';
import { createApp, type App, type AppOptions } from '../../app.ts';
import { createScriptedProvider, type Script, type ScriptedProvider } from '../../providers/scripted.ts';
import { writeRealmConfig } from './server-process.ts';
import { tmpDir } from './tmp-dir.ts';
import { within } from './wait.ts';

const CLOSE_TIMEOUT_MS = 15_000;

export interface TestApp extends App {
  provider: ScriptedProvider;
  stateRoot: string;
}

export interface BootOptions extends AppOptions {
  /** The state root (also the context root); the caller owns it and removes it. */
  stateRoot: string;
  /** What the scripted provider answers (it stands in for every vendor). */
  script?: Script;
  /** Written as the realm's config.toml before the app starts. */
  config?: Record<string, unknown>;
}

/**
 * Starts the real server on 127.0.0.1:0 over `stateRoot` (realm `test-realm` unless named), silent, with
 * one scripted provider standing in for every vendor (`providerOverrides: {}` keeps the vendors' own
 * adapters, for a test pointing them at a fake vendor). Every other AppOptions field (backend, transport,
 * env, clock...) passes through. The caller closes the app: startApp, or a test restarting on one root.
 */
export async function bootApp(o: BootOptions): Promise<TestApp> {
  const { script = [], config, ...opts } = o;
  const realm = opts.realm ?? 'test-realm';
  if (config) await writeRealmConfig(opts.stateRoot, realm, config);
  const provider = createScriptedProvider(script);
  const app = await createApp({
    host: '127.0.0.1',
    port: 0,
    contextRoot: opts.stateRoot,
    realm,
    logger: pino({ level: 'silent' }),
    providerOverrides: { openai: provider, anthropic: provider, gemini: provider, scripted: provider },
    ...opts,
  });
  return { ...app, provider, stateRoot: opts.stateRoot };
}

/**
 * Starts an app (bootApp); registers cleanup on `t`. `config` is written as the realm's config.toml first.
 * The state root is a fresh temp folder (removed after the test), or `opts.stateRoot` (left in place: a test
 * that starts a server twice on one root owns it).
 */
export async function startApp(
  t: TestContext,
  script: Script = [],
  opts: AppOptions & { config?: Record<string, unknown> } = {},
): Promise<TestApp> {
  const dir = opts.stateRoot === undefined ? await tmpDir('warren-it-') : undefined;
  const app = await bootApp({ ...opts, script, stateRoot: opts.stateRoot ?? dir!.path });
  t.after(async () => {
    // Bounded: a server whose close hangs (a turn that never ends) fails the test here instead of hanging it.
    try {
      await within('the test app to close', app.close(), CLOSE_TIMEOUT_MS);
    } finally {
      await dir?.cleanup();
    }
  });
  return app;
}

export interface ClusterNodeOptions extends AppOptions {
  script?: Script;
  /** `[cluster]` settings over the test default (lease_ms 1500). */
  cluster?: Record<string, unknown>;
  /** Other realm config sections. */
  config?: Record<string, unknown>;
}

/** One node of a cluster: an app on the postgres realm at `url` (several nodes share one database). */
export function startClusterNode(t: TestContext, url: string, o: ClusterNodeOptions = {}): Promise<TestApp> {
  const { script = [], cluster, config, ...opts } = o;
  return startApp(t, script, {
    ...opts,
    realmBackend: 'postgres',
    env: { ...process.env, WARREN_DATABASE_URL: url },
    config: { ...config, cluster: { lease_ms: 1500, ...cluster } },
  });
}

export interface JsonReply {
  status: number;
  headers: Headers;
  body: any;
}

/** How long `call` waits for a whole answer (longer than any turn a test runs; far below the per-test timeout). */
export const CALL_TIMEOUT_MS = 20_000;

/** One JSON request (bounded by CALL_TIMEOUT_MS). */
export async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<JsonReply> {
  // Bounded: a request the server never answers fails the test naming the request, not the runner's timeout.
  const signal = AbortSignal.timeout(CALL_TIMEOUT_MS);
  const what = `${method} ${path} to answer`;
  const fail = (err: unknown): never => {
    if (signal.aborted) throw new Error(`timed out after ${CALL_TIMEOUT_MS} ms waiting for ${what}`);
    throw err;
  };
  const send = () =>
    fetch(base + path, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      signal,
    });
  // A GET sent on a pooled keep-alive connection the server closed as idle at that moment fails with
  // "other side closed" before any answer (likelier when a loaded machine delays the client's own
  // keep-alive expiry); like HTTP clients do, an idempotent request is sent once more on a new connection.
  const res = await send()
    .catch((err: unknown) => {
      if (
        (method === 'GET' || method === 'HEAD') &&
        !signal.aborted &&
        (err as { cause?: { code?: string } }).cause?.code === 'UND_ERR_SOCKET'
      )
        return send();
      throw err;
    })
    .catch(fail);
  const text = await res.text().catch(fail);
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // plain text body
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/** Creates a session (asserting 200) and returns its id. */
export async function createSession(base: string, body: Record<string, unknown> = { prompt: 'hi' }): Promise<string> {
  const res = await call(base, 'POST', '/sessions', body);
  if (res.status !== 200) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.session_id;
}
