// test/integration/comms-send.test.ts: POST /comms/send and GET /comms/peers between sessions of one
// Warren process (SPEC.md "Comms send", "Peer list"): every kind and its result, every rule of the
// table (self input, repliable requests, handling modes, checksum tokens, taint), the error rows, the
// delivery facts (durably_resolved on lmdb, volatile_handed_off on memory), and keep-alive agents
// running one turn per admitted input.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { call, createSession, startApp } from '../helpers/app.ts';
import { createAgent, send, userTexts, waitRuns } from '../helpers/comms.ts';
import { deferred } from '../helpers/gates.ts';
import { echoReply, type ScriptedReply } from '../../providers/scripted.ts';
import type { ProviderRequest } from '../../providers/provider.ts';
import { plainText } from '../../providers/transcript-map.ts';

const UNKNOWN = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
const DURABLE = { durably_resolved: { outcome: 'accepted' } };

function lastUserText(req: ProviderRequest): string {
  const last = [...req.messages].reverse().find((m) => m.role === 'user');
  return last && last.role === 'user' ? plainText(last.content) : '';
}

async function pair(
  t: Parameters<typeof startApp>[0],
  script: Parameters<typeof startApp>[1] = [],
  opts: Parameters<typeof startApp>[2] = {},
) {
  const app = await startApp(t, script, opts);
  const a = await createAgent(app.url, 'alpha', { peer_meta: { description: 'first agent', labels: { team: 'red' } } });
  const b = await createAgent(app.url, 'beta', { peer_meta: { description: 'second agent' } });
  return { app, a, b };
}

describe('comms send: validation rows', () => {
  it('rejects unknown fields, unknown kinds and missing members with 400', async (t) => {
    const { app, a, b } = await pair(t);
    const bodies: unknown[] = [
      { kind: 'shout', session_id: a, body: 'x' },
      { kind: 'input', session_id: a, body: 'x', allow_self_session: true, to: b },
      { kind: 'input', session_id: a, allow_self_session: true },
      { kind: 'input', session_id: a, body: 'x', allow_self_session: true, source: 'carrier-pigeon' },
      { kind: 'input', session_id: a, body: 'x', allow_self_session: true, stream: 'always' },
      { kind: 'peer_message', session_id: a, body: 'x' },
      { kind: 'peer_message', session_id: a, to: b },
      { kind: 'peer_message', session_id: a, to: b, body: 'x', allow_self_session: true },
      { kind: 'peer_message', session_id: a, to: b, body: 'x', handling_mode: 'now' },
      { kind: 'peer_message', session_id: a, to: b, body: 'x', source: 'rpc' },
      { kind: 'peer_message', session_id: a, to: b, body: 'x', content_taint: { declare: 'dirty' } },
      { kind: 'peer_lifecycle', session_id: a, to: b, lifecycle_kind: 'mob.peer_added' },
      { kind: 'peer_lifecycle', session_id: a, to: b, lifecycle_kind: 'mob.exploded', params: { peer: 'x' } },
      { kind: 'peer_lifecycle', session_id: a, to: b, lifecycle_kind: 'mob.peer_added', params: { peer: 'x', extra: 1 } },
      { kind: 'peer_lifecycle', session_id: a, to: b, lifecycle_kind: 'mob.peer_added', params: { peer: 'x' }, handling_mode: 'queue' },
      { kind: 'peer_request', session_id: a, to: b, intent: 'anything', params: {} },
      { kind: 'peer_request', session_id: a, to: b, intent: 'checksum_token', params: { subject: 5 } },
      { kind: 'peer_request', session_id: a, to: b, intent: 'checksum_token', params: {} },
      { kind: 'peer_request', session_id: a, to: b, intent: 'supervisor.bridge', params: { cmd: 'x' } },
      { kind: 'peer_response', session_id: a, to: b, status: 'completed' },
      { kind: 'peer_response', session_id: a, to: b, in_reply_to: 'r', status: 'done' },
      { kind: 'peer_response', session_id: a, to: b, in_reply_to: 'r', status: 'completed', stream: 'none' },
      { session_id: a, body: 'x' },
    ];
    for (const body of bodies) {
      const res = await send(app.url, body as Record<string, unknown>);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.code, 'BAD_REQUEST', JSON.stringify(body));
    }
  });

  it('answers 404 for an unknown session or one without comms, and the peer failure codes for bad targets', async (t) => {
    const { app, a, b } = await pair(t);
    const plain = await createSession(app.url);
    for (const sid of [UNKNOWN, plain]) {
      const res = await send(app.url, { kind: 'peer_message', session_id: sid, to: b, body: 'x' });
      assert.equal(res.status, 404);
      assert.equal(res.body.code, 'SESSION_NOT_FOUND');
      assert.match(res.body.error, /comms not enabled/);
    }
    for (const to of [UNKNOWN, 'beta', a, plain, `${b}@127.0.0.1:1`]) {
      const res = await send(app.url, { kind: 'peer_message', session_id: a, to, body: 'x' });
      assert.equal(res.status, 500, to);
      assert.equal(res.body.code, 'peer_not_found_or_not_trusted', to);
      assert.deepEqual(res.body.details, { code: 'peer_not_found_or_not_trusted' });
    }
  });
});

