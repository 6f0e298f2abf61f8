// test/helpers/follow-ups.ts: polling helpers for busy-policy and detached-turn tests: the session status
// (whose follow_ups counts are the session machine's live context) and GET /requests/{id}.
import { call } from './app.ts';
import { poll } from './wait.ts';

type Body = Record<string, any>;

/** Polls GET /sessions/{id}/status until `pred` holds. */
export async function untilStatus(base: string, sid: string, pred: (body: Body) => boolean, what = 'the expected status'): Promise<void> {
  let last: Body = {};
  await poll(`session ${sid} to reach ${what}`, async () => pred((last = (await call(base, 'GET', `/sessions/${sid}/status`)).body)), {
    intervalMs: 5,
    detail: () => JSON.stringify(last),
  });
}

/** A status predicate: exactly `n` follow-ups queued. */
export const queuedIs = (n: number) => (b: Body) => (b.follow_ups?.queued ?? 0) === n;

/** Polls GET /requests/{id} until it is terminal (or not found). */
export async function terminal(base: string, rid: string): Promise<Body> {
  const [body] = await poll(
    `request ${rid} to settle`,
    async () => {
      const r = await call(base, 'GET', `/requests/${rid}`);
      return (r.status !== 200 || !['queued', 'running'].includes(r.body.status)) && [r.body as Body];
    },
    { intervalMs: 5 },
  );
  return body;
}
