// ToolContributions: declared contributions are looked up per session by flag and capability; a source is
// asked only for sessions that switched its flag on, and fixed tools are handed out as the same objects.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ToolContributions } from '../../actors/tool-contributions.ts';
import { sessionSettings } from '../helpers/store-builders.ts';
import type { Tool } from '../../tools/tool.ts';

const tool = (name: string): Tool =>
  ({ name, description: name, inputSchema: { type: 'object' }, run: async () => ({ text: name }) }) as unknown as Tool;

const base = sessionSettings();

describe('ToolContributions', () => {
  it('offers fixed tools only to sessions with the flag on, as the same objects', () => {
    const schedule = [tool('schedule_create')];
    const c = new ToolContributions(() => true);
    c.add({ owner: 'schedules', flag: 'schedule', tools: schedule });
    assert.deepEqual(c.forSession('s1', base), []);
    const on = c.forSession('s1', { ...base, schedule: true });
    assert.equal(on.length, 1);
    assert.equal(on[0], schedule[0]);
  });

  it('asks a source only for sessions that switched it on, with their id and settings', () => {
    const asked: string[] = [];
    const c = new ToolContributions(() => true);
    c.add({
      owner: 'mob',
      flag: 'mob_member',
      tools: {
        toolsFor: (id, s) => {
          asked.push(`${id}:${s.mob_member?.agent_identity}`);
          return [tool(`mob_${id}`)];
        },
      },
    });
    c.add({ owner: 'comms', flag: 'comms_name', tools: { toolsFor: (id) => [tool(`comms_${id}`)] } });
    assert.deepEqual(c.forSession('a', base), []);
    assert.deepEqual(c.forSession('b', { ...base, comms_name: '' }), [], 'an empty comms name is off');
    assert.deepEqual(asked, []);
    const names = c.forSession('c', { ...base, comms_name: 'c', mob_member: { mob_id: 'm', agent_identity: 'lead' } }).map((t) => t.name);
    assert.deepEqual(names, ['mob_c', 'comms_c'], 'registration order');
    assert.deepEqual(asked, ['c:lead']);
  });

  it('follows the capability: tools disappear while it is not Available', () => {
    let available = true;
    const c = new ToolContributions((id) => id === 'skills' && available);
    c.add({ owner: 'skills', flag: 'builtins', capability: 'skills', tools: [tool('skill_load')] });
    assert.equal(c.forSession('s', { ...base, builtins: true }).length, 1);
    available = false;
    assert.equal(c.forSession('s', { ...base, builtins: true }).length, 0);
  });

  it('offers an unflagged contribution to every session and refuses a second contribution of one owner', () => {
    const c = new ToolContributions(() => true);
    c.add({ owner: 'protocols', tools: { toolsFor: () => [tool('a2a__peer')] } });
    assert.deepEqual(
      c.forSession('s', base).map((t) => t.name),
      ['a2a__peer'],
    );
    assert.throws(() => c.add({ owner: 'protocols', tools: [] }), /tools contributed twice by protocols/);
  });
});
