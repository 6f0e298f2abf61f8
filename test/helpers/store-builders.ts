// test/helpers/store-builders.ts: builders shared by the store conformance suite and other storage
// tests: a directory-backed store factory, session records, transcript rows and ledger entries.
import { isServiceError, type ErrorCode } from '../../contracts/errors.ts';
import type { SessionSettings } from '../../contracts/records.ts';
import type { Message } from '../../contracts/transcript.ts';
import type { LedgerEntry, SessionRecord, Store } from '../../storage/store.ts';
import { tmpDir, type TmpDir } from './tmp-dir.ts';

/** Opens stores for the suite. `open` gives a fresh, empty store; `reopen` reopens the last one opened. */
export interface StoreFactory {
  open(): Promise<Store>;
  reopen?(): Promise<Store>;
  cleanup(): Promise<void>;
}

/** A factory for a backend that lives in a directory: each open() gets a new temp dir, reopen() the last one. */
export function dirStoreFactory(prefix: string, openAt: (dir: string) => Promise<Store>): StoreFactory {
  const dirs: TmpDir[] = [];
  return {
    async open() {
      const dir = await tmpDir(prefix);
      dirs.push(dir);
      return openAt(dir.path);
    },
    async reopen() {
      const last = dirs.at(-1);
      if (!last) throw new Error('reopen before open');
      return openAt(last.path);
    },
    async cleanup() {
      await Promise.all(dirs.splice(0).map((d) => d.cleanup()));
    },
  };
}

/** A session record with defaults; `over` replaces fields. */
export function sessionRecord(id: string, createdAtMs: number, over: Partial<SessionRecord> = {}): SessionRecord {
  return {
    v: 2,
    session_id: id,
    created_at_ms: createdAtMs,
    updated_at_ms: createdAtMs,
    archived: false,
    labels: {},
    message_count: 0,
    total_tokens: 0,
    state: { phase: 'idle', nested: { turns: 0 } },
    ...over,
  };
}

/** A session's settings with defaults (scripted model, no tools); `over` replaces fields. */
export function sessionSettings(over: Partial<SessionSettings> = {}): SessionSettings {
  return {
    model: 'scripted',
    provider: 'scripted',
    max_tokens: 100,
    system_prompt_disabled: false,
    builtins: false,
    shell: false,
    keep_alive: false,
    ...over,
  };
}

/** A user transcript row whose text is `text`. */
export function userRow(text: string): Message {
  return { role: 'user', content: text, created_at: '2026-01-01T00:00:00.000Z' };
}

/** Ledger entries with the given seqs. */
export function entries(...seqs: number[]): LedgerEntry[] {
  return seqs.map((seq) => ({ seq, kind: 'turn_completed', timestamp_ms: 1000 + seq, payload: { seq } }));
}

/** The text of each user row, the role of every other row. */
export const texts = (rows: Message[]): string[] => rows.map((r) => (r.role === 'user' ? String(r.content) : r.role));
export const ids = (list: SessionRecord[]): string[] => list.map((s) => s.session_id);

/** An assert.rejects predicate: a ServiceError with this code. */
export function withCode(code: ErrorCode): (err: unknown) => boolean {
  return (err) => isServiceError(err) && err.code === code;
}
