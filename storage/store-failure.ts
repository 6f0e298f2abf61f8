// storage/store-failure.ts: the storage boundary's view of a failed write. A backend turns whatever its
// library or the file system threw into SESSION_STORE_ERROR naming the cause (no space, quota, read-only,
// I/O error), and lmdb-js's own stray rejections of a failed commit are recognised so that main.ts does
// not mistake them for a programming error. Used by lmdb-store.ts, jsonl-store.ts and main.ts.
import { ServiceError } from '../contracts/errors.ts';

/** errno names by number (lmdb-js reports the errno of a failed write as a number). */
const ERRNO: Record<number, string> = { 5: 'EIO', 12: 'ENOMEM', 13: 'EACCES', 28: 'ENOSPC', 30: 'EROFS', 122: 'EDQUOT' };

const WHY: Record<string, string> = {
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EROFS: 'read-only file system',
  EIO: 'input/output error',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOMEM: 'out of memory',
  MDB_MAP_FULL: 'lmdb map size reached',
};

/** The errno-style code of a failed write ('ENOSPC'...), or undefined when it carries none. */
function causeCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null || !('code' in err)) return undefined;
  const { code } = err as { code: unknown };
  if (typeof code === 'string') return code;
  if (typeof code === 'number') return ERRNO[code] ?? (code === -30792 ? 'MDB_MAP_FULL' : `errno ${code}`);
  return undefined;
}

/**
 * SESSION_STORE_ERROR for a write the medium refused: `<what> failed: <cause> (<CODE>)`, with
 * `details.cause_code` (the store's health tracking keys on it).
 */
export function storeFailure(what: string, err: unknown): ServiceError {
  const code = causeCode(err) ?? 'EUNKNOWN';
  const why = WHY[code] ?? (err instanceof Error ? err.message : String(err));
  return new ServiceError('SESSION_STORE_ERROR', `${what} failed: ${why} (${code})`, { cause_code: code }, { cause: err });
}

/**
 * True for a rejection lmdb-js raises by itself when a batched commit fails: besides rejecting the
 * caller's promise it rejects internal ones nobody holds, each an Error carrying the batch's
 * `commitError` promise. The store has already answered the failed write; these are not program errors.
 */
export function isContainedStorageRejection(reason: unknown): boolean {
  if (!(reason instanceof Error) || !('commitError' in reason)) return false;
  const commitError = (reason as { commitError?: unknown }).commitError;
  return typeof commitError === 'object' && commitError !== null && typeof (commitError as { then?: unknown }).then === 'function';
}
