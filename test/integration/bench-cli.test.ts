// `warren bench --url` as a real child process (main.ts) against a real server whose Anthropic provider
// is the real adapter: --configure points it at the bundled fake LLM for the run (and restores the
// config), a tiny window runs create and continue turns, and the table and the JSON document (--out) count them. Usage errors
// exit 2 with the help text. No timing is asserted.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { call, startApp } from '../helpers/app.ts';
import { nodeEntry } from '../helpers/child-entry.ts';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

function warren(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...nodeEntry('main.ts'), 'bench', ...args], { cwd: REPO, timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('warren bench CLI', { timeout: 200_000 }, () => {
  it('runs create and continue turns against a running server through the bundled fake and prints JSON', async (t) => {
    // No provider overrides: the real Anthropic adapter, pointed at the bundled fake by --configure.
    const app = await startApp(t, [], { providerOverrides: {}, env: { ANTHROPIC_API_KEY: 'bench-key' } });
    const before = await call(app.url, 'GET', '/config');
    const out = join(app.stateRoot, 'bench.json');
    const run = await warren([
      '--url',
      app.url,
      '--configure',
      '--concurrency',
      '2',
      '--duration',
      '300',
      '--warmup',
      '0',
      '--history',
      '2',
      '--out',
      out,
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^\| scenario \| c \| turns\/s \| p50 ms \| p99 ms \| server CPU ms\/turn \| RSS MB \| turns \| errors \|/);
    assert.match(run.stdout, /\| create \| 2 \|/);
    assert.match(run.stdout, /\| continue \(history [0-9.]+\) \| 2 \|/);
    const doc = JSON.parse(await readFile(out, 'utf8'));
    assert.equal(doc.url, app.url);
    assert.equal(doc.provider.wire, 'anthropic');
    assert.equal(doc.provider.bundled_fake, true);
    assert.deepEqual(
      doc.rows.map((r: { scenario: string; concurrency: number }) => [r.scenario, r.concurrency]),
      [
        ['create', 2],
        ['continue', 2],
      ],
    );
    for (const r of doc.rows) {
      assert.ok(r.turns > 0, `${r.scenario}: turns were counted`);
      assert.equal(r.errors, 0, r.first_error);
      for (const k of ['turns_per_s', 'p50_ms', 'p99_ms']) assert.equal(typeof r[k], 'number', k);
      assert.ok(r.server_cpu_ms_per_turn === null || typeof r.server_cpu_ms_per_turn === 'number');
    }
    assert.ok(doc.rows[1].history_turns >= 2);
    assert.equal(doc.totals.turns, doc.rows[0].turns + doc.rows[1].turns);
    // Every session the run created was labelled and archived: none is left in the realm's list.
    assert.match(run.stderr, /archived [1-9]\d* sessions labelled bench\.run=run-/);
    const left = await call(app.url, 'GET', '/sessions');
    assert.deepEqual(left.body.sessions, []);
    // The provider section it patched is restored.
    const after = await call(app.url, 'GET', '/config');
    assert.deepEqual(after.body.config.providers ?? {}, before.body.config.providers ?? {});
  });

  it('answers usage errors with exit 2 and the help text, and --help with exit 0', async () => {
    const missing = await warren(['--duration', '10']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--url is required/);
    assert.match(missing.stderr, /Usage: warren bench/);
    const help = await warren(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /--provider-url/);
  });
});
