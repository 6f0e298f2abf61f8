// test/config/toml.test.ts: config.toml load/save, defaults, validation, RFC 7396 merge patch.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServiceError } from '../../contracts/errors.ts';
import { ConfigFileError, defaultConfig, loadConfigFile, mergePatch, validateConfig, writeConfigFileAtomic } from '../../config/toml.ts';

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'warren-toml-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

function invalid(value: unknown, pattern: RegExp, label?: 'config' | 'patch'): void {
  assert.throws(
    () => validateConfig(value, label),
    (err: unknown) => {
      assert.ok(err instanceof ServiceError);
      assert.equal(err.code, 'BAD_REQUEST');
      assert.equal(err.status, 400);
      assert.match(err.message, pattern);
      return true;
    },
  );
}

describe('defaultConfig', () => {
  it('has every section with its documented defaults', () => {
    assert.deepEqual(defaultConfig(), {
      rest: { host: '127.0.0.1', port: 8080, allowed_hosts: [], allowed_origins: [] },
      agent: { model: '', max_tokens_per_turn: 16384, structured_output_retries: 2, budget_warning_threshold: 0.8 },
      tools: {
        builtins_enabled: false,
        shell_enabled: false,
        schedule_enabled: true,
        workgraph_enabled: false,
        comms_enabled: false,
        mob_enabled: false,
        default_timeout_secs: 600,
        max_concurrent: 10,
        mcp_servers: [],
      },
      shell: { program: 'bash', timeout_secs: 30, max_output_chars: 100000 },
      retry: { max_retries: 3, initial_delay_ms: 500, max_delay_ms: 30000, multiplier: 2 },
      skills: { enabled: true, max_injection_bytes: 32768, repositories: [] },
      compaction: { enabled: true, recent_turn_budget: 4, max_summary_tokens: 4096, min_turns_between_compactions: 3 },
      memory: { enabled_by_default: false },
      limits: { max_sessions: 100000, max_body_bytes: 4194304, max_json_depth: 64 },
      ledger: { max_entries_per_session: 10000, max_age_days: 30, keep_text_deltas: false },
      budget: {},
      hooks: { default_timeout_ms: 5000, payload_max_bytes: 131072, background_max_concurrency: 32, entries: [] },
      comms: { inbox_capacity: 1024, trusted_peers: [], outbound_taint: 'undeclared', peer_timeout_ms: 5000 },
      providers: {},
      network: { deny_cidrs: [], allow_cidrs: [] },
    });
  });

  it('returns a fresh object each time', () => {
    const a = defaultConfig();
    a.rest.port = 1;
    assert.equal(defaultConfig().rest.port, 8080);
  });
});

describe('validateConfig', () => {
  it('fills defaults around partial sections and keeps unknown keys', () => {
    const input = {
      rest: { port: 9000 },
      agent: { extra: 'x' },
      custom: { a: [1, 2] },
      providers: { openai: { base_url: 'http://x', other: 1 } },
    };
    const cfg = validateConfig(input);
    assert.equal(cfg.rest.port, 9000);
    assert.equal(cfg.rest.host, '127.0.0.1');
    assert.equal((cfg.agent as Record<string, unknown>).extra, 'x');
    assert.deepEqual((cfg as Record<string, unknown>).custom, { a: [1, 2] });
    assert.deepEqual(cfg.providers.openai, { base_url: 'http://x', other: 1 });
    assert.deepEqual(input.rest, { port: 9000 }, 'input untouched');
  });

  it('drops null members (TOML has no null)', () => {
    const cfg = validateConfig({ agent: { system_prompt: null }, max_tokens: null });
    assert.equal('system_prompt' in cfg.agent, false);
    assert.equal('max_tokens' in cfg, false);
  });

  it('rejects wrong types and out-of-range values with the path', () => {
    invalid({ agent: { max_tokens_per_turn: 0 } }, /^Invalid config: \/agent\/max_tokens_per_turn: /);
    invalid({ rest: { port: 70000 } }, /^Invalid config: \/rest\/port: /);
    invalid({ rest: { port: 'x' } }, /\/rest\/port/);
    invalid({ tools: { shell_enabled: 'yes' } }, /\/tools\/shell_enabled/);
    invalid({ retry: { multiplier: 0.5 } }, /\/retry\/multiplier/);
    invalid({ agent: { budget_warning_threshold: 2 } }, /\/agent\/budget_warning_threshold/);
    invalid({ max_tokens: 0 }, /\/max_tokens/);
    invalid({ rest: 5 }, /\/rest/);
    invalid({ providers: { x: { timeout_secs: -1 } } }, /\/providers\/x\/timeout_secs/);
    invalid({ custom: [1, null] }, /\/custom\/1: null is not allowed in arrays/);
    invalid(JSON.parse('{"__proto__": {"x": 1}}'), /__proto__: key is not allowed/);
    invalid([], /expected a JSON object/);
    invalid({ agent: { max_tokens_per_turn: 0 } }, /^Invalid patch: /, 'patch');
  });
});

