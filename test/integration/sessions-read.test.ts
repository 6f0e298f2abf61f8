// The read routes through the real server: GET /sessions (summary rows, label filters, paging,
// archived hidden), GET /sessions/{id}, /status and /history (paging, committed rows only).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { echoReply, type ScriptedReply } from '../../providers/scripted.ts';
import type { ProviderRequest } from '../../providers/provider.ts';
import { call, createSession, startApp } from '../helpers/app.ts';
import { gatedAt } from '../helpers/gates.ts';

const echoWithUsage = (req: ProviderRequest): ScriptedReply => ({ ...echoReply(req), usage: { input_tokens: 3, output_tokens: 2 } });
const UNKNOWN = '00000000-0000-4000-8000-00000000f00d';
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

describe('GET /sessions', () => {
  it('lists summary rows: Unix-second timestamps, session_ref, is_active only while running, labels only when set', async (t) => {
    const g = gatedAt(2, 'gated', echoWithUsage);
    const app = await startApp(t, g.script);
    const before = Math.floor(Date.now() / 1000);
    const plain = await createSession(app.url);
    const labelled = await createSession(app.url, { prompt: 'x', labels: { team: 'core' } });
    const after = Math.ceil(Date.now() / 1000);
    const turn = call(app.url, 'POST', `/sessions/${plain}/messages`, { session_id: plain, prompt: 'y' });
    await g.entered.promise;

    const { body } = await call(app.url, 'GET', '/sessions');
    const rows = new Map<string, Record<string, unknown>>(body.sessions.map((r: { session_id: string }) => [r.session_id, r]));
    assert.equal(rows.size, 2);
    const p = rows.get(plain)!;
    assert.ok(Number.isInteger(p.created_at) && Number.isInteger(p.updated_at));
    assert.ok((p.created_at as number) >= before && (p.created_at as number) <= after);
    assert.equal(p.session_ref, `test-realm:${plain}`);
    assert.equal(p.is_active, true);
    assert.equal('labels' in p, false);
    assert.equal(p.message_count, 2);
    assert.equal(p.total_tokens, 5);
    assert.equal(rows.get(labelled)!.is_active, false);
    assert.deepEqual(rows.get(labelled)!.labels, { team: 'core' });

    g.open.resolve();
    assert.equal((await turn).status, 200);
    const again = (await call(app.url, 'GET', '/sessions')).body.sessions;
    assert.ok(again.every((r: { is_active: boolean }) => r.is_active === false));
  });

  for (const httpTransport of ['auto', 'node'] as const)
    it(`filters by repeatable label=key=value (AND), rejects a malformed filter, hides archived, pages (${httpTransport})`, async (t) => {
      const app = await startApp(t, [], { httpTransport });
      const a = await createSession(app.url, { prompt: 'a', labels: { team: 'core', env: 'prod' } });
      const b = await createSession(app.url, { prompt: 'b', labels: { team: 'core', env: 'dev' } });
      const c = await createSession(app.url, { prompt: 'c', labels: { team: 'edge', 'k=x': 'v=y' } });
      const ids = async (q: string) =>
        (await call(app.url, 'GET', `/sessions${q}`)).body.sessions.map((r: { session_id: string }) => r.session_id).sort();
      assert.deepEqual(await ids('?label=team=core'), [a, b].sort());
      assert.deepEqual(await ids('?label=team=core&label=env=dev'), [b]);
      assert.deepEqual(await ids('?label=team=nobody'), []);
      assert.deepEqual(await ids(`?label=${encodeURIComponent('team=edge')}`), [c]);
      const bad = await call(app.url, 'GET', '/sessions?label=team');
      assert.equal(bad.status, 400);
      assert.equal(bad.body.code, 'BAD_REQUEST');
      assert.equal((await call(app.url, 'GET', '/sessions?limit=abc')).status, 400);

      assert.equal((await call(app.url, 'DELETE', `/sessions/${b}`)).status, 200);
      assert.deepEqual(await ids(''), [a, c].sort());
      assert.deepEqual(await ids('?label=team=core'), [a]);

      const all: string[] = (await call(app.url, 'GET', '/sessions')).body.sessions.map((r: { session_id: string }) => r.session_id);
      const page1 = (await call(app.url, 'GET', '/sessions?limit=1')).body.sessions.map((r: { session_id: string }) => r.session_id);
      const page2 = (await call(app.url, 'GET', '/sessions?limit=1&offset=1')).body.sessions.map(
        (r: { session_id: string }) => r.session_id,
      );
      const page3 = (await call(app.url, 'GET', '/sessions?offset=2')).body.sessions;
      assert.deepEqual([...page1, ...page2], all);
      assert.deepEqual(page3, []);
      assert.deepEqual((await call(app.url, 'GET', '/sessions?label=team=core&limit=1&offset=1')).body.sessions, []);
    });
});

