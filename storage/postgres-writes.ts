// storage/postgres-writes.ts: the write side of the postgres backend: one group transaction per batch of
// commits, each commit inside its own savepoint (a failing one rolls back alone, as in sqlite and lmdb).
// storage/postgres-store.ts queues the commits and calls runBatch with one pooled connection.
import type { PoolClient } from 'pg';
import { ServiceError, isServiceError } from '../contracts/errors.ts';
import { checkConditions, planBatch } from './prepare-ops.ts';
import type { StoreOp } from './store.ts';

/** A commit op with every value already serialised to JSON text (at commit() time). */
export type PgWrite =
  | { op: 'putSession'; id: string; createdAtMs: number; archived: boolean; labels: string[]; json: string }
  | { op: 'putRows'; sessionId: string; fromIndex: number; rows: string[] }
  | { op: 'truncateRows'; sessionId: string; length: number }
  | { op: 'appendLedger'; sessionId: string; entries: Array<{ seq: number; kind: string; json: string }> }
  | { op: 'dropLedger'; sessionId: string; ranges: Array<[number, number]> }
  | { op: 'putRecord'; ns: string; key: string; json: string }
  | { op: 'deleteRecord'; ns: string; key: string }
  | { op: 'checkRecord'; ns: string; key: string; rev: number | null };

/** Serialises checked ops to JSON text, so later changes by the caller cannot reach the store. */
export function encodePg(ops: readonly StoreOp[]): PgWrite[] {
  return ops.map((op): PgWrite => {
    switch (op.op) {
      case 'putSession': {
        const s = op.session;
        const labels = s.archived ? [] : Object.entries(s.labels).map(([k, v]) => JSON.stringify([k, v]));
        return { op: 'putSession', id: s.session_id, createdAtMs: s.created_at_ms, archived: s.archived, labels, json: JSON.stringify(s) };
      }
      case 'putRows':
        return { op: 'putRows', sessionId: op.sessionId, fromIndex: op.fromIndex, rows: op.rows.map((row) => JSON.stringify(row)) };
      case 'appendLedger':
        return {
          op: 'appendLedger',
          sessionId: op.sessionId,
          entries: op.entries.map((e) => ({ seq: e.seq, kind: e.kind, json: JSON.stringify(e) })),
        };
      case 'putRecord':
        return { op: 'putRecord', ns: op.ns, key: op.key, json: JSON.stringify(op.value) };
      default:
        return op;
    }
  });
}

/** Advisory lock keys: one per session whose rows or ledger a write touches, one per checked record. */
function lockKeys(writes: readonly PgWrite[]): string[] {
  const keys = new Set<string>();
  for (const w of writes) {
    if (w.op === 'putRows' || w.op === 'truncateRows' || w.op === 'appendLedger') keys.add(`s\u0001${w.sessionId}`);
    else if (w.op === 'checkRecord') keys.add(`r\u0001${w.ns}\u0001${w.key}`);
  }
  return [...keys].sort();
}

/** Postgres SQLSTATEs of a medium or server that refused the write, as the errno-style cause. */
const MEDIUM_CAUSE: Record<string, { cause: string; why: string }> = {
  '53100': { cause: 'ENOSPC', why: 'no space left on device' },
  '58030': { cause: 'EIO', why: 'input/output error' },
  '25006': { cause: 'EROFS', why: 'read-only transaction' },
};

/** The ServiceError a failed commit answers: CONFLICT for a lost race on a key, else SESSION_STORE_ERROR. */
function pgError(err: unknown): ServiceError {
  if (isServiceError(err)) return err;
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  const reason = err instanceof Error ? err.message : String(err);
  if (code === '23505') return new ServiceError('CONFLICT', `postgres commit lost a race: ${reason}`, { pg_code: code });
  const medium = typeof code === 'string' ? MEDIUM_CAUSE[code] : undefined;
  if (medium) {
    return new ServiceError('SESSION_STORE_ERROR', `postgres commit failed: ${medium.why} (${medium.cause}; ${String(code)})`, {
      pg_code: code,
      cause_code: medium.cause,
    });
  }
  const cause = typeof code === 'string' && /^[A-Z]+$/.test(code) ? code : 'EDATABASE';
  return new ServiceError(
    'SESSION_STORE_ERROR',
    `postgres commit failed: ${reason}`,
    { pg_code: code ?? null, cause_code: cause },
    { cause: err },
  );
}

/**
 * Runs `commits` in one transaction on `client`, each inside a savepoint. Advisory transaction locks on
 * every touched session and checked record (taken up front, in sorted order) serialise writers on other
 * nodes, so the checks below still hold when the writes land. Returns each commit's error, or null.
 */
export async function runBatch(client: PoolClient, commits: PgWrite[][]): Promise<Array<ServiceError | null>> {
  const errors: Array<ServiceError | null> = commits.map(() => null);
  await client.query('BEGIN');
  try {
    const keys = lockKeys(commits.flat());
    if (keys.length > 0) await client.query('SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) FROM unnest($1::text[]) AS k', [keys]);
    const single = commits.length === 1;
    for (let i = 0; i < commits.length; i++) {
      if (single) {
        await apply(client, commits[i]);
        continue;
      }
      await client.query('SAVEPOINT one_commit');
      try {
        await apply(client, commits[i]);
        await client.query('RELEASE SAVEPOINT one_commit');
      } catch (err) {
        await client.query('ROLLBACK TO SAVEPOINT one_commit');
        await client.query('RELEASE SAVEPOINT one_commit');
        errors[i] = pgError(err);
      }
    }
    await client.query('COMMIT');
    return errors;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    const whole = pgError(err);
    return errors.map((e) => e ?? whole);
  }
}

