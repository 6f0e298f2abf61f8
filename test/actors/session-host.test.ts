import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PersistedState } from '../../actors/session/session-types.ts';
import { createScriptedProvider } from '../../providers/scripted.ts';
import type { SessionRecord } from '../../storage/store.ts';
import { openTestRuntime } from '../helpers/runtime.ts';
import { sessionSettings } from '../helpers/store-builders.ts';

function record(id: string, now: number): SessionRecord {
  const state: PersistedState = {
    v: 1,
    machine: null,
    sysctx: {},
    prompts: {},
    revision: 0,
    settings: sessionSettings(),
  };
  return {
    v: 2,
    session_id: id,
    created_at_ms: now,
    updated_at_ms: now,
    archived: false,
    labels: {},
    message_count: 0,
    total_tokens: 0,
    state,
  };
}

const turn = (requestId: string) => ({
  requestId,
  kind: 'continue' as const,
  prompt: 'hi',
  signal: new AbortController().signal,
  onCommitting: () => {},
});

describe('session host in the actor registry (real lmdb, injected clock)', () => {
  it('sheds quiet sessions, evicts long-idle ones, and hydrates them back intact', async (t) => {
    let clock = 1_000_000;
    const provider = createScriptedProvider([{ text: 'a' }, { text: 'b' }]);
    const { runtime, sessions: sup } = await openTestRuntime(t, { provider, now: () => clock, policy: { maxResident: 10 } });
    const actor = sup.adopt(record('s1', clock));
    await actor.persist();
    assert.equal((await actor.runTurn(turn('r1'))).text, 'a');
    assert.equal(actor.dormant, false);

    clock += 1_000;
    runtime.registry.sweep();
    assert.equal(actor.dormant, false, 'not quiet long enough');
    clock += 1_500;
    runtime.registry.sweep();
    assert.equal(actor.dormant, true, 'shed after shedAfterMs');
    assert.equal(sup.residentCount, 1);

    clock += 60_000;
    runtime.registry.sweep();
    assert.equal(sup.residentCount, 0, 'evicted after idleEvictMs');
    const back = await sup.get('s1');
    assert.notEqual(back, actor, 'a new actor was hydrated from storage');
    assert.equal(back.snapshotRecord.message_count, 2);
    assert.equal((await back.runTurn(turn('r2'))).text, 'b');
    assert.equal(back.machine.getSnapshot().context.turnCount, 2, 'the machine context survived shed, evict and hydrate');
  });

  it('evicts the least recently used idle actors beyond maxResident', async (t) => {
    const { sessions: sup } = await openTestRuntime(t, {
      provider: createScriptedProvider([]),
      policy: { idleEvictMs: 600_000, shedAfterMs: 600_000, maxResident: 3 },
    });
    for (const id of ['a', 'b', 'c']) await sup.adopt(record(id, 1)).persist();
    await sup.get('a'); // 'a' becomes most recently used
    await sup.adopt(record('d', 1)).persist();
    assert.equal(sup.residentCount, 3);
    assert.equal(sup.peek('b'), undefined, 'the least recently used one went');
    assert.ok(sup.peek('a') && sup.peek('c') && sup.peek('d'));
  });
});
