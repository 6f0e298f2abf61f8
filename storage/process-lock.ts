// storage/process-lock.ts: the one-process lock of the single-process backends (jsonl, memory): `<dir>/LOCK`
// holds the owner's pid; a second process on the realm is refused with a one-line reason, and a lock whose
// process is gone (a crash) is taken over. lmdb, sqlite and postgres realms take no such lock: several
// processes on them form a cluster (actors/cluster/).
import { open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ServiceError } from '../contracts/errors.ts';

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes `<dir>/LOCK` for this process, for the `backend` store there. `reopen`: this process may take its
 * own lock again (memory: each open is a fresh, empty store anyway).
 */
export async function acquireProcessLock(dir: string, backend: string, reopen = false): Promise<void> {
  const file = join(dir, 'LOCK');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(file, 'wx');
      await handle.writeFile(String(process.pid));
      await handle.close();
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const pid = Number(await readFile(file, 'utf8').catch(() => ''));
    if (Number.isSafeInteger(pid) && pid > 0 && !(reopen && pid === process.pid) && processAlive(pid)) {
      throw new ServiceError(
        'SESSION_STORE_ERROR',
        `${backend} store ${dir} is open in process ${pid}: a ${backend} realm serves one process (share a realm on lmdb, sqlite or postgres)`,
        { pid, backend },
      );
    }
    await rm(file, { force: true });
  }
  throw new ServiceError('SESSION_STORE_ERROR', `cannot lock ${backend} store ${dir}`);
}

/** Gives the lock up (clean close). */
export async function releaseProcessLock(dir: string): Promise<void> {
  await rm(join(dir, 'LOCK'), { force: true });
}
