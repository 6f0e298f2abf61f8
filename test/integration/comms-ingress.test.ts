// test/integration/comms-ingress.test.ts: the webhook admissions through the real server (SPEC.md
// "External event", "Peer terminal response", "Webhook admissions", Authentication item 2): shapes and
// every error row, queued-not-woken external events delivered exactly once as injected context, a
// terminal response waking a keep-alive session, the webhook secret, and the bounded inbox (503).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call, createSession, startApp } from '../helpers/app.ts';
import { createAgent, historyOf, postEvent, userTexts, waitRuns } from '../helpers/comms.ts';
import { gatedAt } from '../helpers/gates.ts';

const UNKNOWN = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
/** Canonical peer ids (SPEC: display names are not accepted as peer_id). */
const REMOTE = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a07@127.0.0.1:7007';
const P = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a99';

describe('external events', () => {
  it('answers 202 {queued:true}, does not wake an idle session, and rides the next turn once as injected context', async (t) => {
    const app = await startApp(t);
    const id = await createSession(app.url);
    // A turn reads the inbox empty first: an admission afterwards must still reach the next turn.
    assert.equal((await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'anything yet?' })).status, 200);
    const calls = app.provider.requests.length;
    const res = await postEvent(app.url, id, 'order.created', { order: 7 });
    assert.equal(res.status, 202);
    assert.deepEqual(res.body, { queued: true });
    assert.equal((await postEvent(app.url, id, 'order.paid', { order: 7, blocks: true })).status, 202);
    assert.equal(app.provider.requests.length, calls, 'no model call for a queued event');
    const turn = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'what happened?' });
    assert.equal(turn.status, 200);
    const rows = await historyOf(app.url, id);
    const injected = rows.filter((r) => r.transcript_role === 'injected_context').map((r) => String(r.content));
    assert.equal(injected.length, 2);
    assert.match(injected[0], /^\[external event order\.created\] \{"order":7\}$/);
    assert.match(injected[1], /order\.paid/);
    assert.equal(rows.at(-2)?.content, 'what happened?', 'the injected rows come right before the user row');
    await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'again' });
    const after = (await historyOf(app.url, id)).filter((r) => r.transcript_role === 'injected_context');
    assert.equal(after.length, 2, 'a consumed event is never delivered twice');
  });

  it('refuses bad envelopes and unknown sessions with the spec statuses', async (t) => {
    const app = await startApp(t);
    const id = await createSession(app.url);
    const post = (body: unknown, sid = id) => call(app.url, 'POST', `/sessions/${sid}/external-events`, body);
    const rows: Array<[unknown, number, string?]> = [
      [{ kind: 'peer_response_terminal', event_type: 'x', payload: {} }, 400, 'reserved'],
      [{ kind: 'generic_json', event_type: '', payload: {} }, 400, 'event_type'],
      [{ kind: 'generic_json', event_type: '   ', payload: {} }, 400, 'event_type'],
      [{ kind: 'generic_json', event_type: 'x' }, 400],
      [{ event_type: 'x', payload: {} }, 400],
      [{ kind: 'other', event_type: 'x', payload: {} }, 400],
      [{ kind: 'generic_json', event_type: 'x', payload: {}, blocks: [{ type: 'nope' }] }, 400],
      ['not json', 400],
    ];
    for (const [body, status, message] of rows) {
      const res = await post(body);
      assert.equal(res.status, status, JSON.stringify(body));
      assert.equal(res.body.code, 'BAD_REQUEST');
      if (message) assert.match(res.body.error, new RegExp(message));
    }
    const ok = await post({ kind: 'generic_json', event_type: 'x', payload: null, blocks: null });
    assert.equal(ok.status, 202, 'payload null is a payload; blocks default null');
    const unknown = await post({ kind: 'generic_json', event_type: 'x', payload: {} }, UNKNOWN);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.code, 'SESSION_NOT_FOUND');
    assert.equal((await post({ kind: 'generic_json', event_type: 'x', payload: {} }, 'not-a-uuid')).status, 400);
    assert.equal((await call(app.url, 'DELETE', `/sessions/${id}`)).status, 200);
    assert.equal((await post({ kind: 'generic_json', event_type: 'x', payload: {} })).status, 404, 'archived is not found');
  });
});

describe('terminal peer responses', () => {
  it('answers 202 and wakes a keep-alive session: one turn, queued events as its context, each delivered once', async (t) => {
    const app = await startApp(t);
    const id = await createAgent(app.url, 'alpha');
    for (const n of [1, 2, 3]) assert.equal((await postEvent(app.url, id, 'tick', { n })).status, 202);
    const res = await call(app.url, 'POST', `/sessions/${id}/peer-response-terminal`, {
      peer_id: REMOTE,
      display_name: 'Seven',
      request_id: 'req-1',
      status: 'completed',
      result: { answer: 42 },
    });
    assert.equal(res.status, 202);
    assert.deepEqual(res.body, { queued: true });
    await waitRuns(app.url, id, 2);
    const texts = await userTexts(app.url, id);
    assert.equal(texts.length, 5);
    assert.deepEqual(
      texts.slice(1, 4).map((s) => JSON.parse(s.replace(/^\[external event tick\] /, '')).n),
      [1, 2, 3],
    );
    assert.equal(texts[4], `[response from Seven (${REMOTE}) to request req-1: completed] {"answer":42}`);
    // A later waking input runs one more turn, and none of the consumed inputs come back.
    await call(app.url, 'POST', `/sessions/${id}/peer-response-terminal`, {
      peer_id: P,
      request_id: 'req-2',
      status: 'failed',
      result: null,
    });
    await waitRuns(app.url, id, 3);
    const more = await userTexts(app.url, id);
    assert.equal(more.length, 6);
    assert.match(more[5], /req-2: failed/);
    assert.equal(app.provider.requests.length, 3);
  });

  it('rejects unknown fields, bad statuses, missing members and unknown sessions', async (t) => {
    const app = await startApp(t);
    const id = await createSession(app.url);
    const good = { peer_id: P, request_id: 'r', status: 'cancelled', result: {} };
    const post = (body: unknown, sid = id) => call(app.url, 'POST', `/sessions/${sid}/peer-response-terminal`, body);
    assert.equal((await post(good)).status, 202);
    for (const body of [
      { ...good, extra: 1 },
      { ...good, status: 'accepted' },
      { peer_id: P, request_id: 'r', status: 'completed' },
      { request_id: 'r', status: 'completed', result: 1 },
      { ...good, peer_id: '' },
    ]) {
      const res = await post(body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.code, 'BAD_REQUEST');
    }
    assert.equal((await post(good, UNKNOWN)).status, 404);
    assert.equal(app.provider.requests.length, 1, 'a session without keep_alive is not woken');
  });
});

