// test/helpers/wait.ts: bounded waits for tests. A broken behaviour must fail its test in seconds with a message
// naming what was awaited, never hang until the runner's per-test timeout. `poll` repeats a probe until it
// answers a value; `within` races a promise (a gate, a receiver) against a deadline.

/**
 * The budget of a test measured above 10 s on the loaded 2-core machine (restarts, browsers, 1,000-item
 * loads): every other test has the runner's default, 30 s (scripts/per-test-timeout.mjs).
 */
export const SLOW_TEST_MS = 90_000;

/** The default deadline of a wait: long enough for a loaded 2-core machine, far below the per-test timeout. */
export const WAIT_MS = 15_000;

/**
 * Repeats `probe` every `intervalMs` until it answers something other than `undefined`/`false`, and returns
 * that; throws `timed out after N ms waiting for <what>` (plus the last probe's `detail`) past the deadline.
 */
export async function poll<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  opts: { timeoutMs?: number; intervalMs?: number; detail?: () => string | Promise<string> } = {},
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? WAIT_MS;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) {
      const detail = opts.detail ? `: ${await opts.detail()}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail}`);
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 10));
  }
}

/** Resolves as `promise` does, or rejects `timed out after N ms waiting for <what>` past the deadline. */
export function within<T>(what: string, promise: Promise<T>, timeoutMs = WAIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}
