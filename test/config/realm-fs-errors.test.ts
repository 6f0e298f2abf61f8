// A state root Warren cannot write (read-only file system, no permission, a file in the way) fails the
// start with a message that says what is wrong and where, not Node's ENOENT of a recursive mkdir.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pino from 'pino';
import { isServiceError } from '../../contracts/errors.ts';
import { openRealm } from '../../config/realm.ts';
import { mountTmpfs } from '../helpers/mount.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';

const logger = pino({ level: 'silent' });

async function openFails(stateRoot: string): Promise<{ message: string; at: string; code: string }> {
  try {
    await openRealm({ realm: 'r1', stateRoot, logger, isolated: false });
  } catch (err) {
    assert.ok(isServiceError(err), `not a ServiceError: ${String(err)}`);
    const details = err.details as { at: string; code: string };
    return { message: err.message, at: details.at, code: details.code };
  }
  assert.fail('openRealm succeeded');
}

describe('state root problems', () => {
  it('names a read-only file system and where it is', async (t) => {
    const ro = await mountTmpfs(t, 1024 * 1024, { readOnly: true });
    if ('skip' in ro) {
      // Without root there is no read-only mount to make; a directory without write permission stands in.
      t.diagnostic(`read-only mount unavailable (${ro.skip}); using a directory without write permission`);
      const dir = await tmpDir('warren-noperm-');
      t.after(() => chmod(dir.path, 0o700).then(() => dir.cleanup()));
      await chmod(dir.path, 0o555);
      const got = await openFails(join(dir.path, 'realms'));
      assert.match(got.message, new RegExp(`permission denied: .* may not write in ${dir.path}`));
      assert.equal(got.code, 'EACCES');
      return;
    }
    const got = await openFails(join(ro.path, 'realms'));
    assert.match(
      got.message,
      new RegExp(`^cannot open the realm directory ${ro.path}/realms/r1: the file system holding ${ro.path} is read-only$`),
    );
    assert.deepEqual([got.at, got.code], [ro.path, 'EROFS']);
  });

  it('names a file standing where a directory should be', async (t) => {
    const dir = await tmpDir('warren-notdir-');
    t.after(() => dir.cleanup());
    await mkdir(join(dir.path, 'a'));
    await writeFile(join(dir.path, 'a', 'file'), 'x');
    const got = await openFails(join(dir.path, 'a', 'file', 'realms'));
    assert.match(got.message, /is not a directory$/);
    assert.deepEqual([got.at, got.code], [join(dir.path, 'a', 'file'), 'ENOTDIR']);
  });
});
