// providers/wire-call.ts: the streaming HTTP call shared by the four wire adapters. It POSTs JSON
// with undici (one keep-alive Agent per adapter), feeds the SSE body to eventsource-parser as chunks
// arrive, hands each event to the adapter's decoder, and wraps the attempt in withRetry.
import { Agent, request, type buildConnector } from 'undici';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { Logger } from 'pino';
import type { ServiceError } from '../contracts/errors.ts';
import type { ProviderCredential, RetryNotice, StreamEvent } from './provider.ts';
import type { ProviderName } from '../contracts/session.ts';
import { afterStreamFailure, httpFailure, thrownFailure } from './errors.ts';
import { withRetry, type RetryPolicy, type SleepFn } from './retry.ts';
import { modelCallTimeoutMs } from './catalog.ts';

/** Options every wire adapter takes. Credentials and URLs are explicit; registry.ts reads env/config. */
export interface AdapterOptions {
  apiKey?: string;
  /** Variable named in the "is not set" error when apiKey is missing. */
  apiKeyEnv?: string;
  baseUrl?: string;
  /** How apiKey is sent (default native: the vendor's own key header). Set by auth bindings. */
  authStyle?: ProviderCredential['style'];
  logger?: Logger;
  retry?: Partial<RetryPolicy>;
  /** Whole-call deadline per attempt; default: the catalog's per-model timeout (600 s otherwise). */
  callTimeoutMs?: number;
  /** Longest silence allowed between response chunks (undici bodyTimeout); default 300 s. */
  inactivityTimeoutMs?: number;
  /** Injected for tests (instant sleep, fixed jitter). */
  sleep?: SleepFn;
  random?: () => number;
  /** Opens the agent's connections (app.ts passes the outbound guard's connector); default: undici's own. */
  connect?: buildConnector.connector;
}

/** Decodes one attempt's SSE events. Throws a classified ServiceError for vendor errors or bad JSON. */
export interface StreamDecoder<T> {
  onEvent(ev: EventSourceMessage): void;
  /** The reply once the body ended; throws when the vendor's terminal event never came. */
  finish(): T;
}

interface WireRequest<T> {
  model: string;
  url: string;
  headers: Record<string, string>;
  /** The JSON body: a value to serialise, or its JSON text already built (call() sends it as UTF-8 bytes). */
  body: unknown;
  signal: AbortSignal;
  onEvent: (e: StreamEvent) => void;
  onRetry?: (n: RetryNotice) => void;
  /** Builds a fresh decoder for each attempt; `emit` forwards normalised events to onEvent. */
  decoder: (emit: (e: StreamEvent) => void) => StreamDecoder<T>;
  /** Lets an adapter reinterpret an error status from its body (e.g. Gemini's 400 API_KEY_INVALID). */
  mapStatus?: (status: number, bodyText: string) => number;
}

export interface WireCaller {
  call<T>(w: WireRequest<T>): Promise<T>;
  close(): Promise<void>;
}

const DEFAULT_INACTIVITY_MS = 300_000;

/**
 * Long call deadlines (minutes) share one coarse sweep instead of a timer per call: they fire up to
 * COARSE_MS late. Short ones (tests, tight configs) keep their own precise timer.
 */
const COARSE_MS = 1000;
const COARSE_ABOVE_MS = 10_000;
const coarse = new Set<{ at: number; fire(): void }>();
let coarseSweep: ReturnType<typeof setInterval> | null = null;

/** Calls `fire` after `ms` unless the returned cancel runs first. */
function deadline(ms: number, fire: () => void): () => void {
  if (ms <= COARSE_ABOVE_MS) {
    const timer = setTimeout(fire, ms);
    return () => clearTimeout(timer);
  }
  const d = { at: performance.now() + ms, fire };
  coarse.add(d);
  if (!coarseSweep) {
    coarseSweep = setInterval(() => {
      const now = performance.now();
      for (const x of coarse) {
        if (x.at > now) continue;
        coarse.delete(x);
        x.fire();
      }
      if (coarse.size === 0 && coarseSweep) {
        clearInterval(coarseSweep);
        coarseSweep = null;
      }
    }, COARSE_MS);
    coarseSweep.unref?.();
  }
  return () => {
    coarse.delete(d);
  };
}
const MAX_ERROR_BODY = 64 * 1024;

/**
 * Joins a base URL and an API path without doubling the version segment: trailing slashes are
 * dropped, and when the base already ends in `/<version>` (e.g. Ollama's `http://host:11434/v1`)
 * only `path` is appended; otherwise `/<version>/<path>` is.
 */
export function endpointUrl(base: string, version: string, path: string): string {
  const trimmed = base.replace(/\/+$/, '');
  return trimmed.endsWith(`/${version}`) ? `${trimmed}/${path}` : `${trimmed}/${version}/${path}`;
}