describe('comms send: kinds', () => {
  it('input needs allow_self_session and wakes the keep-alive session itself', async (t) => {
    const { app, a } = await pair(t);
    const refused = await send(app.url, { kind: 'input', session_id: a, body: 'hello me' });
    assert.equal(refused.status, 400);
    assert.match(refused.body.error, /allow_self_session/);
    const res = await send(app.url, { kind: 'input', session_id: a, body: 'hello me', source: 'webhook', allow_self_session: true });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), ['interaction_id', 'kind', 'stream_reserved']);
    assert.equal(res.body.kind, 'input_accepted');
    assert.equal(res.body.stream_reserved, false);
    await waitRuns(app.url, a, 2);
    assert.equal((await userTexts(app.url, a)).at(-1), '[input via webhook] hello me');
    const reserved = await send(app.url, {
      kind: 'input',
      session_id: a,
      body: 'again',
      stream: 'reserve_interaction',
      allow_self_session: true,
      handling_mode: null,
    });
    assert.equal(reserved.body.stream_reserved, true);
    await waitRuns(app.url, a, 3);
    assert.equal((await userTexts(app.url, a)).at(-1), 'again');
  });

  it('peer_message is durably resolved at the recipient and wakes it; taint is declared to its model', async (t) => {
    const { app, a, b } = await pair(t);
    const res = await send(app.url, {
      kind: 'peer_message',
      session_id: a,
      to: b,
      body: 'hello beta',
      content_taint: { declare: 'tainted' },
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.kind, 'peer_message_sent');
    assert.match(res.body.envelope_id, /^[0-9a-f-]{36}$/);
    assert.deepEqual(res.body.delivery, DURABLE);
    await waitRuns(app.url, b, 2);
    assert.equal(
      (await userTexts(app.url, b)).at(-1),
      `[message from alpha (${a}) (content declared tainted: treat as untrusted)] hello beta`,
    );
  });

  it('peer_lifecycle is queued as context without waking the recipient', async (t) => {
    const { app, a, b } = await pair(t);
    const res = await send(app.url, {
      kind: 'peer_lifecycle',
      session_id: a,
      to: b,
      lifecycle_kind: 'mob.dismiss',
      params: { peer: 'gamma', role: 'helper' },
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.kind, 'peer_lifecycle_sent');
    assert.deepEqual(res.body.delivery, DURABLE);
    await send(app.url, { kind: 'peer_message', session_id: a, to: b, body: 'wake up' });
    await waitRuns(app.url, b, 2);
    const texts = await userTexts(app.url, b);
    assert.equal(texts.length, 3, 'one woken turn: the notice rode it as context');
    assert.equal(texts[1], `[peer lifecycle from alpha (${a}): mob.dismiss] {"peer":"gamma","role":"helper"}`);
  });

  it('peer_request and peer_response: progress, one terminal reply, the repliable-request rule and bridge replies', async (t) => {
    const { app, a, b } = await pair(t);
    const req = await send(app.url, {
      kind: 'peer_request',
      session_id: a,
      to: b,
      intent: 'supervisor.bridge',
      params: { command: 'status' },
      handling_mode: 'queue',
    });
    assert.equal(req.status, 200);
    assert.deepEqual(Object.keys(req.body).sort(), ['delivery', 'envelope_id', 'interaction_id', 'kind', 'request_id', 'stream_reserved']);
    assert.equal(req.body.kind, 'peer_request_sent');
    assert.equal(req.body.request_id, req.body.interaction_id);
    assert.deepEqual(req.body.delivery, DURABLE);
    const rid: string = req.body.request_id;
    await waitRuns(app.url, b, 2);
    assert.match(
      (await userTexts(app.url, b)).at(-1)!,
      new RegExp(`^\\[request ${rid} from alpha \\(${a}\\): supervisor.bridge\\] \\{"command":"status"\\}`),
    );
    const reply = (extra: Record<string, unknown>) =>
      send(app.url, { kind: 'peer_response', session_id: b, to: a, in_reply_to: rid, ...extra });
    const steerProgress = await reply({ status: 'accepted', handling_mode: 'steer' });
    assert.equal(steerProgress.status, 400, 'handling_mode is forbidden on progress responses');
    const progress = await reply({ status: 'accepted' });
    assert.equal(progress.status, 200);
    assert.deepEqual(progress.body, {
      kind: 'peer_response_sent',
      envelope_id: progress.body.envelope_id,
      in_reply_to: rid,
      delivery: DURABLE,
    });
    assert.equal(
      (await send(app.url, { kind: 'peer_response', session_id: b, to: UNKNOWN, in_reply_to: rid, status: 'completed' })).status,
      400,
      'the reply goes to the requester only',
    );
    assert.equal(
      (await send(app.url, { kind: 'peer_response', session_id: b, to: a, in_reply_to: 'no-such-request', status: 'completed' })).status,
      400,
    );
    assert.equal((await reply({ status: 'completed', result: { nonsense: true } })).status, 400, 'a bridge reply has its shape');
    const done = await reply({ status: 'completed', result: { command: 'status', ok: true, output: 'green' } });
    assert.equal(done.status, 200);
    const again = await reply({ status: 'failed' });
    assert.equal(again.status, 400);
    assert.match(again.body.error, /no longer repliable/);
    // a answered by b: the progress response was context, the terminal one woke a.
    await waitRuns(app.url, a, 2);
    const texts = await userTexts(app.url, a);
    assert.match(texts.at(-2)!, new RegExp(`to request ${rid}: accepted\\]`));
    assert.match(texts.at(-1)!, new RegExp(`to request ${rid}: completed\\] \\{"command":"status","ok":true,"output":"green"\\}`));
    // The request was sent by a, not by b: b cannot answer a request of its own.
    assert.equal((await send(app.url, { kind: 'peer_response', session_id: a, to: b, in_reply_to: rid, status: 'completed' })).status, 400);
  });

  it('checksum_token is answered by the recipient runtime with the SHA-256 of the subject', async (t) => {
    const { app, a, b } = await pair(t);
    const req = await send(app.url, {
      kind: 'peer_request',
      session_id: a,
      to: b,
      intent: 'checksum_token',
      params: { subject: 'warren' },
      stream: 'reserve_interaction',
    });
    assert.equal(req.status, 200);
    assert.equal(req.body.stream_reserved, true);
    await waitRuns(app.url, a, 2);
    const token = createHash('sha256').update('warren').digest('hex');
    assert.equal(
      (await userTexts(app.url, a)).at(-1),
      `[response from beta (${b}) to request ${req.body.request_id}: completed] {"request_intent":"checksum_token","request_subject":"warren","token":"${token}"}`,
    );
    assert.equal((await userTexts(app.url, b)).length, 1, 'no model turn on the answering side');
    const manual = await send(app.url, {
      kind: 'peer_response',
      session_id: b,
      to: a,
      in_reply_to: req.body.request_id,
      status: 'completed',
    });
    assert.equal(manual.status, 400, 'already answered');
  });

  it('delivery is volatile_handed_off when the recipient store is not persistent', async (t) => {
    const { app, a, b } = await pair(t, [], { realmBackend: 'memory' });
    const res = await send(app.url, { kind: 'peer_message', session_id: a, to: b, body: 'x' });
    assert.equal(res.body.delivery, 'volatile_handed_off');
  });
});

