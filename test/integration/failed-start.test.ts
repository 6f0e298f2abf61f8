// A start that fails leaves nothing behind: a new realm created for a server whose port is taken is
// removed again, while an existing realm is left as it was.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import pino from 'pino';
import { createApp } from '../../app.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';

async function takenPort(t: { after(fn: () => unknown): void }): Promise<number> {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => blocker.close(() => resolve())));
  return (blocker.address() as { port: number }).port;
}

describe('a failed start', () => {
  it('removes the realm it created when the port is in use, and keeps an existing one', async (t) => {
    const dir = await tmpDir('warren-failed-start-');
    t.after(() => dir.cleanup());
    const port = await takenPort(t);
    const base = { host: '127.0.0.1', port, stateRoot: dir.path, contextRoot: dir.path, logger: pino({ level: 'silent' }) };

    await assert.rejects(createApp({ ...base, realm: 'fresh' }), /EADDRINUSE|in use/);
    assert.equal(existsSync(path.join(dir.path, 'fresh')), false, 'no realm directory from a failed start');

    const ok = await createApp({ ...base, port: 0, realm: 'kept' });
    await ok.close();
    await assert.rejects(createApp({ ...base, realm: 'kept' }), /EADDRINUSE|in use/);
    assert.equal(existsSync(path.join(dir.path, 'kept', 'realm_manifest.json')), true, 'an existing realm is untouched');
  });
});