describe('GET /sessions/{id} and /status', () => {
  it('answers detail with RFC 3339 timestamps, message_count and total_tokens; unknown is 404', async (t) => {
    const app = await startApp(t, [
      { text: 'a', usage: { input_tokens: 7, output_tokens: 1 } },
      { text: 'b', usage: { input_tokens: 9, output_tokens: 2 } },
    ]);
    const id = await createSession(app.url);
    await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'more' });
    const res = await call(app.url, 'GET', `/sessions/${id}`);
    assert.equal(res.status, 200);
    assert.match(res.body.created_at, RFC3339);
    assert.match(res.body.updated_at, RFC3339);
    assert.ok(Date.parse(res.body.updated_at) >= Date.parse(res.body.created_at));
    assert.equal(res.body.message_count, 4);
    assert.equal(res.body.total_tokens, 19);
    assert.equal(res.body.session_ref, `test-realm:${id}`);
    const missing = await call(app.url, 'GET', `/sessions/${UNKNOWN}`);
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 'SESSION_NOT_FOUND');
    assert.equal((await call(app.url, 'GET', '/sessions/nope')).status, 400);

    assert.deepEqual((await call(app.url, 'GET', `/sessions/${id}/status`)).body, { session_id: id, state: 'idle' });
    assert.equal((await call(app.url, 'GET', `/sessions/${UNKNOWN}/status`)).status, 404);
  });
});

describe('GET /sessions/{id}/history', () => {
  it('pages with offset/limit/has_more; limit is omitted when not given', async (t) => {
    const app = await startApp(t);
    const id = await createSession(app.url);
    await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'two' });
    await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'three' });
    const full = (await call(app.url, 'GET', `/sessions/${id}/history`)).body;
    assert.equal(full.message_count, 6);
    assert.equal(full.offset, 0);
    assert.equal('limit' in full, false);
    assert.equal(full.has_more, false);
    assert.equal(full.messages.length, 6);
    assert.ok(full.messages.every((m: { created_at: string }) => RFC3339.test(m.created_at)));

    const page = (await call(app.url, 'GET', `/sessions/${id}/history?offset=1&limit=2`)).body;
    assert.deepEqual([page.offset, page.limit, page.has_more, page.message_count, page.messages.length], [1, 2, true, 6, 2]);
    assert.deepEqual(page.messages, full.messages.slice(1, 3));
    const tail = (await call(app.url, 'GET', `/sessions/${id}/history?offset=4&limit=10`)).body;
    assert.deepEqual([tail.has_more, tail.messages.length], [false, 2]);
    const past = (await call(app.url, 'GET', `/sessions/${id}/history?offset=9`)).body;
    assert.deepEqual([past.has_more, past.messages.length], [false, 0]);
    const zero = (await call(app.url, 'GET', `/sessions/${id}/history?limit=0`)).body;
    assert.deepEqual([zero.limit, zero.has_more, zero.messages.length], [0, true, 0]);
    assert.equal((await call(app.url, 'GET', `/sessions/${id}/history?offset=-1`)).status, 400);
  });

  it('shows only committed rows while a turn is in flight', async (t) => {
    const g = gatedAt(1, 'gated', echoWithUsage);
    const app = await startApp(t, g.script);
    const id = await createSession(app.url);
    const turn = call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'in flight' });
    await g.entered.promise;
    const during = (await call(app.url, 'GET', `/sessions/${id}/history`)).body;
    assert.equal(during.message_count, 2);
    assert.ok(!JSON.stringify(during.messages).includes('in flight'));
    assert.equal((await call(app.url, 'GET', `/sessions/${id}`)).body.message_count, 2);
    g.open.resolve();
    await turn;
    const after = (await call(app.url, 'GET', `/sessions/${id}/history`)).body;
    assert.equal(after.message_count, 4);
    assert.equal(after.messages[2].content, 'in flight');
  });

  it('answers 400 for an archived session and 404 for an unknown one', async (t) => {
    const app = await startApp(t);
    const id = await createSession(app.url);
    await call(app.url, 'DELETE', `/sessions/${id}`);
    const archived = await call(app.url, 'GET', `/sessions/${id}/history`);
    assert.equal(archived.status, 400);
    assert.equal(archived.body.code, 'BAD_REQUEST');
    const unknown = await call(app.url, 'GET', `/sessions/${UNKNOWN}/history`);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'SESSION_NOT_FOUND');
  });
});
