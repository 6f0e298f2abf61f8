// GET /sessions/{id}/ledger: sequence ranges, limit and has_more, the same envelopes the stream carried,
// validation errors, and 400 SESSION_PERSISTENCE_DISABLED on a memory realm.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { call, startApp } from '../helpers/app.ts';
import { openEvents, range, seqsOf, type Envelope } from '../helpers/sse-client.ts';

/** These tests check a delta-by-delta replay: the lossless ledger mode keeps committed deltas. */
const LOSSLESS = { ledger: { keep_text_deltas: true } };

const TRANSPORTS = ['uws', 'node'] as const;

for (const transport of TRANSPORTS) {
  describe(`event ledger route (${transport})`, () => {
    it('pages by after_seq, to_seq and limit with has_more, matching what the stream carried', async (t) => {
      const app = await startApp(t, [{ text: 'ready' }, { chunks: Array.from({ length: 120 }, (_, i) => `c${i}`) }], {
        httpTransport: transport,
        config: LOSSLESS,
      });
      const id = (await call(app.url, 'POST', '/sessions', { prompt: 'hi' })).body.session_id as string;
      const c = await openEvents(app.url, id, {}, '?after_seq=0');
      t.after(() => c.close());
      assert.equal((await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'go' })).status, 200);
      const get = async (q: string) => {
        const r = await call(app.url, 'GET', `/sessions/${id}/ledger${q}`);
        assert.equal(r.status, 200, `${q}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.session_id, id);
        return r.body as { events: Envelope[]; last_seq: number; has_more: boolean };
      };

      const first = await get('');
      const last = first.last_seq;
      assert.ok(last > 120);
      assert.deepEqual(seqsOf(first.events), range(1, 100), 'default page: 100 from the start');
      assert.equal(first.has_more, true);
      const rest = await get('?after_seq=100');
      assert.deepEqual(seqsOf(rest.events), range(101, last));
      assert.equal(rest.has_more, false);
      // The ledger is readable as soon as the turn answered (its last event is the run's end).
      assert.equal(rest.events.at(-1)!.payload.type, 'run_completed');

      const cases: Array<[string, number[], boolean]> = [
        ['?after_seq=10&to_seq=20', range(11, 20), false],
        ['?after_seq=10&to_seq=20&limit=5', range(11, 15), true],
        ['?after_seq=10&to_seq=15&limit=5', range(11, 15), false],
        ['?limit=5', range(1, 5), true],
        [`?after_seq=${last - 5}&limit=5`, range(last - 4, last), false],
        [`?after_seq=${last}`, [], false],
        ['?after_seq=20&to_seq=10', [], false],
        ['?limit=5000', range(1, last), false],
      ];
      for (const [q, seqs, more] of cases) {
        const page = await get(q);
        assert.deepEqual(seqsOf(page.events), seqs, q);
        assert.equal(page.has_more, more, q);
        assert.equal(page.last_seq, last, q);
      }

      await c.until((x) => x.envelopes().length === last, 'the stream caught up');
      assert.deepEqual((await get('?limit=1000')).events, c.envelopes(), 'the ledger rows are the stream envelopes');
    });

    it('rejects bad parameters and unknown sessions', async (t) => {
      const app = await startApp(t, [], { httpTransport: transport, config: LOSSLESS });
      const id = (await call(app.url, 'POST', '/sessions', { prompt: 'hi' })).body.session_id as string;
      for (const q of ['?limit=0', '?limit=abc', '?after_seq=-1', '?to_seq=x']) {
        const r = await call(app.url, 'GET', `/sessions/${id}/ledger${q}`);
        assert.equal(r.status, 400, q);
        assert.equal(r.body.code, 'BAD_REQUEST', q);
      }
      const bad = await call(app.url, 'GET', '/sessions/nope/ledger');
      assert.equal(bad.status, 400);
      const unknown = await call(app.url, 'GET', `/sessions/${randomUUID()}/ledger`);
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.code, 'SESSION_NOT_FOUND');
    });
  });
}

describe('event ledger route (memory realm)', () => {
  it('answers 400 SESSION_PERSISTENCE_DISABLED', async (t) => {
    const app = await startApp(t, [], { realmBackend: 'memory', config: LOSSLESS });
    const id = (await call(app.url, 'POST', '/sessions', { prompt: 'hi' })).body.session_id as string;
    const r = await call(app.url, 'GET', `/sessions/${id}/ledger`);
    assert.equal(r.status, 400);
    assert.equal(r.body.code, 'SESSION_PERSISTENCE_DISABLED');
    assert.equal(typeof r.body.error, 'string');
  });
});