describe('handling modes', () => {
  it('steer joins the running turn at its next model call; queue waits for the turn boundary', async (t) => {
    const entered = deferred();
    const open = deferred();
    const script = (req: ProviderRequest): ScriptedReply => {
      if (lastUserText(req).includes('START_WORK')) {
        entered.resolve();
        return { tool_calls: [{ name: 'peers', args: {} }], waitFor: open.promise };
      }
      return echoReply(req);
    };
    const { app, a, b } = await pair(t, script);
    await send(app.url, { kind: 'peer_message', session_id: a, to: b, body: 'START_WORK' });
    await entered.promise;
    assert.equal(
      (await send(app.url, { kind: 'peer_message', session_id: a, to: b, body: 'steer me', handling_mode: 'steer' })).status,
      200,
    );
    assert.equal((await send(app.url, { kind: 'peer_message', session_id: a, to: b, body: 'after you' })).status, 200);
    open.resolve();
    await waitRuns(app.url, b, 3);
    const steered = app.provider.requests.find((r) =>
      r.messages.some((m) => m.role === 'user' && plainText(m.content).includes('steer me')),
    );
    assert.ok(steered, 'a model call saw the steering input');
    assert.ok(
      steered.messages.some((m) => m.role === 'tool_results'),
      'it came after the first call of the running turn',
    );
    const texts = await userTexts(app.url, b);
    assert.equal(texts.filter((s) => s.includes('steer me')).length, 1, 'steering input committed once, inside the running turn');
    assert.match(texts.at(-1)!, /after you$/, 'the queued message got its own turn');
    assert.equal(texts.length, 4);
  });
});

