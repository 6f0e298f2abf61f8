// storage/postgres-store.ts: the postgres Store backend: the realm's sessions, transcript rows, ledger and
// records in one PostgreSQL database through `pg` with a bounded pool, shared by every Warren node of a
// cluster. app.ts opens it via openStore. Reads run on pooled connections; commits queue up and share the
// next group transaction (storage/postgres-writes.ts), one at a time per node, so they land in issue order.
import type pg from 'pg';
import type { Pool } from 'pg';
import { redactDatabaseUrl } from '../contracts/cluster.ts';
import { ServiceError, isServiceError } from '../contracts/errors.ts';
import type { Message } from '../contracts/transcript.ts';
import { matchesLabels } from './label-filter.ts';
import { checkOps, pageBounds } from './prepare-ops.ts';
import { readLedgerEntries, readSessionRecord } from './record-migrations.ts';
import { migratePostgres } from './postgres-schema.ts';
import { encodePg, runBatch, type PgWrite } from './postgres-writes.ts';
import type { LedgerEntry, ListSessionsOptions, SessionRecord, Store, StoreOp } from './store.ts';
import { GroupCommitQueue } from './group-commit.ts';

/** How a node reaches its database. */
export interface PostgresOptions {
  /** `postgres://user:password@host:port/database` (libpq URL; `?sslmode=require` for managed servers). */
  url: string;
  /** Upper bound on pooled connections of this node (default 10). */
  poolMax?: number;
}

/** The URL with its password replaced by `***`, for logs, errors and GET /config. */
export const redactPostgresUrl = redactDatabaseUrl;

/** SQL LIMIT for a pageBounds limit: NULL means none. */
const sqlLimit = (limit: number): number | null => (Number.isFinite(limit) ? limit : null);

export class PostgresStore implements Store {
  readonly backend = 'postgres' as const;
  readonly persistent = true;
  readonly pool: Pool;
  readonly redactedUrl: string;
  /** Queued commits, one transaction at a time (storage/group-commit.ts). */
  readonly #commits: GroupCommitQueue<PgWrite[]>;
  #closed = false;

  constructor(pool: Pool, redactedUrl: string) {
    this.pool = pool;
    this.redactedUrl = redactedUrl;
    this.#commits = new GroupCommitQueue((commits) => this.#run(commits));
  }

  async #q<R extends pg.QueryResultRow>(sql: string, params: unknown[]): Promise<R[]> {
    if (this.#closed) throw new ServiceError('SESSION_STORE_ERROR', 'store is closed');
    try {
      return (await this.pool.query<R>(sql, params)).rows;
    } catch (err) {
      throw new ServiceError(
        'SESSION_STORE_ERROR',
        `postgres read failed: ${err instanceof Error ? err.message : String(err)}`,
        undefined,
        { cause: err },
      );
    }
  }

  async getSession(sessionId: string): Promise<SessionRecord | undefined> {
    const rows = await this.#q<{ record: string }>('SELECT record FROM warren_sessions WHERE session_id = $1', [sessionId]);
    return rows.length === 0 ? undefined : readSessionRecord(JSON.parse(rows[0].record));
  }

