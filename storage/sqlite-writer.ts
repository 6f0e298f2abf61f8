// storage/sqlite-writer.ts: the sqlite backend's writer thread (a worker_threads entry started by
// storage/sqlite-writer-client.ts). It owns the writing connection of every sqlite store the process opened:
// group transactions and their fsync run here, off the server's event loop, in the order they arrive.
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { SqliteWriter, type Write, type WireError } from './sqlite-writes.ts';

/** Messages the client sends; `db` names one open database file. */
export type ToWriter =
  | { type: 'open'; db: number; file: string }
  | { type: 'run'; db: number; commits: Write[][] }
  | { type: 'settings'; db: number }
  | { type: 'close'; db: number };

/** Replies, one per message, in the order the messages arrived. */
export type FromWriter =
  | { type: 'opened'; db: number }
  | { type: 'failed'; db: number; error: WireError }
  | { type: 'done'; db: number; errors: Array<WireError | null> }
  | { type: 'settings'; db: number; settings: Record<string, unknown> }
  | { type: 'closed'; db: number };

function openError(err: unknown): WireError {
  const details = (err as { details?: unknown }).details;
  return { code: 'SESSION_STORE_ERROR', message: err instanceof Error ? err.message : String(err), details };
}

function serve(): void {
  const port = parentPort!;
  const send = (msg: FromWriter): void => port.postMessage(msg);
  const writers = new Map<number, SqliteWriter>();
  const writer = (db: number): SqliteWriter => {
    const w = writers.get(db);
    if (!w) throw new Error(`sqlite writer ${db} is not open`);
    return w;
  };
  port.on('message', (msg: ToWriter) => {
    switch (msg.type) {
      case 'open':
        try {
          writers.set(msg.db, new SqliteWriter(msg.file));
          send({ type: 'opened', db: msg.db });
        } catch (err) {
          send({ type: 'failed', db: msg.db, error: openError(err) });
        }
        return;
      case 'run':
        send({ type: 'done', db: msg.db, errors: writer(msg.db).run(msg.commits) });
        return;
      case 'settings':
        send({ type: 'settings', db: msg.db, settings: writer(msg.db).settings() });
        return;
      case 'close':
        writers.get(msg.db)?.close();
        writers.delete(msg.db);
        send({ type: 'closed', db: msg.db });
        return;
    }
  });
}

if (!isMainThread && parentPort && (workerData as { warrenSqliteWriter?: unknown } | null)?.warrenSqliteWriter === true) serve();