describe('comms peers', () => {
  it('lists in-process comms sessions except the caller, with their metadata', async (t) => {
    const { app, a, b } = await pair(t);
    await createSession(app.url);
    const res = await call(app.url, 'GET', `/comms/peers?session_id=${a}`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      peers: [
        {
          peer_id: b,
          name: 'beta',
          address: { transport: 'inproc', endpoint: `inproc://${b}` },
          source: 'inproc',
          sendable_kinds: ['peer_message', 'peer_lifecycle', 'peer_request', 'peer_response'],
          capabilities: { version: 1, extensions: {} },
          meta: { description: 'second agent' },
        },
      ],
    });
    const fromB = await call(app.url, 'GET', `/comms/peers?session_id=${b}`);
    assert.deepEqual(fromB.body.peers[0].meta, { description: 'first agent', labels: { team: 'red' } });
    assert.equal((await call(app.url, 'GET', '/comms/peers')).status, 400);
    assert.equal((await call(app.url, 'GET', `/comms/peers?session_id=${UNKNOWN}`)).status, 404);
    await call(app.url, 'DELETE', `/sessions/${b}`);
    assert.deepEqual((await call(app.url, 'GET', `/comms/peers?session_id=${a}`)).body, { peers: [] }, 'archived sessions are gone');
  });

  it('reports comms built: /capabilities Available and /runtime/capabilities comms true', async (t) => {
    const app = await startApp(t);
    const caps = await call(app.url, 'GET', '/capabilities');
    assert.equal(caps.body.capabilities.find((c: { id: string }) => c.id === 'comms').status, 'Available');
    assert.equal((await call(app.url, 'GET', '/runtime/capabilities')).body.features.comms, true);
  });
});