  async listSessions(opts: ListSessionsOptions = {}): Promise<SessionRecord[]> {
    const { offset, limit } = pageBounds(opts.offset, opts.limit);
    if (limit === 0) return [];
    if (opts.labels?.length) {
      const filters = opts.labels;
      // Archived sessions are not in the label index: asking for them with labels walks every session.
      const candidates = opts.includeArchived
        ? await this.#q<{ record: string }>('SELECT record FROM warren_sessions ORDER BY created_at_ms, session_id', [])
        : await this.#q<{ record: string }>(
            `SELECT s.record FROM warren_session_labels l JOIN warren_sessions s ON s.session_id = l.session_id
            WHERE l.label = $1 ORDER BY l.created_at_ms, l.session_id`,
            [JSON.stringify([filters[0][0], filters[0][1]])],
          );
      const out: SessionRecord[] = [];
      let skipped = 0;
      for (const { record: json } of candidates) {
        const record = readSessionRecord(JSON.parse(json));
        if (!matchesLabels(record, filters)) continue;
        if (skipped < offset) skipped++;
        else out.push(record);
        if (out.length >= limit) break;
      }
      return out;
    }
    const where = opts.includeArchived ? '' : 'WHERE NOT archived';
    const rows = await this.#q<{ record: string }>(
      `SELECT record FROM warren_sessions ${where} ORDER BY created_at_ms, session_id LIMIT $1 OFFSET $2`,
      [sqlLimit(limit), offset],
    );
    return rows.map((r) => readSessionRecord(JSON.parse(r.record)));
  }

  async countSessions(): Promise<number> {
    const rows = await this.#q<{ n: string }>('SELECT COUNT(*) AS n FROM warren_sessions', []);
    return Number(rows[0].n);
  }

  async readRows(sessionId: string, offset?: number, limit?: number): Promise<{ rows: Message[]; total: number }> {
    const page = pageBounds(offset, limit);
    const rows =
      page.limit > 0
        ? (
            await this.#q<{ message: string }>(
              'SELECT message FROM warren_rows WHERE session_id = $1 AND idx >= $2 ORDER BY idx LIMIT $3',
              [sessionId, page.offset, sqlLimit(page.limit)],
            )
          ).map((r) => JSON.parse(r.message) as Message)
        : [];
    // Rows are contiguous from 0, so a page that ends before its limit ends at the last row.
    if (rows.length < page.limit && (rows.length > 0 || page.offset === 0)) return { rows, total: page.offset + rows.length };
    const last = await this.#q<{ n: number | null }>('SELECT MAX(idx) AS n FROM warren_rows WHERE session_id = $1', [sessionId]);
    return { rows, total: last[0].n === null ? 0 : Number(last[0].n) + 1 };
  }

  async readLedger(sessionId: string, afterSeq: number, limit?: number): Promise<LedgerEntry[]> {
    const { limit: max } = pageBounds(0, limit);
    if (max === 0 || afterSeq === Infinity) return [];
    const after = Number.isFinite(afterSeq) ? Math.floor(afterSeq) : 0;
    const rows = await this.#q<{ entry: string }>(
      'SELECT entry FROM warren_ledger WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3',
      [sessionId, after, sqlLimit(max)],
    );
    return readLedgerEntries(
      sessionId,
      rows.map((r) => JSON.parse(r.entry) as LedgerEntry),
    );
  }

  async lastLedgerSeq(sessionId: string): Promise<number> {
    const rows = await this.#q<{ s: string | null }>('SELECT MAX(seq) AS s FROM warren_ledger WHERE session_id = $1', [sessionId]);
    return rows[0].s === null ? 0 : Number(rows[0].s);
  }

  async getRecord<T = unknown>(ns: string, key: string): Promise<T | undefined> {
    const rows = await this.#q<{ value: string }>('SELECT value FROM warren_records WHERE ns = $1 AND key = $2', [ns, key]);
    return rows.length === 0 ? undefined : (JSON.parse(rows[0].value) as T);
  }

  async listRecords<T = unknown>(ns: string): Promise<Array<{ key: string; value: T }>> {
    // COLLATE "C": byte order, as the other backends sort keys.
    const rows = await this.#q<{ key: string; value: string }>(
      'SELECT key, value FROM warren_records WHERE ns = $1 ORDER BY key COLLATE "C"',
      [ns],
    );
    return rows.map((r) => ({ key: r.key, value: JSON.parse(r.value) as T }));
  }

  /**
   * Serialises the ops now and queues them. Everything queued in one event-loop turn, and everything queued
   * while a transaction runs, goes into the next transaction. Resolves after its COMMIT returned.
   */
  commit(ops: StoreOp[]): Promise<void> {
    try {
      if (this.#closed) throw new ServiceError('SESSION_STORE_ERROR', 'store is closed');
      const writes = encodePg(checkOps(ops));
      if (writes.length === 0) return Promise.resolve();
      return this.#commits.push(writes);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  async #run(commits: PgWrite[][]): Promise<Array<ServiceError | null>> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      const e = new ServiceError(
        'SESSION_STORE_ERROR',
        `postgres commit failed: cannot connect: ${err instanceof Error ? err.message : String(err)}`,
        { cause_code: 'ECONNREFUSED' },
        { cause: err },
      );
      return commits.map(() => e);
    }
    let broken = false;
    try {
      return await runBatch(client, commits);
    } catch (err) {
      broken = true;
      throw err;
    } finally {
      client.release(broken);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    await this.#commits.drain();
    this.#closed = true;
    await this.pool.end();
  }
}

/**
 * Opens the store on the database at `opts.url`, bringing its schema up to date first (safe when several
 * nodes start at once).
 */
export async function openPostgresStore(opts: PostgresOptions): Promise<PostgresStore> {
  const redacted = redactPostgresUrl(opts.url);
  // pg is loaded when a postgres realm opens, not at every start (about 15 MiB of idle RSS).
  const { default: pgModule } = await import('pg');
  const pool = new pgModule.Pool({
    connectionString: opts.url,
    max: opts.poolMax ?? 10,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 10_000,
  });
  // An idle pooled connection the server dropped must not crash the process: the next query reconnects.
  pool.on('error', () => undefined);
  try {
    await migratePostgres(pool);
    return new PostgresStore(pool, redacted);
  } catch (err) {
    await pool.end().catch(() => undefined);
    if (isServiceError(err)) throw err;
    throw new ServiceError(
      'SESSION_STORE_ERROR',
      `cannot open postgres store at ${redacted}: ${err instanceof Error ? err.message : String(err)}`,
      { url: redacted },
      { cause: err },
    );
  }
}
