// test/config/flags.test.ts: the `warren` command line (config/flags.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { FlagError, HELP_TEXT, parseCli, parseServeArgs } from '../../config/flags.ts';

const DEFAULTS = { isolated: false, exposePaths: false, httpTransport: 'auto', logLevel: 'info', logFormat: 'auto' };

function rejects(argv: string[], pattern: RegExp): void {
  assert.throws(
    () => parseServeArgs(argv),
    (err: unknown) => {
      assert.ok(err instanceof FlagError, 'FlagError expected');
      assert.match(err.message, pattern);
      assert.ok(!err.message.includes('\n'), 'one-line reason');
      return true;
    },
  );
}

describe('parseServeArgs', () => {
  it('returns the defaults for no options', () => {
    assert.deepEqual(parseServeArgs([]), DEFAULTS);
    assert.deepEqual(parseServeArgs(['serve']), DEFAULTS);
  });

  it('parses every option in the "--opt value" form', () => {
    const opts = parseServeArgs([
      '--realm',
      'team_a-1',
      '--instance',
      'node-1',
      '--realm-backend',
      'jsonl',
      '--state-root',
      '/tmp/w/state',
      '--context-root',
      'proj',
      '--user-config-root',
      '/tmp/w/user',
      '--expose-paths',
      '--host',
      '0.0.0.0',
      '--port',
      '0',
      '--http-transport',
      'node',
      '--log-level',
      'debug',
      '--log-format',
      'json',
    ]);
    assert.deepEqual(opts, {
      realm: 'team_a-1',
      isolated: false,
      instance: 'node-1',
      realmBackend: 'jsonl',
      stateRoot: '/tmp/w/state',
      contextRoot: resolve('proj'),
      userConfigRoot: '/tmp/w/user',
      exposePaths: true,
      host: '0.0.0.0',
      port: 0,
      httpTransport: 'node',
      logLevel: 'debug',
      logFormat: 'json',
    });
  });

  it('parses every option in the "--opt=value" form', () => {
    const opts = parseServeArgs([
      '--isolated',
      '--instance=i1',
      '--realm-backend=memory',
      '--state-root=/s',
      '--context-root=/c',
      '--user-config-root=/u',
      '--host=::1',
      '--port=65535',
      '--http-transport=uws',
      '--log-level=silent',
      '--log-format=pretty',
    ]);
    assert.deepEqual(opts, {
      isolated: true,
      exposePaths: false,
      instance: 'i1',
      realmBackend: 'memory',
      stateRoot: '/s',
      contextRoot: '/c',
      userConfigRoot: '/u',
      host: '::1',
      port: 65535,
      httpTransport: 'uws',
      logLevel: 'silent',
      logFormat: 'pretty',
    });
    assert.equal(parseServeArgs(['--realm=r']).realm, 'r');
  });

  it('accepts every backend, transport and log level', () => {
    for (const backend of ['lmdb', 'jsonl', 'memory', 'sqlite', 'postgres'] as const) {
      assert.equal(parseServeArgs(['--realm-backend', backend]).realmBackend, backend);
    }
    for (const transport of ['uws', 'node', 'auto'] as const) {
      assert.equal(parseServeArgs([`--http-transport=${transport}`]).httpTransport, transport);
    }
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const) {
      assert.equal(parseServeArgs(['--log-level', level]).logLevel, level);
    }
    for (const format of ['auto', 'pretty', 'json'] as const) {
      assert.equal(parseServeArgs(['--log-format', format]).logFormat, format);
    }
  });

  it('--default-realm names the realm only when neither --realm nor --isolated does', () => {
    assert.deepEqual(parseServeArgs(['--default-realm', 'local']), { ...DEFAULTS, realm: 'local' });
    assert.equal(parseServeArgs(['--default-realm', 'local', '--realm', 'other']).realm, 'other');
    assert.equal(parseServeArgs(['--realm=other', '--default-realm=local']).realm, 'other');
    const isolated = parseServeArgs(['--default-realm', 'local', '--isolated']);
    assert.equal(isolated.realm, undefined);
    assert.equal(isolated.isolated, true);
    assert.ok(!('defaultRealm' in isolated), 'the default is not an option of its own');
    rejects(['--default-realm', 'bad id'], /--default-realm 'bad id' is invalid/);
  });

  it('rejects unknown options and stray arguments', () => {
    rejects(['--bogus'], /unknown option '--bogus'/);
    rejects(['--bogus=1'], /unknown option '--bogus'/);
    rejects(['extra'], /unexpected argument 'extra'/);
    rejects(['-p', '1'], /unknown option '-p'/);
  });

  it('rejects missing and empty values', () => {
    for (const name of [
      '--realm',
      '--instance',
      '--realm-backend',
      '--state-root',
      '--context-root',
      '--user-config-root',
      '--host',
      '--port',
      '--http-transport',
      '--log-level',
      '--log-format',
      '--default-realm',
    ]) {
      rejects([name], new RegExp(`${name} needs a value`));
      rejects([name, '--expose-paths'], new RegExp(`${name} needs a value`));
      rejects([`${name}=`], new RegExp(`${name} needs a non-empty value`));
    }
  });

  it('rejects bad values', () => {
    for (const port of ['abc', '-1', '65536', '1.5', '8080x', ' 80']) {
      rejects(['--port', port], /--port must be an integer from 0 to 65535/);
    }
    rejects(['--realm', '-lead'], /--realm '-lead' is invalid/);
    rejects(['--realm', 'a'.repeat(65)], /--realm .* is invalid/);
    rejects(['--realm', 'has space'], /is invalid/);
    rejects(['--realm', '0190d6a2-7c1e-7b3a-9f00-0123456789ab'], /must not be UUID-shaped/);
    rejects(['--instance', 'bad/id'], /--instance 'bad\/id' is invalid/);
    rejects(['--realm-backend', 'cassandra'], /--realm-backend must be one of lmdb, jsonl, memory, sqlite, postgres/);
    rejects(['--http-transport', 'h2'], /--http-transport must be one of uws, node, auto/);
    rejects(['--log-level', 'verbose'], /--log-level must be one of/);
    rejects(['--log-format', 'yaml'], /--log-format must be one of auto, pretty, json/);
  });

  it('rejects flag values, repeats and --isolated with --realm', () => {
    rejects(['--isolated=true'], /--isolated takes no value/);
    rejects(['--expose-paths=1'], /--expose-paths takes no value/);
    rejects(['--port', '1', '--port', '2'], /--port given more than once/);
    rejects(['--isolated', '--realm', 'r'], /--isolated cannot be combined with --realm/);
  });

  it('accepts a 64-character realm id starting with a digit', () => {
    const id = `9${'x'.repeat(63)}`;
    assert.equal(parseServeArgs(['--realm', id]).realm, id);
  });
});

describe('parseCli', () => {
  it('recognises help in every position', () => {
    for (const argv of [['--help'], ['-h'], ['help'], ['serve', '--help'], ['serve', '--port', 'abc', '-h']]) {
      assert.deepEqual(parseCli(argv), { command: 'help' });
    }
  });

  it('returns serve options', () => {
    assert.deepEqual(parseCli(['serve', '--port', '9']), { command: 'serve', options: { ...DEFAULTS, port: 9 } });
  });

  it('rejects a missing or unknown command', () => {
    assert.throws(() => parseCli([]), FlagError);
    assert.throws(() => parseCli(['run']), /unknown command 'run'/);
  });

  it('documents every option in HELP_TEXT', () => {
    for (const name of [
      '--realm',
      '--isolated',
      '--instance',
      '--realm-backend',
      '--state-root',
      '--context-root',
      '--user-config-root',
      '--expose-paths',
      '--host',
      '--port',
      '--http-transport',
      '--log-level',
      '--log-format',
      '--default-realm',
      '--help',
    ]) {
      assert.ok(HELP_TEXT.includes(name), `${name} missing from help`);
    }
  });
});
