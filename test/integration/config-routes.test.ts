// test/integration/config-routes.test.ts: GET/PUT/PATCH /config through the real server on both HTTP
// transports: direct and wrapped bodies, RFC 7396 merge patch, the generation compare-and-set (also
// under concurrent writers) and validation that leaves the config untouched (SPEC.md "Observation and
// system routes", "Versioning"; wire-notes §2.8, §11 item 18).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { uwsSkip } from '../helpers/absent.ts';
import { call, startApp, type JsonReply } from '../helpers/app.ts';

const UWS_SKIP = uwsSkip();

function assertConflict(res: JsonReply, expected: number, current: number): void {
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.equal(res.body.code, 'BAD_REQUEST');
  assert.equal(res.body.error, `Generation conflict: expected ${expected}, current ${current}`);
}

/** Fires `n` PATCHes with one expected_generation at once; exactly one may win. */
async function racePatches(url: string, n: number, expected: number): Promise<JsonReply[]> {
  return Promise.all(
    Array.from({ length: n }, (_, i) =>
      call(url, 'PATCH', '/config', { patch: { agent: { model: `racer-${i}` } }, expected_generation: expected }),
    ),
  );
}

for (const transport of ['uws', 'node'] as const) {
  describe(`config routes (${transport})`, { skip: transport === 'uws' ? (UWS_SKIP ?? false) : false }, () => {
    const opts = { httpTransport: transport };

    it('PUT with a direct Config object replaces the config and bumps the generation', async (t) => {
      const app = await startApp(t, [], opts);
      const before = (await call(app.url, 'GET', '/config')).body;
      const next = structuredClone(before.config);
      next.agent.model = 'claude-opus-5';
      next.tools.builtins_enabled = true;
      const put = await call(app.url, 'PUT', '/config', next);
      assert.equal(put.status, 200, JSON.stringify(put.body));
      assert.equal(put.body.generation, before.generation + 1);
      assert.deepEqual(put.body.config, next);
      const read = await call(app.url, 'GET', '/config');
      assert.deepEqual(read.body, put.body, 'GET shows what PUT answered');
    });

    it('PUT replaces rather than merges: keys left out fall back to their defaults', async (t) => {
      const app = await startApp(t, [], opts);
      await call(app.url, 'PATCH', '/config', { tools: { shell_enabled: true }, agent: { max_tokens_per_turn: 999 } });
      const put = await call(app.url, 'PUT', '/config', { agent: { model: 'gpt-5.5' } });
      assert.equal(put.status, 200, JSON.stringify(put.body));
      assert.equal(put.body.config.agent.model, 'gpt-5.5');
      assert.equal(put.body.config.agent.max_tokens_per_turn, 16384);
      assert.equal(put.body.config.tools.shell_enabled, false);
      assert.equal(put.body.generation, 2);
    });

    it('PUT with the wrapped form {config, expected_generation} checks the generation', async (t) => {
      const app = await startApp(t, [], opts);
      const base = (await call(app.url, 'GET', '/config')).body;
      const config = { ...structuredClone(base.config), agent: { ...base.config.agent, model: 'gemini-3.5-flash' } };
      const ok = await call(app.url, 'PUT', '/config', { config, expected_generation: 0 });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal(ok.body.generation, 1);
      assert.equal(ok.body.config.agent.model, 'gemini-3.5-flash');
      assert.equal('expected_generation' in ok.body.config, false, 'the wrapper is not stored as config');
      assertConflict(await call(app.url, 'PUT', '/config', { config, expected_generation: 0 }), 0, 1);
      const nullGuard = await call(app.url, 'PUT', '/config', { config, expected_generation: null });
      assert.equal(nullGuard.status, 200, 'a null expected_generation means no check');
      assert.equal(nullGuard.body.generation, 2);
    });

    it('PATCH with a direct merge patch changes only the named keys', async (t) => {
      const app = await startApp(t, [], opts);
      const before = (await call(app.url, 'GET', '/config')).body;
      const res = await call(app.url, 'PATCH', '/config', { agent: { max_tokens_per_turn: 2048 } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.generation, 1);
      const expected = structuredClone(before.config);
      expected.agent.max_tokens_per_turn = 2048;
      assert.deepEqual(res.body.config, expected);
      const again = await call(app.url, 'PATCH', '/config', { agent: { max_tokens_per_turn: 3072 } });
      assert.equal(again.body.config.agent.max_tokens_per_turn, 3072);
      assert.equal(again.body.generation, 2);
    });

    it('PATCH follows RFC 7396: null deletes a key, a deleted defaulted key returns to its default', async (t) => {
      const app = await startApp(t, [], opts);
      let res = await call(app.url, 'PATCH', '/config', {
        agent: { system_prompt: 'be brief', max_tokens_per_turn: 100 },
        custom: { keep: 1, drop: 2 },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.config.agent.system_prompt, 'be brief');
      assert.deepEqual(res.body.config.custom, { keep: 1, drop: 2 }, 'unknown sections are kept');
      res = await call(app.url, 'PATCH', '/config', { agent: { system_prompt: null, max_tokens_per_turn: null }, custom: { drop: null } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal('system_prompt' in res.body.config.agent, false);
      assert.equal(res.body.config.agent.max_tokens_per_turn, 16384);
      assert.deepEqual(res.body.config.custom, { keep: 1 });
      res = await call(app.url, 'PATCH', '/config', { custom: null });
      assert.equal('custom' in res.body.config, false);
      assert.equal(res.body.generation, 3);
    });

    it('PATCH with the wrapped form {patch, expected_generation} applies the patch under the check', async (t) => {
      const app = await startApp(t, [], opts);
      const ok = await call(app.url, 'PATCH', '/config', { patch: { tools: { builtins_enabled: true } }, expected_generation: 0 });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal(ok.body.config.tools.builtins_enabled, true);
      assert.equal('patch' in ok.body.config, false, 'the wrapper is not stored as config');
      assert.equal(ok.body.generation, 1);
      const unguarded = await call(app.url, 'PATCH', '/config', { patch: { tools: { shell_enabled: true } } });
      assert.equal(unguarded.status, 200);
      assert.equal(unguarded.body.generation, 2);
    });

    it('a stale expected_generation answers 400 BAD_REQUEST with a generation-conflict message and changes nothing', async (t) => {
      const app = await startApp(t, [], opts);
      await call(app.url, 'PATCH', '/config', { agent: { model: 'first' } });
      const before = (await call(app.url, 'GET', '/config')).body;
      assertConflict(await call(app.url, 'PATCH', '/config', { patch: { agent: { model: 'stale' } }, expected_generation: 0 }), 0, 1);
      assertConflict(await call(app.url, 'PATCH', '/config', { patch: { agent: { model: 'future' } }, expected_generation: 7 }), 7, 1);
      assert.deepEqual((await call(app.url, 'GET', '/config')).body, before);
    });

    it('a malformed expected_generation answers 400', async (t) => {
      const app = await startApp(t, [], opts);
      for (const expected_generation of ['1', -1, 1.5]) {
        const res = await call(app.url, 'PATCH', '/config', { patch: { agent: { model: 'x' } }, expected_generation });
        assert.equal(res.status, 400, `${JSON.stringify(expected_generation)}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.code, 'BAD_REQUEST');
      }
      assert.equal((await call(app.url, 'GET', '/config')).body.generation, 0);
    });

    for (const racers of [2, 10]) {
      it(`${racers} concurrent PATCHes with one expected_generation: exactly one wins`, async (t) => {
        const app = await startApp(t, [], opts);
        const results = await racePatches(app.url, racers, 0);
        const winners = results.filter((r) => r.status === 200);
        assert.equal(winners.length, 1, JSON.stringify(results.map((r) => [r.status, r.body.error])));
        for (const loser of results.filter((r) => r.status !== 200)) assertConflict(loser, 0, 1);
        const final = (await call(app.url, 'GET', '/config')).body;
        assert.equal(final.generation, 1);
        assert.equal(final.config.agent.model, winners[0].body.config.agent.model);
        const state = JSON.parse(await readFile(join(app.stateRoot, 'test-realm', 'config_state.json'), 'utf8'));
        assert.deepEqual(state, { generation: 1 }, 'the generation on disk agrees');
      });
    }

    it('concurrent PATCHes without expected_generation all apply, one generation each', async (t) => {
      const app = await startApp(t, [], opts);
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => call(app.url, 'PATCH', '/config', { custom: { [`k${i}`]: i } })),
      );
      assert.deepEqual(
        results.map((r) => r.status),
        Array(10).fill(200),
      );
      assert.deepEqual(
        results.map((r) => r.body.generation).sort((a, b) => a - b),
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
      );
      const final = (await call(app.url, 'GET', '/config')).body;
      assert.equal(Object.keys(final.config.custom).length, 10, 'no write was lost');
    });

    it('an invalid config answers 400 and GET shows nothing changed', async (t) => {
      const app = await startApp(t, [], opts);
      await call(app.url, 'PATCH', '/config', { agent: { model: 'kept' } });
      const before = (await call(app.url, 'GET', '/config')).body;
      const attempts: Array<[string, unknown]> = [
        ['PATCH', { agent: { max_tokens_per_turn: 0 } }],
        ['PATCH', { rest: { port: 'x' } }],
        ['PATCH', { patch: { rest: { port: 70000 } }, expected_generation: 1 }],
        ['PATCH', { tools: { builtins_enabled: 'yes' } }],
        ['PUT', { ...before.config, agent: { ...before.config.agent, max_tokens_per_turn: 0 } }],
        ['PUT', { config: { ...before.config, rest: { host: '127.0.0.1', port: 'x' } }, expected_generation: 1 }],
        ['PUT', { config: 'not an object' }],
      ];
      for (const [method, body] of attempts) {
        const res = await call(app.url, method, '/config', body);
        assert.equal(res.status, 400, `${method} ${JSON.stringify(body).slice(0, 80)} -> ${JSON.stringify(res.body)}`);
        assert.equal(res.body.code, 'BAD_REQUEST');
        assert.match(res.body.error, /^Invalid (config|patch): /);
      }
      assert.deepEqual((await call(app.url, 'GET', '/config')).body, before);
    });
  });
}
