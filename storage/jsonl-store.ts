// storage/jsonl-store.ts: the inspectable Store backend: `sessions/<id>/{session.json,transcript.jsonl,ledger.jsonl}`
// and `records/<ns>/<key>.json` under the realm dir. One process at a time (a LOCK file); batches go through jsonl-journal.
import { createHash } from 'node:crypto';
import { mkdir, open, readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ServiceError } from '../contracts/errors.ts';
import type { Message } from '../contracts/transcript.ts';
import type { LedgerEntry, ListSessionsOptions, SessionRecord, Store, StoreOp } from './store.ts';
import { checkConditions, pageBounds, planBatch, prepareOps } from './prepare-ops.ts';
import { readLedgerEntries, readSessionRecord } from './record-migrations.ts';
import { SessionIndex } from './session-index.ts';
import {
  applyActions,
  clearJournal,
  discardJournalTemp,
  replayJournal,
  undoActions,
  writeJournal,
  type FileAction,
} from './jsonl-journal.ts';
import { storeFailure } from './store-failure.ts';
import { acquireProcessLock } from './process-lock.ts';

type RowOp = Extract<StoreOp, { op: 'putRows' | 'truncateRows' }>;

/**
 * A file-name-safe, case-insensitive-filesystem-safe form of an id: [a-z0-9_-] kept, every other UTF-8 byte
 * as %XX. Names that would get too long become '#' + sha256, and the files themselves carry the original id.
 */
