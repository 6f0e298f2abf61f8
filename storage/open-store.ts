// storage/open-store.ts: picks the Store backend named by `--realm-backend`; app.ts is the caller.
// An unsupported name fails loudly: there is no silent fallback.
import { ServiceError } from '../contracts/errors.ts';
import { SUPPORTED_BACKENDS, type Store } from './store.ts';
import { openLmdbStore } from './lmdb-store.ts';
import { openSqliteStore } from './sqlite-store.ts';
import { openJsonlStore } from './jsonl-store.ts';
import { createMemoryStore } from './memory-store.ts';

/**
 * Opens the realm store for `backend` under `dir` (ignored for memory).
 * @throws ServiceError BAD_REQUEST naming the backend and listing the supported ones.
 */
export async function openStore(backend: string, dir: string): Promise<Store> {
  switch (backend) {
    case 'lmdb':
      return openLmdbStore(dir);
    case 'sqlite':
      return openSqliteStore(dir);
    case 'jsonl':
      return openJsonlStore(dir);
    case 'memory':
      return createMemoryStore();
    default:
      throw new ServiceError(
        'BAD_REQUEST',
        `realm backend '${backend}' is not supported by this build; supported backends: ${SUPPORTED_BACKENDS.join(', ')}`,
        { backend, supported: [...SUPPORTED_BACKENDS] },
      );
  }
}
