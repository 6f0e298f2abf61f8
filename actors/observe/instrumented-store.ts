// actors/observe/instrumented-store.ts: wraps a Store so every commit is timed (metrics, commit spans).
// Only `commit` is intercepted; every other member passes through untouched, so the wrapper keeps up
// with Store interface changes. app.ts applies it once, at composition.
import { performance } from 'node:perf_hooks';
import type { Store, StoreOp } from '../../storage/store.ts';
import type { CommitKind } from './metrics.ts';

/** One finished commit: what it wrote and when (performance.now() milliseconds). */
export interface CommitObservation {
  kind: CommitKind;
  /** What was written (sessionsOf() lists the sessions it touched). */
  ops: readonly StoreOp[];
  startedMs: number;
  endedMs: number;
  ok: boolean;
}

/** turn: carries transcript rows; ledger: only ledger entries; state: anything else. */
function commitKind(ops: readonly StoreOp[]): CommitKind {
  let ledgerOnly = true;
  for (const op of ops) {
    if (op.op === 'putRows') return 'turn';
    if (op.op !== 'appendLedger') ledgerOnly = false;
  }
  return ledgerOnly ? 'ledger' : 'state';
}

/** Sessions whose rows, record or ledger the ops touch. */
export function sessionsOf(ops: readonly StoreOp[]): string[] {
  const ids = new Set<string>();
  for (const op of ops) {
    if (op.op === 'putSession') ids.add(op.session.session_id);
    else if ('sessionId' in op) ids.add(op.sessionId);
  }
  return [...ids];
}

/** The store with timed commits; `observe` runs after each commit settles and must not throw. */
export function instrumentStore(store: Store, observe: (c: CommitObservation) => void): Store {
  const commit = async (ops: StoreOp[]): Promise<void> => {
    const startedMs = performance.now();
    let ok = false;
    try {
      await store.commit(ops);
      ok = true;
    } finally {
      observe({ kind: commitKind(ops), ops, startedMs, endedMs: performance.now(), ok });
    }
  };
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'commit') return commit;
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      let fn = bound.get(prop);
      if (!fn) bound.set(prop, (fn = (value as (...a: unknown[]) => unknown).bind(target)));
      return fn;
    },
  });
}
