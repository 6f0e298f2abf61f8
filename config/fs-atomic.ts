// config/fs-atomic.ts: crash-safe file writes for the realm files (config.toml, realm_manifest.json,
// config_state.json). Used by config/realm.ts, config/toml.ts and config/realm-config.ts.
import { randomBytes } from 'node:crypto';
import { link, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

/** A unique sibling temp path, so the final rename/link stays on one filesystem. */
function tempPathFor(path: string): string {
  return `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
}

function errCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : undefined;
}

/** Writes `data` to a new file and fsyncs it. `flag: 'wx'` fails with EEXIST when the path exists. */
async function writeSynced(path: string, data: string, flag: 'w' | 'wx'): Promise<void> {
  // Config and state files are the owner's only (they may name credentials' sources).
  const handle = await open(path, flag, 0o600);
  try {
    await handle.writeFile(data, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Flushes a directory entry change (rename/link) to disk. Not possible on every platform: best effort. */
async function fsyncDir(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // Windows and some filesystems cannot open or fsync a directory; the rename itself is still atomic.
  } finally {
    await handle?.close();
  }
}

/**
 * Replaces `path` atomically: write a temp file in the same directory, fsync it, rename it over the
 * target, fsync the directory. Readers see either the old or the new content, never a torn file.
 */
export async function writeFileAtomic(path: string, data: string): Promise<void> {
  const tmp = tempPathFor(path);
  try {
    await writeSynced(tmp, data, 'wx');
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  await fsyncDir(dirname(path));
}

/**
 * Creates `path` with `data` only if it does not exist yet, atomically: the complete file appears at
 * once (temp file + hard link, which fails with EEXIST like O_EXCL). Returns true when this call
 * created it, false when another writer got there first. Falls back to an O_EXCL create where hard
 * links are unsupported.
 */
export async function createFileExclusive(path: string, data: string): Promise<boolean> {
  const tmp = tempPathFor(path);
  try {
    await writeSynced(tmp, data, 'wx');
    await link(tmp, path);
  } catch (err) {
    const code = errCode(err);
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw err;
    try {
      await writeSynced(path, data, 'wx');
    } catch (fallbackErr) {
      if (errCode(fallbackErr) === 'EEXIST') return false;
      throw fallbackErr;
    }
  } finally {
    await rm(tmp, { force: true });
  }
  await fsyncDir(dirname(path));
  return true;
}

/** The errno-style code of a Node fs error, if any. */
export function fsErrorCode(err: unknown): string | undefined {
  return errCode(err);
}