/** The credential headers of a call: the vendor's `native` headers, or the bearer / Azure form an auth binding asks for. */
export function authHeaders(opts: AdapterOptions, key: string, native: Record<string, string>): Record<string, string> {
  if (opts.authStyle === 'bearer') return { authorization: `Bearer ${key}` };
  if (opts.authStyle === 'azure') return { 'api-key': key };
  return native;
}

/** Creates the shared caller for one adapter instance (owns one undici Agent). */
export function createWireCaller(provider: ProviderName, opts: AdapterOptions): WireCaller {
  const agent = new Agent({ keepAliveTimeout: 30_000, ...(opts.connect ? { connect: opts.connect } : {}) });
  const inactivity = opts.inactivityTimeoutMs ?? DEFAULT_INACTIVITY_MS;
  const log = opts.logger?.child({ component: 'provider', provider });

  async function attemptOnce<T>(w: WireRequest<T>, streamed: { any: boolean }): Promise<T> {
    // One controller per attempt, aborted by the caller's signal or by the call deadline; the timer
    // and listener are removed when the attempt ends (no per-call timers left behind).
    const ctl = new AbortController();
    let callTimedOut = false;
    const onAbort = (): void => ctl.abort(w.signal.reason);
    if (w.signal.aborted) onAbort();
    else w.signal.addEventListener('abort', onAbort, { once: true });
    const cancel = deadline(opts.callTimeoutMs ?? modelCallTimeoutMs(w.model), () => {
      callTimedOut = true;
      ctl.abort();
    });
    try {
      return await streamOnce(w, streamed, ctl.signal, () => callTimedOut);
    } finally {
      cancel();
      w.signal.removeEventListener('abort', onAbort);
    }
  }

  async function streamOnce<T>(w: WireRequest<T>, streamed: { any: boolean }, signal: AbortSignal, timedOut: () => boolean): Promise<T> {
    const classify = (err: unknown): ServiceError =>
      thrownFailure(provider, w.model, err, { cancelled: w.signal.aborted, callTimedOut: timedOut() });
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(w.url, {
        dispatcher: agent,
        method: 'POST',
        signal,
        headersTimeout: inactivity,
        bodyTimeout: inactivity,
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...w.headers },
        body: w.body as Buffer,
      });
    } catch (err) {
      throw classify(err);
    }
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const text = await readCapped(res.body).catch(() => '');
      const status = w.mapStatus ? w.mapStatus(res.statusCode, text) : res.statusCode;
      throw httpFailure(provider, w.model, status, res.headers, text);
    }
    const decoder = w.decoder((e) => {
      streamed.any = true;
      w.onEvent(e);
    });
    let failure: unknown;
    const parser = createParser({
      onEvent(ev) {
        if (failure !== undefined) return;
        try {
          decoder.onEvent(ev);
        } catch (err) {
          failure = err;
        }
      },
    });
    const text = new TextDecoder();
    const body = res.body;
    try {
      // 'data' events rather than an async iterator: no promise per chunk on the hot path.
      await new Promise<void>((resolve, reject) => {
        body.on('data', (chunk: Buffer) => {
          if (failure !== undefined) return;
          parser.feed(text.decode(chunk, { stream: true }));
          if (failure !== undefined) reject(failure);
        });
        body.once('end', resolve);
        body.once('error', reject);
      });
      parser.feed(text.decode());
      if (failure !== undefined) throw failure;
      return decoder.finish();
    } catch (err) {
      res.body.destroy();
      throw classify(err);
    }
  }

  return {
    async call<T>(wire: WireRequest<T>): Promise<T> {
      // The body as the bytes undici sends (and keeps for the call's lifetime): encoded once for every
      // attempt, and the JSON text is not kept beside them while the model streams (one copy per call in
      // flight, not two: a request body is several KB).
      const w = { ...wire, body: Buffer.from(typeof wire.body === 'string' ? wire.body : JSON.stringify(wire.body)) };
      // Once a delta reached onEvent, a failure is final: a retry would stream it twice.
      const streamed = { any: false };
      return withRetry(
        async () => {
          try {
            return await attemptOnce(w, streamed);
          } catch (err) {
            throw streamed.any ? afterStreamFailure(err as ServiceError) : err;
          }
        },
        {
          provider,
          model: w.model,
          signal: w.signal,
          policy: opts.retry,
          onRetry: w.onRetry,
          sleep: opts.sleep,
          random: opts.random,
          logger: log,
        },
      );
    },
    close: () => agent.close(),
  };
}

async function readCapped(body: AsyncIterable<unknown> & { destroy(): unknown }): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buf = chunk as Buffer;
    parts.push(buf);
    size += buf.length;
    if (size >= MAX_ERROR_BODY) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(parts).toString('utf8');
}
