// test/helpers/gates.ts: deterministic ordering for tests. A deferred is a promise resolved by hand; a
// gated script holds one provider call (by call number) until the test opens its gate. A test awaiting a call
// that never comes fails after a deadline (`entered` is bounded) instead of hanging.
import type { ProviderRequest } from '../../providers/provider.ts';
import { echoReply, type ScriptedReply } from '../../providers/scripted.ts';
import { WAIT_MS } from './wait.ts';

export interface Deferred<T = void> {
  promise: Promise<T>;
  resolve(value: T): void;
}

/**
 * A promise resolved by hand. Given `what`, it is bounded: it rejects `timed out after N ms waiting for <what>`
 * when not resolved in `timeoutMs`, so a test awaiting a gate that never opens fails instead of hanging (the
 * timer does not keep the process alive, and a rejection nobody awaits is ignored).
 */
export function deferred<T = void>(what?: string, timeoutMs = WAIT_MS): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  if (what === undefined) return { promise, resolve };
  const timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
  timer.unref();
  promise.catch(() => undefined);
  return {
    promise,
    resolve(value: T) {
      clearTimeout(timer);
      resolve(value);
    },
  };
}

/**
 * A script whose call number `at` signals `entered` and then waits for `open` before replying
 * `gatedText`; every other call answers `other(req)` (an echo by default).
 */
export function gatedAt(at: number, gatedText = 'gated', other: (req: ProviderRequest) => ScriptedReply = echoReply) {
  const entered = deferred(`provider call ${at} to reach its gate`);
  const open = deferred();
  const script = (req: ProviderRequest, i: number): ScriptedReply => {
    if (i !== at) return other(req);
    entered.resolve();
    return { text: gatedText, waitFor: open.promise };
  };
  return { entered, open, script };
}
