// storage/jsonl-journal.ts: the jsonl backend's crash-safe multi-file write. A batch of file actions is
// written to `<dir>/journal.json` (fsync, rename), applied, fsynced, then the journal is removed; open replays a leftover.
import { mkdir, open, rename, rm, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ServiceError } from '../contracts/errors.ts';

/** One idempotent file change. Paths are relative to the store dir, '/'-separated. */
export type FileAction =
  /** Replaces the whole file (temp file + rename). */
  | { type: 'write'; path: string; data: string }
  /** Cuts the file back to `base_size`, then appends `data`, so a replay after a partial append is exact. */
  | { type: 'append'; path: string; base_size: number; data: string }
  | { type: 'delete'; path: string };

interface Journal {
  v: 1;
  actions: FileAction[];
}

const JOURNAL = 'journal.json';
const SEGMENT = /^[A-Za-z0-9_%#.-]+$/;

function resolveIn(root: string, path: string): string {
  const parts = path.split('/');
  if (parts.some((p) => !SEGMENT.test(p) || p === '.' || p === '..')) {
    throw new ServiceError('SESSION_STORE_ERROR', 'journal names a path outside the store', { path });
  }
  return join(root, ...parts);
}

/** fsync a directory so that creates, renames and unlinks inside it are durable (not possible on Windows). */
async function fsyncDir(path: string): Promise<void> {
  if (process.platform === 'win32') return;
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** mkdir -p that records every directory whose entry list changed (for fsyncDir). */
async function ensureDir(path: string, dirty: Set<string>): Promise<void> {
  const first = await mkdir(path, { recursive: true });
  if (first === undefined) return;
  const top = dirname(first);
  for (let d = path; d !== top; d = dirname(d)) dirty.add(d);
  dirty.add(top);
}

async function writeDurably(file: string, data: string): Promise<void> {
  const tmp = `${file}.tmp`;
  const handle = await open(tmp, 'w');
  try {
    await handle.writeFile(data, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(tmp, file);
}

async function appendDurably(file: string, baseSize: number, data: string): Promise<void> {
  const handle = await open(file, 'a');
  try {
    const { size } = await handle.stat();
    if (size < baseSize) {
      throw new ServiceError('SESSION_STORE_ERROR', 'file is shorter than the journal expects', { file, size, baseSize });
    }
    if (size > baseSize) await handle.truncate(baseSize);
    await handle.appendFile(data, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Applies `actions` in order and makes them durable. Safe to run again over a partly applied batch. */
export async function applyActions(root: string, actions: readonly FileAction[]): Promise<void> {
  const dirty = new Set<string>();
  for (const action of actions) {
    const file = resolveIn(root, action.path);
    const parent = dirname(file);
    if (action.type === 'delete') {
      await rm(file, { force: true });
      dirty.add(parent);
      continue;
    }
    await ensureDir(parent, dirty);
    if (action.type === 'write') {
      await writeDurably(file, action.data);
      dirty.add(parent);
    } else {
      if (!Number.isSafeInteger(action.base_size) || action.base_size < 0) {
        throw new ServiceError('SESSION_STORE_ERROR', 'journal append has a bad base_size', { path: action.path });
      }
      await appendDurably(file, action.base_size, action.data);
      if (action.base_size === 0) dirty.add(parent);
    }
  }
  for (const dir of dirty) {
    try {
      await fsyncDir(dir);
    } catch (err) {
      // A deleted file's parent may never have existed.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
}

/** Makes the batch durable as a journal before any file it names is touched. */
export async function writeJournal(root: string, actions: readonly FileAction[]): Promise<void> {
  const journal: Journal = { v: 1, actions: [...actions] };
  // Written under a temp name and renamed, so a journal that exists is always complete.
  await writeDurably(join(root, JOURNAL), JSON.stringify(journal));
  await fsyncDir(root);
}

/** Removes the journal once its actions are durable. */
export async function clearJournal(root: string): Promise<void> {
  await rm(join(root, JOURNAL), { force: true });
  await fsyncDir(root);
}

/** On open: applies and clears a journal left by a crash. Returns whether there was one. */
export async function replayJournal(root: string): Promise<boolean> {
  await rm(join(root, `${JOURNAL}.tmp`), { force: true });
  let text: string;
  try {
    text = await readFile(join(root, JOURNAL), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
  let journal: Journal;
  try {
    journal = JSON.parse(text) as Journal;
  } catch (err) {
    throw new ServiceError('SESSION_STORE_ERROR', 'jsonl journal is unreadable', { root }, { cause: err });
  }
  if (journal?.v !== 1 || !Array.isArray(journal.actions)) {
    throw new ServiceError('SESSION_STORE_ERROR', 'jsonl journal has an unknown format', { root });
  }
  await applyActions(root, journal.actions);
  await clearJournal(root);
  return true;
}

/** Removes a journal that was being written when its write failed (nothing was applied). */
export async function discardJournalTemp(root: string): Promise<void> {
  await rm(join(root, `${JOURNAL}.tmp`), { force: true });
}

/**
 * The actions that undo `actions` on the files as they are now (read before anything is applied), in
 * reverse order: appends are cut back to their base size, rewritten or deleted files get their old
 * content back, new files are deleted.
 */
export async function undoActions(root: string, actions: readonly FileAction[]): Promise<FileAction[]> {
  const undo: FileAction[] = [];
  for (let i = actions.length - 1; i >= 0; i--) {
    const action = actions[i];
    if (action.type === 'append') {
      undo.push({ type: 'append', path: action.path, base_size: action.base_size, data: '' });
      continue;
    }
    let old: string | undefined;
    try {
      old = await readFile(resolveIn(root, action.path), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    undo.push(old === undefined ? { type: 'delete', path: action.path } : { type: 'write', path: action.path, data: old });
  }
  return undo;
}