/** Stored row counts and last ledger seqs of the sessions a commit's row and ledger ops touch (one query). */
async function counters(client: PoolClient, writes: readonly PgWrite[]): Promise<{ rows: Map<string, number>; seqs: Map<string, number> }> {
  const ids = [
    ...new Set(
      writes.flatMap((w) =>
        w.op === 'putRows' || w.op === 'truncateRows' || (w.op === 'appendLedger' && w.entries.length > 0) ? [w.sessionId] : [],
      ),
    ),
  ];
  const rows = new Map<string, number>();
  const seqs = new Map<string, number>();
  if (ids.length === 0) return { rows, seqs };
  const r = await client.query<{ id: string; n: number | null; s: string | null }>(
    `SELECT k AS id, (SELECT MAX(idx) FROM warren_rows WHERE session_id = k) AS n, (SELECT MAX(seq) FROM warren_ledger WHERE session_id = k) AS s
     FROM unnest($1::text[]) AS k`,
    [ids],
  );
  for (const { id, n, s } of r.rows) {
    rows.set(id, n === null ? 0 : Number(n) + 1);
    seqs.set(id, s === null ? 0 : Number(s));
  }
  return { rows, seqs };
}

async function apply(client: PoolClient, writes: PgWrite[]): Promise<void> {
  const checks = writes.filter((w): w is Extract<PgWrite, { op: 'checkRecord' }> => w.op === 'checkRecord');
  if (checks.length > 0) {
    const found = new Map<string, unknown>();
    const r = await client.query<{ ns: string; key: string; value: string }>(
      'SELECT r.ns, r.key, r.value FROM warren_records r JOIN unnest($1::text[], $2::text[]) AS c(ns, key) ON r.ns = c.ns AND r.key = c.key',
      [checks.map((c) => c.ns), checks.map((c) => c.key)],
    );
    for (const row of r.rows) found.set(`${row.ns}\u0001${row.key}`, JSON.parse(row.value));
    checkConditions(checks as StoreOp[], (ns, key) => found.get(`${ns}\u0001${key}`));
  }
  const state = await counters(client, writes);
  planBatch(writes, {
    rowCount: (id) => state.rows.get(id) ?? 0,
    lastSeq: (id) => state.seqs.get(id) ?? 0,
  });
  // dropLedger goes last: it may remove entries this same batch appends.
  const ordered = [...writes.filter((w) => w.op !== 'dropLedger'), ...writes.filter((w) => w.op === 'dropLedger')];
  for (const w of ordered) {
    switch (w.op) {
      case 'putSession':
        await client.query(
          `INSERT INTO warren_sessions (session_id, created_at_ms, archived, record) VALUES ($1, $2, $3, $4)
          ON CONFLICT (session_id) DO UPDATE SET created_at_ms = excluded.created_at_ms, archived = excluded.archived, record = excluded.record`,
          [w.id, w.createdAtMs, w.archived, w.json],
        );
        await client.query('DELETE FROM warren_session_labels WHERE session_id = $1', [w.id]);
        if (w.labels.length > 0) {
          await client.query(
            `INSERT INTO warren_session_labels (label, created_at_ms, session_id) SELECT l, $2, $3 FROM unnest($1::text[]) AS l
            ON CONFLICT DO NOTHING`,
            [w.labels, w.createdAtMs, w.id],
          );
        }
        break;
      case 'putRows':
        if (w.rows.length === 0) break;
        await client.query(
          `INSERT INTO warren_rows (session_id, idx, message)
          SELECT $1, $2::int + (o - 1)::int, m FROM unnest($3::text[]) WITH ORDINALITY AS t(m, o)
          ON CONFLICT (session_id, idx) DO UPDATE SET message = excluded.message`,
          [w.sessionId, w.fromIndex, w.rows],
        );
        break;
      case 'truncateRows':
        await client.query('DELETE FROM warren_rows WHERE session_id = $1 AND idx >= $2', [w.sessionId, w.length]);
        break;
      case 'appendLedger':
        if (w.entries.length === 0) break;
        await client.query(
          `INSERT INTO warren_ledger (session_id, seq, kind, entry)
          SELECT $1, s, k, e FROM unnest($2::bigint[], $3::text[], $4::text[]) AS t(s, k, e)`,
          [w.sessionId, w.entries.map((e) => e.seq), w.entries.map((e) => e.kind), w.entries.map((e) => e.json)],
        );
        break;
      case 'dropLedger':
        await client.query(
          `DELETE FROM warren_ledger l USING unnest($2::bigint[], $3::bigint[]) AS r(a, b)
          WHERE l.session_id = $1 AND l.seq BETWEEN r.a AND r.b`,
          [w.sessionId, w.ranges.map((r) => r[0]), w.ranges.map((r) => r[1])],
        );
        break;
      case 'putRecord':
        await client.query(
          'INSERT INTO warren_records (ns, key, value) VALUES ($1, $2, $3) ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value',
          [w.ns, w.key, w.json],
        );
        break;
      case 'deleteRecord':
        await client.query('DELETE FROM warren_records WHERE ns = $1 AND key = $2', [w.ns, w.key]);
        break;
      case 'checkRecord':
        break;
    }
  }
}