describe('webhook secret', () => {
  it('requires X-Webhook-Secret on both routes when WARREN_WEBHOOK_SECRET is set (401 missing or wrong)', async (t) => {
    const app = await startApp(t, [], { env: { WARREN_WEBHOOK_SECRET: 's3cret-value' } });
    const id = await createSession(app.url);
    const event = { kind: 'generic_json', event_type: 'x', payload: {} };
    const terminal = { peer_id: P, request_id: 'r', status: 'completed', result: {} };
    for (const [path, body] of [
      ['external-events', event],
      ['peer-response-terminal', terminal],
    ] as const) {
      for (const headers of [
        {} as Record<string, string>,
        { 'x-webhook-secret': 'wrong' },
        { 'x-webhook-secret': 's3cret-valuE' },
        { 'x-webhook-secret': 's3cret-value-longer' },
        { 'x-webhook-secret': '' },
      ]) {
        const res = await call(app.url, 'POST', `/sessions/${id}/${path}`, body, headers);
        assert.equal(res.status, 401, `${path} ${JSON.stringify(headers)}`);
        assert.deepEqual(res.body, { error: 'invalid webhook secret', code: 'UNAUTHORIZED' });
      }
      const ok = await call(app.url, 'POST', `/sessions/${id}/${path}`, body, { 'x-webhook-secret': 's3cret-value' });
      assert.equal(ok.status, 202, path);
    }
    // The secret applies to these two routes only.
    assert.equal((await call(app.url, 'GET', `/sessions/${id}`)).status, 200);
  });

  it('an empty WARREN_WEBHOOK_SECRET disables the check', async (t) => {
    const app = await startApp(t, [], { env: { WARREN_WEBHOOK_SECRET: '' } });
    const id = await createSession(app.url);
    assert.equal((await postEvent(app.url, id, 'x', {})).status, 202);
  });
});

describe('the bounded inbox', () => {
  it('answers 503 when the inbox is full and admits again once a turn consumed it', async (t) => {
    const app = await startApp(t);
    assert.equal((await call(app.url, 'PATCH', '/config', { comms: { inbox_capacity: 2 } })).status, 200);
    const id = await createSession(app.url);
    assert.equal((await postEvent(app.url, id, 'a', 1)).status, 202);
    assert.equal((await postEvent(app.url, id, 'b', 2)).status, 202);
    const full = await postEvent(app.url, id, 'c', 3);
    assert.equal(full.status, 503);
    assert.deepEqual(full.body, { error: 'event inbox full', code: 'SERVICE_UNAVAILABLE' });
    const terminal = await call(app.url, 'POST', `/sessions/${id}/peer-response-terminal`, {
      peer_id: P,
      request_id: 'r',
      status: 'completed',
      result: {},
    });
    assert.equal(terminal.status, 503);
    assert.equal((await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'drain' })).status, 200);
    assert.equal((await postEvent(app.url, id, 'c', 3)).status, 202);
  });

  it('a slow keep-alive session with a full inbox answers 503 instead of growing', async (t) => {
    // Call 0 is the create turn; call 1 is the first woken turn, held until the test opens the gate.
    const gate = gatedAt(1, 'slowly done');
    const app = await startApp(t, gate.script);
    assert.equal((await call(app.url, 'PATCH', '/config', { comms: { inbox_capacity: 3 } })).status, 200);
    const id = await createAgent(app.url, 'slow');
    const wake = () =>
      call(app.url, 'POST', `/sessions/${id}/peer-response-terminal`, { peer_id: P, request_id: 'r', status: 'completed', result: {} });
    assert.equal((await wake()).status, 202);
    await gate.entered.promise;
    // The running turn holds its input until it commits: two more fit, then the bound answers.
    assert.equal((await wake()).status, 202);
    assert.equal((await postEvent(app.url, id, 'e', 1)).status, 202);
    for (let i = 0; i < 5; i++) assert.equal((await postEvent(app.url, id, 'e', i)).status, 503);
    gate.open.resolve();
    await waitRuns(app.url, id, 3);
    const texts = await userTexts(app.url, id);
    assert.equal(texts.filter((s) => s.startsWith(`[response from ${P}`)).length, 2, 'each admitted input ran exactly once');
    assert.equal((await postEvent(app.url, id, 'later', 1)).status, 202);
  });
});
