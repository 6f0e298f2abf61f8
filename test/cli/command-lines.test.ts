// The one command-line parser (config/cli-args.ts, node:util parseArgs underneath) and the commands built on
// it: an unknown option and a missing value end every command with a one-line reason and a non-zero exit,
// before it opens a realm or calls a server.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CliArgsError, parseLine, wantsHelp } from '../../config/cli-args.ts';
import { parseAuthArgs } from '../../config/auth-cli.ts';
import { FlagError } from '../../config/flags.ts';
import { runKeysCli } from '../../cli/keys-command.ts';
import { runMobCli } from '../../cli/mob-command.ts';
import { runReplayCli } from '../../cli/replay-command.ts';
import { runWorkGraphCli } from '../../cli/workgraph-command.ts';
import { runBenchCli } from '../../bench/cli.ts';

const OPTIONS = {
  realm: { type: 'string' },
  label: { type: 'string', multiple: true },
  json: { type: 'boolean' },
  out: { type: 'string', short: 'o' },
  'node-flags': { type: 'string' },
} as const;

function refuses(args: string[], message: string, positionals = true): void {
  assert.throws(
    () => parseLine(args, OPTIONS, { positionals }),
    (err: unknown) => err instanceof CliArgsError && err.message === message,
    `${JSON.stringify(args)} → ${message}`,
  );
}

describe('parseLine (config/cli-args.ts)', () => {
  it('reads values written either way, repeatable options, flags, shorts and positionals in order', () => {
    const { values, positionals } = parseLine(
      ['a', '--realm', 'r1', '--label=x=1', 'b', '--label', 'y=2', '--json', '-o', 'f.jsonl', '--', '--not-an-option'],
      OPTIONS,
    );
    assert.deepEqual({ ...values }, { realm: 'r1', label: ['x=1', 'y=2'], json: true, out: 'f.jsonl' });
    assert.deepEqual(positionals, ['a', 'b', '--not-an-option']);
  });

  it('takes a value that starts with dashes unless it is one of the options', () => {
    assert.equal(parseLine(['--node-flags', '--max-old-space-size=8192'], OPTIONS).values['node-flags'], '--max-old-space-size=8192');
    assert.equal(parseLine(['--realm', '-lead'], OPTIONS).values.realm, '-lead');
    refuses(['--realm', '--json'], '--realm needs a value');
    refuses(['--realm', '--label=x'], '--realm needs a value');
    refuses(['--realm', '-o'], '--realm needs a value');
  });

  it('refuses unknown options, missing, empty and unwanted values, repeats and stray arguments', () => {
    refuses(['--bogus'], "unknown option '--bogus'");
    refuses(['--bogus=1'], "unknown option '--bogus'");
    refuses(['-x'], "unknown option '-x'");
    refuses(['-r', 'r1'], "unknown option '-r'");
    refuses(['--realm'], '--realm needs a value');
    refuses(['-o'], '-o needs a value');
    refuses(['--realm='], '--realm needs a non-empty value');
    refuses(['--json=yes'], '--json takes no value');
    refuses(['--realm', 'a', '--realm=b'], '--realm given more than once');
    refuses(['extra'], "unexpected argument 'extra'", false);
    assert.deepEqual(parseLine(['extra'], OPTIONS).positionals, ['extra']);
  });

  it('sees a help request anywhere before --', () => {
    assert.equal(wantsHelp(['list', '--bogus', '-h']), true);
    assert.equal(wantsHelp(['--help']), true);
    assert.equal(wantsHelp(['list', '--', '--help']), false);
    assert.equal(wantsHelp(['list']), false);
  });
});

describe('commands: an unknown option or a missing value is a usage error', () => {
  it('warren keys (exit 2)', async () => {
    const unknown = await runKeysCli(['list', '--realm', 'r', '--bogus']);
    assert.deepEqual(unknown, { code: 2, stdout: '', stderr: "warren: unknown option '--bogus'\n" });
    const missing = await runKeysCli(['create', '--name', 'n', '--realm']);
    assert.deepEqual(missing, { code: 2, stdout: '', stderr: 'warren: --realm needs a value\n' });
    assert.match((await runKeysCli(['list', '--help'])).stdout, /^Usage: warren keys create/);
  });

  it('warren replay, fork, rerun, export, import (exit 2, with the usage)', async () => {
    const unknown = await runReplayCli(['replay', 's1', '--bogus']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^warren: unknown option '--bogus'\nUsage:/);
    const missing = await runReplayCli(['fork', 's1', '--at-turn']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /^warren: --at-turn needs a value\n/);
    const short = await runReplayCli(['export', 's1', '-o']);
    assert.match(short.stderr, /^warren: -o needs a value\n/);
    const help = await runReplayCli(['rerun', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /warren rerun <session> --model M/);
  });

  it('warren mob (exit 1)', async () => {
    assert.deepEqual(await runMobCli(['mob/list', '--bogus']), {
      code: 1,
      stdout: '',
      stderr: "warren mob: unknown option '--bogus'\n",
    });
    assert.deepEqual(await runMobCli(['mob/list', '--url']), { code: 1, stdout: '', stderr: 'warren mob: --url needs a value\n' });
  });

  it('warren workgraph (exit 1, JSON error)', async () => {
    const unknown = await runWorkGraphCli(['list', '--realm', 'r', '--bogus']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /unknown option '--bogus'/);
    const missing = await runWorkGraphCli(['show', 'item', '--namespace']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /--namespace needs a value/);
    const twice = await runWorkGraphCli(['list', '--limit', '1', '--limit', '2']);
    assert.match(twice.stderr, /--limit given more than once/);
  });

  it('warren bench (exit 2, with the usage)', async () => {
    const unknown = await runBenchCli(['--url', 'http://127.0.0.1:1', '--bogus']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^warren bench: unknown option '--bogus'\n\nUsage: warren bench/);
    const missing = await runBenchCli(['--url']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /^warren bench: --url needs a value\n/);
    const stray = await runBenchCli(['http://127.0.0.1:1']);
    assert.match(stray.stderr, /^warren bench: unexpected argument 'http:\/\/127\.0\.0\.1:1'\n/);
  });

  it('warren auth (FlagError: main prints it and exits 1)', () => {
    assert.throws(
      () => parseAuthArgs(['list', '--realm', 'r', '--bogus']),
      (err: unknown) => err instanceof FlagError && err.message === "unknown option '--bogus' for warren auth list",
    );
    assert.throws(
      () => parseAuthArgs(['status', '--binding', 'b', '--realm']),
      (err: unknown) => err instanceof FlagError && err.message === '--realm needs a value',
    );
    assert.throws(() => parseAuthArgs(['store', '--secret=x']), /secrets are read from stdin/);
  });
});
