// storage/record-migrations.ts: stored records are read through here. Each older version has a named
// migration to the next; the result is validated against the current schema (contracts/records.ts), so
// a record that drifted (a bug, a hand edit, a newer Warren's data) is refused with a coded error rather
// than served half-understood. Every backend calls these on read; prepare-ops.ts migrates on write.
import { Compile } from 'typebox/compile';
import { ServiceError } from '../contracts/errors.ts';
import { LedgerEntry, SESSION_RECORD_VERSION, SessionRecord, type SessionRecordV1 } from '../contracts/records.ts';

const checkSession = Compile(SessionRecord);
const checkEntry = Compile(LedgerEntry);

/** v1 → v2: adds archived_at_ms (an archived v1 record was last updated by its archive). */
function sessionRecordV1toV2(r: SessionRecordV1): SessionRecord {
  const { v: _v, ...rest } = r;
  return { ...rest, v: 2, ...(r.archived ? { archived_at_ms: r.updated_at_ms } : {}) };
}

/** Migrations by the version they read. */
const SESSION_MIGRATIONS: Record<number, (r: never) => { v: number }> = {
  1: sessionRecordV1toV2,
};

/** Brings a stored session record to the current version (unchanged when it is current). */
export function migrateSessionRecord(raw: unknown): unknown {
  let r = raw as { v?: unknown };
  while (r !== null && typeof r === 'object' && typeof r.v === 'number' && r.v < SESSION_RECORD_VERSION) {
    const step = SESSION_MIGRATIONS[r.v];
    if (!step) break;
    r = step(r as never);
  }
  return r;
}

function corrupt(what: string, id: string): ServiceError {
  return new ServiceError('SESSION_STORE_ERROR', `stored ${what} does not match its schema`, { id });
}

/** A stored session record, migrated and validated. */
export function readSessionRecord(raw: unknown): SessionRecord {
  const r = migrateSessionRecord(raw);
  if (!checkSession.Check(r)) throw corrupt('session record', String((raw as { session_id?: unknown } | null)?.session_id));
  return r;
}

/** Stored ledger entries, validated (the array is returned as is). */
export function readLedgerEntries<E>(sessionId: string, entries: E[]): E[] {
  for (const e of entries) if (!checkEntry.Check(e)) throw corrupt('ledger entry', sessionId);
  return entries;
}
