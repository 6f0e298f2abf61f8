import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { namespacedToolName, serverNameProblem } from '../../../tools/mcp/mcp-names.ts';

describe('MCP tool namespace', () => {
  it('prefixes each tool with its server', () => {
    assert.equal(namespacedToolName('files', 'read'), 'mcp__files__read');
    assert.equal(namespacedToolName('my-srv_2', 'list_dir'), 'mcp__my-srv_2__list_dir');
  });

  it('keeps two servers apart even when server and tool names contain single underscores', () => {
    const names = new Set([
      namespacedToolName('a', 'b__c'),
      namespacedToolName('a_b', 'c'),
      namespacedToolName('a', 'b_c'),
      namespacedToolName('a_b', '_c'),
    ]);
    assert.equal(names.size, 4);
  });

  it('rewrites provider-unsafe or overlong tool names with a hash, still distinct and within 64 characters', () => {
    const dotted = namespacedToolName('srv', 'a.b');
    const underscored = namespacedToolName('srv', 'a_b');
    assert.notEqual(dotted, underscored);
    assert.match(dotted, /^mcp__srv__a_b_[0-9a-f]{8}$/);
    const long1 = namespacedToolName('a'.repeat(32), 'x'.repeat(80) + '1');
    const long2 = namespacedToolName('a'.repeat(32), 'x'.repeat(80) + '2');
    assert.ok(long1.length <= 64 && long2.length <= 64);
    assert.notEqual(long1, long2);
    for (const n of [dotted, long1]) assert.match(n, /^[A-Za-z0-9_-]{1,64}$/);
  });

  it('refuses empty, overlong and separator-bearing server names', () => {
    assert.equal(serverNameProblem('ok-name_1'), null);
    for (const bad of ['', '  ', 'a__b', '_a', 'a.b', 'x'.repeat(33)]) assert.notEqual(serverNameProblem(bad), null, bad);
  });
});
