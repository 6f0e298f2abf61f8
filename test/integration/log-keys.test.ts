// Every log line of a working server names each key once (pino concatenates child bindings, so a
// module logger derived from another component's logger would print "component" twice).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../config/logger.ts';
import { call, startApp } from '../helpers/app.ts';
import { repeatedKeys } from '../helpers/json-keys.ts';

describe('log lines', () => {
  it('the detector sees a repeated key', () => {
    assert.deepEqual(repeatedKeys('{"a":1,"component":"x","b":{"c":[{"d":1,"d":2}]},"component":"y"}'), ['d', 'component']);
    assert.deepEqual(repeatedKeys('{"a":"{\\"a\\":1}","b":[1,{"a":2}]}'), []);
  });

  it('no line of a server that ran turns and schedules repeats a key', async (t) => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', destination: { write: (line: string) => void lines.push(line) } });
    const app = await startApp(t, [{ text: 'ok' }], { logger });
    assert.equal((await call(app.url, 'POST', '/sessions', { prompt: 'hi', provider: 'scripted' })).status, 200);
    const created = await call(app.url, 'POST', '/schedules', {
      trigger: { type: 'once', due_at_utc: new Date(Date.now() + 3_600_000).toISOString() },
      target: {
        target_kind: 'session',
        type: 'materialize_on_demand_session',
        create: { provider: 'scripted' },
        action: { type: 'prompt', prompt: 'x' },
      },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    await app.close();
    assert.ok(
      lines.some((l) => l.includes('"component":"schedules"')),
      'the schedules component logged',
    );
    for (const line of lines) assert.deepEqual(repeatedKeys(line), [], line);
  });
});
