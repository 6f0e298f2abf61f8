// config/file-lock.ts: a cross-process advisory lock file (O_EXCL create), used by
// config/realm-config.ts around the config_state.json compare-and-set (wire-notes §1.4: 5 s timeout,
// stale after 30 s).
import { randomBytes } from 'node:crypto';
import { open, rename, rm, stat } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { ServiceError } from '../contracts/errors.ts';
import { fsErrorCode } from './fs-atomic.ts';

export interface FileLockOptions {
  /** Give up after this long (default 5000 ms). */
  timeoutMs?: number;
  /** A lock file older than this is presumed abandoned by a crashed holder (default 30000 ms). */
  staleMs?: number;
}

/** Removes a stale lock. Renaming first means only one contender removes any given lock file. */
async function breakStaleLock(lockPath: string, staleMs: number): Promise<void> {
  let mtimeMs: number;
  try {
    mtimeMs = (await stat(lockPath)).mtimeMs;
  } catch (err) {
    if (fsErrorCode(err) === 'ENOENT') return;
    throw err;
  }
  if (Date.now() - mtimeMs < staleMs) return;
  const grave = `${lockPath}.stale.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    await rename(lockPath, grave);
  } catch (err) {
    if (fsErrorCode(err) === 'ENOENT') return;
    throw err;
  }
  await rm(grave, { force: true });
}

/**
 * Runs `fn` while holding `lockPath` (created with O_EXCL, holding the owner's pid). Waits with a short
 * backoff while another holder has it; throws ServiceError('SERVICE_UNAVAILABLE') after the timeout.
 */
export async function withFileLock<T>(lockPath: string, fn: () => Promise<T>, opts: FileLockOptions = {}): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 5000;
  const staleMs = opts.staleMs ?? 30000;
  const deadline = Date.now() + timeoutMs;
  let waitMs = 2;
  for (;;) {
    try {
      const handle = await open(lockPath, 'wx', 0o644);
      try {
        await handle.writeFile(`${JSON.stringify({ pid: process.pid, acquired_at: new Date().toISOString() })}\n`);
      } finally {
        await handle.close();
      }
      break;
    } catch (err) {
      if (fsErrorCode(err) !== 'EEXIST') throw err;
    }
    await breakStaleLock(lockPath, staleMs);
    if (Date.now() >= deadline) {
      throw new ServiceError('SERVICE_UNAVAILABLE', `Timed out waiting for lock ${lockPath}`);
    }
    // Waiting for another process to release the lock; there is no event to wait on.
    await delay(waitMs);
    waitMs = Math.min(waitMs * 2, 50);
  }
  try {
    return await fn();
  } finally {
    await rm(lockPath, { force: true });
  }
}