function encodeName(name: string): string {
  let out = '';
  for (const byte of Buffer.from(name, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[a-z0-9_-]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out.length <= 200 ? out : `#${createHash('sha256').update(name).digest('hex')}`;
}

const sessionDir = (id: string): string => `sessions/${encodeName(id)}`;
const transcriptPath = (id: string): string => `${sessionDir(id)}/transcript.jsonl`;
const ledgerPath = (id: string): string => `${sessionDir(id)}/ledger.jsonl`;
const recordDir = (ns: string): string => `records/${encodeName(ns)}`;
const recordPath = (ns: string, key: string): string => `${recordDir(ns)}/${encodeName(key)}.json`;

function isMissing(err: unknown): boolean {
  return (err as NodeJS.ErrnoException).code === 'ENOENT';
}

async function readText(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if (isMissing(err)) return undefined;
    throw err;
  }
}

/** The file's lines without the trailing empty one; [] when the file does not exist. */
async function readLines(file: string): Promise<string[]> {
  const text = await readText(file);
  if (!text) return [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

async function fileSize(file: string): Promise<number> {
  try {
    return (await stat(file)).size;
  } catch (err) {
    if (isMissing(err)) return 0;
    throw err;
  }
}

const jsonLines = (values: readonly unknown[]): string => values.map((v) => `${JSON.stringify(v)}\n`).join('');

class JsonlStore implements Store {
  readonly backend = 'jsonl' as const;
  readonly persistent = true;
  readonly #root: string;
  readonly #sessions: SessionIndex;
  readonly #rowCounts = new Map<string, number>();
  readonly #lastSeqs = new Map<string, number>();
  /** Reads and commits run one after another (see #run). */
  #tail: Promise<void> = Promise.resolve();
  /** A batch that failed halfway and is not rolled back yet. */
  #broken: { undo: FileAction[]; cause: unknown } | undefined;
  #closed = false;

  constructor(root: string, sessions: SessionIndex) {
    this.#root = root;
    this.#sessions = sessions;
  }

  #file(path: string): string {
    return join(this.#root, ...path.split('/'));
  }

  /** Runs `fn` after every earlier read and commit, so a read never sees half of a batch. */
  #run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new ServiceError('SESSION_STORE_ERROR', 'store is closed'));
    const run = this.#tail.then(fn);
    this.#tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  getSession(sessionId: string): Promise<SessionRecord | undefined> {
    return this.#run(async () => {
      const record = this.#sessions.get(sessionId);
      return record && structuredClone(record);
    });
  }

  listSessions(opts?: ListSessionsOptions): Promise<SessionRecord[]> {
    return this.#run(async () => structuredClone(this.#sessions.list(opts)));
  }

  countSessions(): Promise<number> {
    return this.#run(async () => this.#sessions.count());
  }

  readRows(sessionId: string, offset?: number, limit?: number): Promise<{ rows: Message[]; total: number }> {
    return this.#run(async () => {
      const lines = await readLines(this.#file(transcriptPath(sessionId)));
      const page = pageBounds(offset, limit);
      const rows = lines.slice(page.offset, page.offset + page.limit).map((line) => JSON.parse(line) as Message);
      return { rows, total: lines.length };
    });
  }

  readLedger(sessionId: string, afterSeq: number, limit?: number): Promise<LedgerEntry[]> {
    return this.#run(async () => {
      const { limit: max } = pageBounds(0, limit);
      const out: LedgerEntry[] = [];
      for (const line of await readLines(this.#file(ledgerPath(sessionId)))) {
        if (out.length >= max) break;
        const entry = JSON.parse(line) as LedgerEntry;
        if (entry.seq > afterSeq) out.push(entry);
      }
      return readLedgerEntries(sessionId, out);
    });
  }

  lastLedgerSeq(sessionId: string): Promise<number> {
    return this.#run(async () => {
      await this.#loadCounts(sessionId);
      return this.#lastSeqs.get(sessionId) ?? 0;
    });
  }

  getRecord<T = unknown>(ns: string, key: string): Promise<T | undefined> {
    return this.#run(async () => {
      const text = await readText(this.#file(recordPath(ns, key)));
      return text === undefined ? undefined : (JSON.parse(text) as { value: T }).value;
    });
  }

  listRecords<T = unknown>(ns: string): Promise<Array<{ key: string; value: T }>> {
    return this.#run(async () => {
      const dir = this.#file(recordDir(ns));
      let names: string[];
      try {
        names = (await readdir(dir)).filter((n) => n.endsWith('.json'));
      } catch (err) {
        if (isMissing(err)) return [];
        throw err;
      }
      const out = await Promise.all(names.map(async (n) => JSON.parse(await readFile(join(dir, n), 'utf8')) as { key: string; value: T }));
      return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    });
  }

  /** Caches the row count and last ledger seq of a session, read from its files once. */
  async #loadCounts(sessionId: string): Promise<void> {
    if (!this.#rowCounts.has(sessionId)) {
      this.#rowCounts.set(sessionId, (await readLines(this.#file(transcriptPath(sessionId)))).length);
    }
    if (!this.#lastSeqs.has(sessionId)) {
      const last = (await readLines(this.#file(ledgerPath(sessionId)))).at(-1);
      this.#lastSeqs.set(sessionId, last ? (JSON.parse(last) as LedgerEntry).seq : 0);
    }
  }

  async commit(ops: StoreOp[]): Promise<void> {
    if (this.#closed) throw new ServiceError('SESSION_STORE_ERROR', 'store is closed');
    const prepared = prepareOps(ops);
    if (prepared.length === 0) return;
    return this.#run(() => this.#write(prepared));
  }

  async #write(ops: StoreOp[]): Promise<void> {
    // A batch that failed to apply and could not be rolled back yet: undo it first (space may be back).
    if (this.#broken !== undefined) await this.#undoBroken();
    for (const op of ops) if ('sessionId' in op) await this.#loadCounts(op.sessionId);
    const plan = planBatch(ops, {
      rowCount: (id) => this.#rowCounts.get(id) ?? 0,
      lastSeq: (id) => this.#lastSeqs.get(id) ?? 0,
    });
    // Commits run one after another (#run), so records read here cannot change before the batch lands.
    const current = new Map<string, unknown>();
    for (const op of ops) {
      if (op.op !== 'checkRecord') continue;
      const text = await readText(this.#file(recordPath(op.ns, op.key)));
      current.set(`${op.ns}\u0000${op.key}`, text === undefined ? undefined : (JSON.parse(text) as { value: unknown }).value);
    }
    checkConditions(ops, (ns, key) => current.get(`${ns}\u0000${key}`));
    const actions = await this.#actions(ops);
    try {
      await writeJournal(this.#root, actions);
    } catch (err) {
      // Nothing was applied; only a partial temp journal may be left.
      await discardJournalTemp(this.#root).catch(() => undefined);
      throw storeFailure('jsonl commit', err);
    }
    // What each touched file looks like now, so a batch that fails halfway can be undone (a failed
    // commit must leave the store as it was; replaying it forward would resurrect what the caller was
    // told failed).
    const undo = await undoActions(this.#root, actions);
    try {
      await applyActions(this.#root, actions);
      await clearJournal(this.#root);
    } catch (err) {
      this.#broken = { undo, cause: err };
      await this.#undoBroken().catch(() => undefined);
      throw storeFailure('jsonl commit', err);
    }
    for (const op of ops) if (op.op === 'putSession') this.#sessions.put(op.session);
    for (const [id, n] of plan.rowCounts) this.#rowCounts.set(id, n);
    for (const [id, seq] of plan.lastSeqs) this.#lastSeqs.set(id, seq);
  }

  /** Rolls back a half-applied batch (appends cut back, rewritten files restored), then drops its journal. */
  async #undoBroken(): Promise<void> {
    const broken = this.#broken;
    if (broken === undefined) return;
    try {
      await applyActions(this.#root, broken.undo);
      await clearJournal(this.#root);
    } catch (err) {
      throw storeFailure('jsonl rollback of an earlier failed commit', err);
    }
    this.#broken = undefined;
  }

  async #actions(ops: StoreOp[]): Promise<FileAction[]> {
    const actions: FileAction[] = [];
    const rowOps = new Map<string, RowOp[]>();
    const ledger = new Map<string, LedgerEntry[]>();
    const drops = new Map<string, Array<[number, number]>>();
    for (const op of ops) {
      switch (op.op) {
        case 'putSession': {
          const path = `${sessionDir(op.session.session_id)}/session.json`;
          actions.push({ type: 'write', path, data: `${JSON.stringify(op.session, null, 2)}\n` });
          break;
        }
        case 'putRows':
        case 'truncateRows':
          rowOps.set(op.sessionId, [...(rowOps.get(op.sessionId) ?? []), op]);
          break;
        case 'appendLedger':
          ledger.set(op.sessionId, [...(ledger.get(op.sessionId) ?? []), ...op.entries]);
          break;
        case 'dropLedger':
          drops.set(op.sessionId, [...(drops.get(op.sessionId) ?? []), ...op.ranges]);
          break;
        case 'putRecord': {
          const data = `${JSON.stringify({ key: op.key, value: op.value }, null, 2)}\n`;
          actions.push({ type: 'write', path: recordPath(op.ns, op.key), data });
          break;
        }
        case 'deleteRecord':
          actions.push({ type: 'delete', path: recordPath(op.ns, op.key) });
          break;
        case 'checkRecord':
          break;
      }
    }
    for (const [id, list] of rowOps) actions.push(...(await this.#transcriptActions(id, list)));
    // A session whose ledger loses entries gets its ledger file rewritten: retained lines plus this batch's.
    for (const [id, ranges] of drops) {
      const path = ledgerPath(id);
      const dropped = (seq: number): boolean => ranges.some(([from, to]) => seq >= from && seq <= to);
      const kept = (await readLines(this.#file(path))).filter((line) => !dropped((JSON.parse(line) as LedgerEntry).seq));
      const added = (ledger.get(id) ?? []).filter((e) => !dropped(e.seq));
      ledger.delete(id);
      actions.push({ type: 'write', path, data: kept.map((line) => `${line}\n`).join('') + jsonLines(added) });
    }
    for (const [id, entries] of ledger) {
      if (entries.length === 0) continue;
      const path = ledgerPath(id);
      actions.push({ type: 'append', path, base_size: await fileSize(this.#file(path)), data: jsonLines(entries) });
    }
    return actions;
  }

  /** Pure appends stay appends; anything that rewrites or drops rows rewrites the transcript file. */
  async #transcriptActions(sessionId: string, ops: RowOp[]): Promise<FileAction[]> {
    const path = transcriptPath(sessionId);
    let count = this.#rowCounts.get(sessionId) ?? 0;
    const appended: Message[] = [];
    const pureAppend = ops.every((op) => {
      if (op.op === 'truncateRows') return op.length >= count;
      if (op.fromIndex !== count) return false;
      appended.push(...op.rows);
      count += op.rows.length;
      return true;
    });
    if (pureAppend) {
      if (appended.length === 0) return [];
      return [{ type: 'append', path, base_size: await fileSize(this.#file(path)), data: jsonLines(appended) }];
    }
    const lines = await readLines(this.#file(path));
    for (const op of ops) {
      if (op.op === 'putRows') op.rows.forEach((row, i) => (lines[op.fromIndex + i] = JSON.stringify(row)));
      else if (lines.length > op.length) lines.length = op.length;
    }
    return [{ type: 'write', path, data: lines.map((l) => `${l}\n`).join('') }];
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#tail;
    await rm(join(this.#root, 'LOCK'), { force: true });
  }
}

async function loadSessions(root: string): Promise<SessionIndex> {
  const index = new SessionIndex();
  const dirs = await readdir(join(root, 'sessions'));
  for (let i = 0; i < dirs.length; i += 64) {
    const texts = await Promise.all(dirs.slice(i, i + 64).map((d) => readText(join(root, 'sessions', d, 'session.json'))));
    for (const text of texts) if (text) index.put(readSessionRecord(JSON.parse(text)));
  }
  return index;
}

/** Opens (creating when absent) the jsonl store under `dir`, replaying a journal left by a crash. */
export async function openJsonlStore(dir: string): Promise<Store> {
  await mkdir(join(dir, 'sessions'), { recursive: true });
  await mkdir(join(dir, 'records'), { recursive: true });
  await acquireProcessLock(dir, 'jsonl');
  try {
    await replayJournal(dir);
    return new JsonlStore(dir, await loadSessions(dir));
  } catch (err) {
    await rm(join(dir, 'LOCK'), { force: true });
    throw err;
  }
}
