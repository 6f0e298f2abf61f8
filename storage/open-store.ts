// storage/open-store.ts: picks the Store backend named by `--realm-backend`; app.ts is the caller.
// An unsupported name fails loudly: there is no silent fallback.
import { chmod, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ServiceError } from '../contracts/errors.ts';
import { SUPPORTED_BACKENDS, type Store } from './store.ts';
import { openLmdbStore } from './lmdb-store.ts';
import { openSqliteStore } from './sqlite-store.ts';
import { openPostgresStore, type PostgresOptions } from './postgres-store.ts';
import { openJsonlStore } from './jsonl-store.ts';
import { createMemoryStore } from './memory-store.ts';
import { acquireProcessLock, releaseProcessLock } from './process-lock.ts';
import { mkdir } from 'node:fs/promises';

/** Backend settings that do not live in the store directory. */
export interface OpenStoreOptions {
  /** The postgres backend's database (`[storage] postgres_url` or `WARREN_DATABASE_URL`). */
  postgres?: PostgresOptions;
}

/**
 * Opens the realm store for `backend` under `dir` (ignored for postgres; for memory it only holds the
 * one-process lock).
 * @throws ServiceError BAD_REQUEST naming the backend and listing the supported ones, or when postgres has no URL.
 */
export async function openStore(backend: string, dir: string, opts: OpenStoreOptions = {}): Promise<Store> {
  switch (backend) {
    case 'lmdb':
      return ownerOnly(dir, await openLmdbStore(dir));
    case 'sqlite':
      return ownerOnly(dir, await openSqliteStore(dir));
    case 'postgres':
      if (!opts.postgres?.url) {
        throw new ServiceError(
          'BAD_REQUEST',
          'the postgres realm backend needs a database URL: set WARREN_DATABASE_URL or [storage] postgres_url',
          { backend },
        );
      }
      return openPostgresStore(opts.postgres);
    case 'jsonl':
      return ownerOnly(dir, await openJsonlStore(dir));
    case 'memory': {
      // Nothing is shared through a memory realm: a second process on it is refused, like jsonl.
      await mkdir(dir, { recursive: true });
      await acquireProcessLock(dir, 'memory', true);
      const store = createMemoryStore();
      const close = store.close.bind(store);
      store.close = async () => {
        await close();
        await releaseProcessLock(dir);
      };
      return store;
    }
    default:
      throw new ServiceError(
        'BAD_REQUEST',
        `realm backend '${backend}' is not supported by this build; supported backends: ${SUPPORTED_BACKENDS.join(', ')}`,
        { backend, supported: [...SUPPORTED_BACKENDS] },
      );
  }
}

/** Store files are the owner's only (0600, their directory 0700): the engines create them with the umask's mode. */
async function ownerOnly(dir: string, store: Store): Promise<Store> {
  await chmod(dir, 0o700).catch(() => undefined);
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await chmod(path, 0o700).catch(() => undefined);
    else if (entry.isFile()) await chmod(path, 0o600).catch(() => undefined);
  }
  return store;
}
