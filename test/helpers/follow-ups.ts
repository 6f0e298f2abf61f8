// test/helpers/follow-ups.ts: polling helpers for busy-policy and detached-turn tests: the session status
// (whose follow_ups counts are the session machine's live context) and GET /requests/{id}.
import assert from 'node:assert/strict';
import { call } from './app.ts';

type Body = Record<string, any>;

/** Polls GET /sessions/{id}/status until `pred` holds. */
export async function untilStatus(base: string, sid: string, pred: (body: Body) => boolean): Promise<void> {
  for (let i = 0; ; i++) {
    const r = await call(base, 'GET', `/sessions/${sid}/status`);
    if (pred(r.body)) return;
    if (i > 4000) assert.fail(`status never matched: ${JSON.stringify(r.body)}`);
    await new Promise((res) => setTimeout(res, 5));
  }
}

/** A status predicate: exactly `n` follow-ups queued. */
export const queuedIs = (n: number) => (b: Body) => (b.follow_ups?.queued ?? 0) === n;

/** Polls GET /requests/{id} until it is terminal (or not found). */
export async function terminal(base: string, rid: string): Promise<Body> {
  for (let i = 0; ; i++) {
    const r = await call(base, 'GET', `/requests/${rid}`);
    if (r.status !== 200 || !['queued', 'running'].includes(r.body.status)) return r.body;
    if (i > 4000) assert.fail(`request ${rid} never settled`);
    await new Promise((res) => setTimeout(res, 5));
  }
}