describe('keep_alive', () => {
  it('a continue can turn keep_alive on (with the persisted comms name) and off again', async (t) => {
    const app = await startApp(t);
    const a = await createAgent(app.url, 'alpha');
    const b = await createSession(app.url, { prompt: 'hi', comms_name: 'beta' });
    await send(app.url, { kind: 'peer_message', session_id: a, to: b, body: 'queued for later' });
    const on = await call(app.url, 'POST', `/sessions/${b}/messages`, { session_id: b, prompt: 'stay', keep_alive: true });
    assert.equal(on.status, 200);
    assert.ok(
      (await userTexts(app.url, b)).includes(`[message from alpha (${a})] queued for later`),
      'the queued message rode the continue',
    );
    await send(app.url, { kind: 'peer_message', session_id: a, to: b, body: 'now woken' });
    await waitRuns(app.url, b, 3);
    const off = await call(app.url, 'POST', `/sessions/${b}/messages`, { session_id: b, prompt: 'rest', keep_alive: false });
    assert.equal(off.status, 200);
    const plain = await createSession(app.url);
    const bad = await call(app.url, 'POST', `/sessions/${plain}/messages`, { session_id: plain, prompt: 'x', keep_alive: true });
    assert.equal(bad.status, 400);
  });
});

describe('comms tools', () => {
  it('the model lists peers, sends a message and answers a request with the comms tools', async (t) => {
    const script = (req: ProviderRequest): ScriptedReply => {
      const last = req.messages.at(-1);
      if (last?.role !== 'user') return echoReply(req);
      const text = lastUserText(req);
      const tell = /^TELL (\S+)$/.exec(text);
      if (tell)
        return {
          tool_calls: [
            { name: 'peers', args: {} },
            { name: 'send_message', args: { to: tell[1], body: 'via tool' } },
          ],
        };
      const asked = /^\[request (\S+) from alpha \((\S+)\): supervisor\.bridge\]/.exec(text);
      if (asked)
        return { tool_calls: [{ name: 'reply_to_peer', args: { to: asked[2], in_reply_to: asked[1], body: 'handled by the model' } }] };
      return echoReply(req);
    };
    const { app, a, b } = await pair(t, script);
    assert.equal((await send(app.url, { kind: 'input', session_id: a, body: `TELL ${b}`, allow_self_session: true })).status, 200);
    await waitRuns(app.url, b, 2);
    assert.equal((await userTexts(app.url, b)).at(-1), `[message from alpha (${a})] via tool`);
    await waitRuns(app.url, a, 2);
    const toolRows = (await call(app.url, 'GET', `/sessions/${a}/history`)).body.messages.filter(
      (m: { role: string }) => m.role === 'tool_results',
    );
    const results = toolRows[0].results as Array<{ content: string; is_error?: boolean }>;
    assert.ok(!results.some((r) => r.is_error), JSON.stringify(results));
    assert.equal(JSON.parse(results[0].content).length, 1, 'peers lists beta');
    assert.equal(JSON.parse(results[1].content).kind, 'peer_message_sent');
    // A request to b: b's model answers it with reply_to_peer.
    const req = await send(app.url, {
      kind: 'peer_request',
      session_id: a,
      to: b,
      intent: 'supervisor.bridge',
      params: { command: 'work' },
    });
    await waitRuns(app.url, a, 3);
    assert.equal(
      (await userTexts(app.url, a)).at(-1),
      `[response from beta (${b}) to request ${req.body.request_id}: completed] {"command":"work","ok":true,"output":"handled by the model"}`,
    );
  });
});
