// actors/store-health.ts: whether the realm store currently takes writes. app.ts wraps the store once;
// every commit's outcome updates the reading: a commit the medium refused (full disk, quota, read-only,
// I/O error: SESSION_STORE_ERROR with `details.cause_code`) degrades it, three consecutive commits that
// land clear it. GET /runtime/health reports it (http/modules/system-module.ts) without touching the disk.
import { isServiceError } from '../contracts/errors.ts';
import type { Store } from '../storage/store.ts';

/** The store's write health: ok, or degraded since a time with the refused write's reason. */
export type StoreHealth = { degraded: false } | { degraded: true; reason: string; since_ms: number };

const tracked = new WeakMap<Store, () => StoreHealth>();
/** Consecutive landed commits after a refusal that clear the degraded reading. */
const RECOVERED_AFTER = 3;

/** The write health of a store wrapped by withStoreHealth (undefined for any other store). */
export function storeHealthOf(store: Store): StoreHealth | undefined {
  return tracked.get(store)?.();
}

/** Wraps `store` so that its commits are tracked (reads pass straight through). */
export function withStoreHealth(store: Store, now: () => number = Date.now): Store {
  let health: StoreHealth = { degraded: false };
  // A nearly full medium may still take a small write (lmdb reuses freed pages), so one landed commit
  // does not prove recovery: the reading clears after RECOVERED_AFTER consecutive ones.
  let landed = 0;
  const commit: Store['commit'] = async (ops) => {
    try {
      await store.commit(ops);
    } catch (err) {
      const cause = isServiceError(err) ? (err.details as { cause_code?: unknown } | undefined)?.cause_code : undefined;
      if (typeof cause === 'string') {
        landed = 0;
        health = {
          degraded: true,
          reason: `store writes failing: ${err instanceof Error ? err.message : String(err)}`,
          since_ms: health.degraded ? health.since_ms : now(),
        };
      }
      throw err;
    }
    if (health.degraded && ++landed >= RECOVERED_AFTER) health = { degraded: false };
  };
  // A proxy, so every other Store member (present or added later) reaches the backend unchanged.
  // Bound methods are made once per method (store calls are on every turn's path).
  const bound = new Map<string | symbol, { fn: unknown; bound: unknown }>();
  const wrapped = new Proxy(store, {
    get(target, prop) {
      if (prop === 'commit') return commit;
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      const hit = bound.get(prop);
      if (hit && hit.fn === value) return hit.bound;
      const b = (value as (...args: unknown[]) => unknown).bind(target);
      bound.set(prop, { fn: value, bound: b });
      return b;
    },
  });
  tracked.set(wrapped, () => health);
  return wrapped;
}
