// The inspection API behind the actor viewer, through @warren/client: actor listing with filters and
// counts, the machine definition, one actor's detail, the inspection stream (transitions of a turn,
// off until subscribed) and a session's time travel through its ledger.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { WarrenClient, isWarrenError, type ActorTransition } from '../../client/src/client.ts';
import { startApp } from '../helpers/app.ts';
import { deferred } from '../helpers/gates.ts';

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
});