describe('loadConfigFile / writeConfigFileAtomic', () => {
  it('returns defaults for a missing file', async () => {
    assert.deepEqual(await loadConfigFile(join(dir, 'missing.toml')), defaultConfig());
  });

  it('loads a partial file and applies defaults', async () => {
    const file = join(dir, 'partial.toml');
    await writeFile(
      file,
      '[rest]\nport = 9191\n\n[agent]\nmodel = "claude-x"\n\n[providers.self_hosted]\nbase_url = "http://127.0.0.1:11434"\n',
    );
    const cfg = await loadConfigFile(file);
    assert.equal(cfg.rest.port, 9191);
    assert.equal(cfg.agent.model, 'claude-x');
    assert.equal(cfg.agent.max_tokens_per_turn, 16384);
    assert.deepEqual(cfg.providers, { self_hosted: { base_url: 'http://127.0.0.1:11434' } });
    assert.equal(Object.getPrototypeOf(cfg.rest), Object.prototype, 'plain objects, not null-prototype tables');
  });

  it('reports invalid TOML with line and column', async () => {
    const file = join(dir, 'broken.toml');
    await writeFile(file, '[rest]\nport = \n');
    await assert.rejects(loadConfigFile(file), (err: unknown) => {
      assert.ok(err instanceof ConfigFileError);
      assert.equal(err.line, 2);
      assert.equal(typeof err.column, 'number');
      assert.match(err.message, /^Invalid TOML in .*broken\.toml at line 2, column \d+: /);
      assert.ok(!err.message.includes('\n'));
      return true;
    });
  });

  it('reports a file that parses but does not validate', async () => {
    const file = join(dir, 'bad-values.toml');
    await writeFile(file, '[agent]\nmax_tokens_per_turn = 0\n');
    await assert.rejects(loadConfigFile(file), (err: unknown) => {
      assert.ok(err instanceof ConfigFileError);
      assert.match(err.message, /Invalid config: \/agent\/max_tokens_per_turn: .*bad-values\.toml/);
      return true;
    });
  });

  it('round-trips a config and leaves no temp files', async () => {
    const file = join(dir, 'round.toml');
    const cfg = validateConfig({ agent: { system_prompt: 'be brief', budget_warning_threshold: 0.5 }, extra: { list: ['a', 'b'] } });
    await writeConfigFileAtomic(file, cfg);
    await writeConfigFileAtomic(file, cfg);
    assert.deepEqual(await loadConfigFile(file), cfg);
    assert.match(await readFile(file, 'utf8'), /^# Warren realm config/);
    assert.deepEqual(
      (await readdir(dir)).filter((f) => f.startsWith('round')),
      ['round.toml'],
    );
  });
});

describe('mergePatch (RFC 7396)', () => {
  // RFC 7396 Appendix A, row by row: [original, patch, result].
  const appendixA: Array<[unknown, unknown, unknown]> = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];

  for (const [index, [original, patch, expected]] of appendixA.entries()) {
    it(`matches Appendix A example ${index + 1}`, () => {
      assert.deepEqual(mergePatch(original, patch), expected);
    });
  }

  it('matches the RFC section 3 example', () => {
    const target = {
      title: 'Goodbye!',
      author: { givenName: 'John', familyName: 'Doe' },
      tags: ['example', 'sample'],
      content: 'This will be unchanged',
    };
    const patch = { title: 'Hello!', phoneNumber: '+01-123-456-7890', author: { familyName: null }, tags: ['example'] };
    assert.deepEqual(mergePatch(target, patch), {
      title: 'Hello!',
      author: { givenName: 'John' },
      tags: ['example'],
      content: 'This will be unchanged',
      phoneNumber: '+01-123-456-7890',
    });
  });

  it('never mutates its inputs and shares no objects with them', () => {
    const target = { a: { b: 1 }, keep: { deep: [1, { x: 1 }] } };
    const patch = { a: { c: { d: 2 } }, list: [{ y: 1 }] };
    const targetCopy = structuredClone(target);
    const patchCopy = structuredClone(patch);
    const result = mergePatch(target, patch) as Record<string, Record<string, unknown>>;
    assert.deepEqual(target, targetCopy);
    assert.deepEqual(patch, patchCopy);
    assert.notEqual(result.keep, target.keep);
    assert.notEqual(result.a?.c, patch.a.c);
    assert.notEqual(result.list, patch.list);
  });

  it('treats a __proto__ key as data, not as the prototype', () => {
    const result = mergePatch({}, JSON.parse('{"__proto__": {"polluted": true}}')) as Record<string, unknown>;
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.getPrototypeOf(result), Object.prototype);
    assert.deepEqual(Object.keys(result), ['__proto__']);
  });
});
