// The committed replay fixtures (test/fixtures/replay/, made by test/helpers/replay-fixtures.ts from
// sessions recorded on the Anthropic, OpenAI and Gemini wires and a compacted session): each imports and
// replays identical, with no model call. A fixture that diverges after a change names the first changed
// field; regenerate the fixtures when the change is meant (docs/replay.md "Fixtures").
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call, startApp } from '../helpers/app.ts';
import { FIXTURES, readFixture, RECORD_CONFIG } from '../helpers/replay-fixtures.ts';

const FILES = ['scripted-3-turns.jsonl', ...FIXTURES.map((f) => f.file)];

describe('committed replay fixtures', () => {
  it('each fixture imports and replays identical without a model call', async (t) => {
    const app = await startApp(t, [], { config: RECORD_CONFIG });
    for (const file of FILES) {
      const text = await readFixture(file);
      const lines = text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; value?: { calls: unknown[] } });
      const recordings = lines.filter((l) => l.type === 'recording');
      const calls = recordings.reduce((n, l) => n + l.value!.calls.length, 0);
      const imported = await call(app.url, 'POST', '/sessions/import?new_id=true', text, { 'content-type': 'application/x-ndjson' });
      assert.equal(imported.status, 200, `${file}: ${JSON.stringify(imported.body)}`);
      assert.equal(imported.body.recordings, recordings.length);
      const res = await call(app.url, 'POST', `/sessions/${imported.body.session_id}/replay`);
      assert.equal(res.body.status, 'identical', `${file}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.turns, recordings.length, file);
      assert.equal(res.body.calls_checked, calls, `${file}: every recorded call checked`);
    }
    assert.equal(app.provider.requests.length, 0, 'no model call');
  });
});
