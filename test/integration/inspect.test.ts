// The inspection API behind the actor viewer, through @warren/client: actor listing with filters and
// counts, the machine definition, one actor's detail, the inspection stream (transitions of a turn,
// off until subscribed) and a session's time travel through its ledger.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { WarrenClient, isWarrenError, type ActorTransition } from '../../client/src/client.ts';
import type { ProviderRequest } from '../../providers/provider.ts';
import { echoReply, type ScriptedReply } from '../../providers/scripted.ts';
import { plainText } from '../../providers/transcript-map.ts';
import { startApp } from '../helpers/app.ts';
import { deferred } from '../helpers/gates.ts';
import { rpcOk, TEAM } from '../helpers/mob-driver.ts';
import { poll } from '../helpers/wait.ts';

function lastUser(req: ProviderRequest): string {
  const u = [...req.messages].reverse().find((m) => m.role === 'user');
  return u && u.role === 'user' ? plainText(u.content) : '';
}

describe('inspection API', () => {
  it('lists actors with counts per state, filtered by kind, state and label', async (t) => {
    const app = await startApp(t);
    const c = new WarrenClient(app.url);
    const a = await c.createSession({ prompt: 'a', provider: 'scripted', labels: { team: 'red' } });
    await c.createSession({ prompt: 'b', provider: 'scripted', labels: { team: 'blue' } });
    const all = await c.actors();
    assert.deepEqual(all.kinds, ['session', 'mob', 'mob_member', 'work_binding', 'schedule']);
    assert.equal(all.total, 2);
    assert.deepEqual(all.counts, { session: { idle: 2 }, mob: {}, mob_member: {}, work_binding: {}, schedule: {} });
    const red = await c.actors({ label: 'team=red' });
    assert.deepEqual(
      red.actors.map((x) => x.id),
      [a.session_id],
    );
    assert.equal(red.actors[0].state, 'idle');
    assert.deepEqual(red.actors[0].labels, { team: 'red' });
    assert.equal((await c.actors({ state: 'running' })).total, 0);
    assert.deepEqual(
      (await c.actors({ state: 'running' })).counts,
      { session: { idle: 2 }, mob: {}, mob_member: {}, work_binding: {}, schedule: {} },
      'counts ignore the state filter',
    );
    assert.equal((await c.actors({ kind: 'schedule' })).total, 0);
  });

  it('serves the session machine definition: nested states and transitions', async (t) => {
    const app = await startApp(t);
    const g = await new WarrenClient(app.url).machine('session');
    assert.equal(g.machine_id, 'session');
    const ids = g.states.map((s) => s.id);
    for (const id of [
      'session',
      'session.idle',
      'session.running',
      'session.running.calling_model',
      'session.running.committing',
      'session.held',
      'session.archived',
    ]) {
      assert.ok(ids.includes(id), id);
    }
    assert.equal(g.states.find((s) => s.id === 'session.running.calling_model')?.parent, 'session.running');
    assert.equal(g.states.find((s) => s.id === 'session')?.initial, 'session.idle');
    const accept = g.transitions.find((x) => x.source === 'session.idle' && x.event === 'turn.requested');
    assert.deepEqual(accept?.targets, ['session.running']);
    assert.deepEqual(accept?.actions, ['acceptTurn']);
    // The machine owns its turn: the turn's end (done or failed) takes running back to idle.
    assert.ok(g.transitions.some((x) => x.source === 'session.running' && x.event === 'turn.done' && x.targets.includes('session.idle')));
    assert.ok(g.transitions.some((x) => x.source === 'session.running' && x.event === 'turn.failed' && x.targets.includes('session.idle')));
    await assert.rejects(new WarrenClient(app.url).machine('nope'), (e: unknown) => isWarrenError(e, 'NOT_FOUND'));
  });

  it('streams a turn as transitions running -> idle only while subscribed, and keeps them as recent events', async (t) => {
    const gate = deferred();
    const app = await startApp(t, [{ text: 'first' }, { text: 'second', waitFor: gate.promise }]);
    const c = new WarrenClient(app.url);
    const { session_id: id } = await c.createSession({ prompt: 'one', provider: 'scripted' });
    // Nobody watched the first turn: nothing was recorded.
    assert.deepEqual((await c.actor('session', id)).recent_events, []);
    const abort = new AbortController();
    t.after(() => abort.abort());
    const seen: ActorTransition[] = [];
    let turn: Promise<unknown> | null = null;
    let gated = false;
    for await (const item of c.inspectEvents({ kind: 'session', id }, { signal: abort.signal })) {
      if (item.type === 'inspect_loaded') {
        turn = c.continueSession(id, { prompt: 'two' });
        continue;
      }
      if (item.type !== 'transition') continue;
      seen.push(item.data);
      // A shed actor wakes with an xstate.init snapshot first; the gate opens at the first model call.
      if (item.data.state === 'running.calling_model' && !gated) {
        gated = true;
        const detail = await c.actor('session', id);
        assert.equal(detail.actor.state, 'running');
        assert.equal(detail.session?.turn_phase, 'calling_model');
        assert.equal(detail.actor.mailbox_depth >= 1, true);
        gate.resolve();
      }
      if (item.data.state === 'idle' && seen.some((s) => s.state.startsWith('running'))) break;
    }
    abort.abort();
    await turn;
    // Distinct consecutive states: the turn went running (model call, commit) and back to idle.
    const running = seen.findIndex((s) => s.state.startsWith('running'));
    const states = seen
      .slice(running)
      .map((s) => s.state)
      .filter((s, i, arr) => s !== arr[i - 1]);
    assert.deepEqual(states, ['running.calling_model', 'running.committing', 'idle']);
    assert.equal(seen.find((s) => s.state === 'running.calling_model')?.event.type, 'turn.requested');
    assert.equal(seen.at(-1)?.event.type, 'turn.done');
    const detail = await c.actor('session', id);
    assert.ok(detail.recent_events.some((e) => e.event.type === 'turn.done'));
    assert.equal(detail.session?.message_count, 4);
    assert.ok(detail.session?.ledger_tail.some((e) => e.payload.type === 'run_completed'));
    assert.equal(detail.session?.transcript_tail.length, 4);
  });

  it('time travel replays the ledger through the machine: the state after each event', async (t) => {
    const app = await startApp(t, [{ tool_calls: [{ name: 'missing_tool', args: {} }] }, { text: 'done' }]);
    const c = new WarrenClient(app.url);
    const { session_id: id } = await c.createSession({ prompt: 'go', provider: 'scripted' });
    const tl = await c.timeline(id);
    const byKind = (k: string) => tl.steps.find((s) => s.entry.payload.type === k);
    assert.equal(byKind('run_started')?.state, 'running.calling_model');
    assert.equal(byKind('tool_execution_started')?.state, 'running.executing_tools');
    assert.equal(tl.steps.filter((s) => s.entry.payload.type === 'turn_started')[1]?.state, 'running.calling_model');
    assert.equal(byKind('run_completed')?.state, 'idle');
    assert.equal(byKind('run_completed')?.machine_event, 'turn.phase → turn.done');
    assert.equal(tl.steps.at(-1)?.entry.seq, tl.last_seq);
    const page = await c.timeline(id, { after_seq: 1, limit: 2 });
    assert.deepEqual(
      page.steps.map((s) => s.entry.seq),
      [2, 3],
    );
    assert.equal(page.has_more, true);
    assert.equal(page.steps[0].state, tl.steps[1].state);
  });

  it('reports time in state and the turn in flight: the held model call, then the running tool, then nothing', async (t) => {
    const hold = deferred('the held stream to be released');
    // The watched turn streams two deltas, holds the call open, then asks for a shell command that waits for a file.
    const script = (req: ProviderRequest): ScriptedReply => {
      if (lastUser(req) !== 'watch me') return echoReply(req);
      if (req.messages.at(-1)?.role === 'tool_results') return { text: 'all done' };
      return {
        chunks: ['héllo ', 'wor', 'ld'],
        holdAfter: { chunks: 2, until: hold.promise },
        tool_calls: [{ name: 'shell', args: { command: 'until [ -e go.flag ]; do sleep 0.02; done; echo released' }, id: 'sh_1' }],
      };
    };
    const app = await startApp(t, script);
    const c = new WarrenClient(app.url);
    const { session_id: id } = await c.createSession({ prompt: 'hi', provider: 'scripted', enable_builtins: true, enable_shell: true });
    const idle = await c.actor('session', id);
    assert.equal(idle.actor.state, 'idle');
    assert.equal(idle.session?.in_flight, null);
    assert.ok(idle.actor.state_since_ms <= idle.now_ms, 'entered before the answer');
    const listed = (await c.actors({ kind: 'session' })).actors.find((a) => a.id === id);
    assert.equal(listed?.state_since_ms, idle.actor.state_since_ms, 'the list and the detail agree');
    assert.equal((await c.actor('session', id)).actor.state_since_ms, idle.actor.state_since_ms, 'unchanged while the state is');
    // The next state must be entered on a later millisecond for the comparison below to mean anything.
    await poll('the clock to move on', () => Date.now() > idle.actor.state_since_ms + 1);

    const turn = c.continueSession(id, { prompt: 'watch me' });
    const held = await poll('the model call to stream two deltas', async () => {
      const d = await c.actor('session', id);
      return d.session?.in_flight?.model_call?.text_deltas === 2 ? d : undefined;
    });
    const f = held.session!.in_flight!;
    assert.equal(held.actor.state, 'running');
    assert.deepEqual(held.actor.value, { running: 'calling_model' });
    assert.ok(held.actor.state_since_ms > idle.actor.state_since_ms, 'state_since_ms moved with the state');
    assert.ok(held.actor.state_since_ms <= f.started_ms, 'entered when the turn was admitted, not when first asked');
    assert.equal(f.provider, 'scripted');
    assert.equal(f.model, app.provider.requests.at(-1)?.model);
    assert.match(f.request_id, /\S/);
    assert.equal(f.model_calls, 1);
    assert.deepEqual(f.pending_tools, []);
    const call = f.model_call!;
    assert.equal(call.provider, 'scripted');
    assert.equal(call.model, f.model);
    assert.equal(call.number, 1);
    assert.equal(call.bytes_received, Buffer.byteLength('héllo wor'), 'UTF-8 bytes of the deltas so far');
    assert.equal(call.reasoning_deltas, 0);
    assert.equal(call.retries, 0);
    assert.ok(call.started_ms >= f.started_ms && call.started_ms <= held.now_ms);
    assert.equal(call.elapsed_ms, held.now_ms - call.started_ms);
    const later = await poll('the held call to age', async () => {
      const d = await c.actor('session', id);
      return d.session!.in_flight!.model_call!.elapsed_ms > call.elapsed_ms ? d : undefined;
    });
    assert.equal(later.actor.state_since_ms, held.actor.state_since_ms, 'still in the same state');
    assert.equal(later.session!.in_flight!.model_call!.text_deltas, 2);

    hold.resolve();
    const tooling = await poll('the shell tool to be pending', async () => {
      const d = await c.actor('session', id);
      return d.session?.in_flight?.pending_tools.length === 1 ? d : undefined;
    });
    const tf = tooling.session!.in_flight!;
    assert.deepEqual(tooling.actor.value, { running: 'executing_tools' });
    assert.ok(tooling.actor.state_since_ms > held.actor.state_since_ms, 'the phase change moved it');
    assert.equal(tf.model_call, null, 'no model call while tools run');
    assert.equal(tf.model_calls, 1);
    assert.equal(tf.pending_tools[0].id, 'sh_1');
    assert.equal(tf.pending_tools[0].name, 'shell');
    assert.ok(tf.pending_tools[0].since_ms <= tooling.now_ms);
    assert.ok(tooling.actor.state_since_ms <= tf.pending_tools[0].since_ms, 'entered executing_tools before the tool started');

    await writeFile(join(app.stateRoot, 'go.flag'), '');
    assert.equal((await turn).text, 'all done');
    const after = await c.actor('session', id);
    assert.equal(after.actor.state, 'idle');
    assert.equal(after.session?.in_flight, null, 'cleared after the turn');
    assert.ok(after.actor.state_since_ms >= tooling.actor.state_since_ms);
  });

  it("lists a mob's member actors under it, each with its state and time in state", async (t) => {
    const app = await startApp(t);
    await rpcOk(app.url, 'mob/create', { mob_id: 'crew', definition: { members: TEAM.members } });
    const c = new WarrenClient(app.url);
    const mob = await poll('the members to be active', async () => {
      const m = (await c.actors({ kind: 'mob' })).actors.find((a) => a.id === 'crew');
      return m?.members?.length === 3 && m.members.every((x) => x.state === 'active') ? m : undefined;
    });
    assert.deepEqual(
      mob.members!.map((m) => [m.kind, m.id, m.labels.agent_identity]),
      [
        ['mob_member', 'crew/planner', 'planner'],
        ['mob_member', 'crew/writer', 'writer'],
        ['mob_member', 'crew/reviewer', 'reviewer'],
      ],
    );
    for (const m of mob.members!) {
      assert.ok(m.state_since_ms >= mob.state_since_ms - 60_000 && m.state_since_ms <= Date.now(), m.id);
      assert.match(m.labels.session_id ?? '', /^[0-9a-f-]{36}$/, 'a member names its session');
      assert.equal('members' in m, false);
    }
    const detail = await c.actor('mob', 'crew');
    assert.equal(detail.actor.members?.length, 3);
    assert.equal(detail.session, undefined);
  });
});
