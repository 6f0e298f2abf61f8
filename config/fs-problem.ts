// config/fs-problem.ts: turns a failed filesystem operation under the state root into a message that says
// what is wrong and where. Node reports a recursive mkdir on a read-only file system as ENOENT on the
// target, so the deepest existing ancestor is found and the next directory is created there directly,
// which yields the real cause (EROFS, EACCES, ENOTDIR, ENOSPC, ...). config/realm.ts calls it.
import { constants } from 'node:fs';
import { access, mkdir, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { ServiceError } from '../contracts/errors.ts';

function codeOf(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

/** The deepest existing ancestor of `target` (or `target` itself) and the first missing child below it. */
async function nearestExisting(target: string): Promise<{ existing: string; child: string | undefined }> {
  let child: string | undefined;
  let dir = path.resolve(target);
  for (;;) {
    try {
      await stat(dir);
      return { existing: dir, child };
    } catch {
      const parent = path.dirname(dir);
      if (parent === dir) return { existing: dir, child };
      child = dir;
      dir = parent;
    }
  }
}

const WHY: Record<string, (where: string) => string> = {
  EROFS: (where) => `the file system holding ${where} is read-only`,
  EACCES: (where) => `permission denied: this process (uid ${process.getuid?.() ?? '?'}) may not write in ${where}`,
  EPERM: (where) => `operation not permitted in ${where}`,
  ENOTDIR: (where) => `${where} is not a directory`,
  ENOSPC: (where) => `no space left on the device holding ${where}`,
  EDQUOT: (where) => `disk quota exceeded on ${where}`,
};

/**
 * A ServiceError (INTERNAL_ERROR, SPEC "store init failure") explaining why `what` at `target` failed.
 * `err` is the original failure; the cause is probed at the deepest existing ancestor.
 */
export async function explainFsFailure(err: unknown, what: string, target: string): Promise<ServiceError> {
  const { existing, child } = await nearestExisting(target);
  let code = codeOf(err);
  let where = existing;
  try {
    const info = await stat(existing);
    if (!info.isDirectory()) code = 'ENOTDIR';
    else if (child) {
      // Reproduce the first step directly: its error is the real one (a recursive mkdir hides it).
      await mkdir(child).then(
        () => rmdir(child),
        (e: unknown) => {
          code = codeOf(e) ?? code;
        },
      );
    } else {
      await access(existing, constants.W_OK).catch((e: unknown) => {
        code = codeOf(e) ?? code;
      });
    }
  } catch {
    where = target;
  }
  const why = code && WHY[code] ? WHY[code](where) : `${code ?? 'error'}: ${err instanceof Error ? err.message : String(err)}`;
  return new ServiceError(
    'INTERNAL_ERROR',
    `cannot ${what} ${target}: ${why}`,
    { path: target, at: where, code: code ?? null },
    { cause: err },
  );
}
