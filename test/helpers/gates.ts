// test/helpers/gates.ts: deterministic ordering for tests. A deferred is a promise resolved by hand; a
// gated script holds one provider call (by call number) until the test opens its gate.
import type { ProviderRequest } from '../../providers/provider.ts';
import { echoReply, type ScriptedReply } from '../../providers/scripted.ts';

export interface Deferred<T = void> {
  promise: Promise<T>;
  resolve(value: T): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * A script whose call number `at` signals `entered` and then waits for `open` before replying
 * `gatedText`; every other call answers `other(req)` (an echo by default).
 */
export function gatedAt(at: number, gatedText = 'gated', other: (req: ProviderRequest) => ScriptedReply = echoReply) {
  const entered = deferred();
  const open = deferred();
  const script = (req: ProviderRequest, i: number): ScriptedReply => {
    if (i !== at) return other(req);
    entered.resolve();
    return { text: gatedText, waitFor: open.promise };
  };
  return { entered, open, script };
}
