// test/helpers/realm-store.ts: opens a realm's store while no server has it open (between two starts on
// one state root), runs `fn` on it and closes it: how tests plant or inspect stored records directly.
import pino from 'pino';
import { openRealm } from '../../config/realm.ts';
import { openStore } from '../../storage/open-store.ts';
import type { Store } from '../../storage/store.ts';

export async function withRealmStore<T>(root: string, realmId: string, fn: (store: Store) => Promise<T>): Promise<T> {
  const realm = await openRealm({ realm: realmId, stateRoot: root, isolated: false, logger: pino({ level: 'silent' }) });
  const store = await openStore(realm.backend, realm.storeDir);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}
