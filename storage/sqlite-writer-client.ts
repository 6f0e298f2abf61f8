// storage/sqlite-writer-client.ts: the server-thread side of the sqlite writer thread (storage/sqlite-writer.ts).
// One thread per process serves every sqlite store opened in it (a realm has one; tests open many), so only
// the first open pays for starting it. storage/sqlite-store.ts is the only caller.
import { Worker } from 'node:worker_threads';
import { ServiceError } from '../contracts/errors.ts';
import type { FromWriter, ToWriter } from './sqlite-writer.ts';
import type { WireError, Write } from './sqlite-writes.ts';

const fromWire = (e: WireError): ServiceError => new ServiceError(e.code, e.message, e.details);

class WriterThread {
  readonly #worker: Worker;
  /** Reply callbacks per database, in request order (the thread answers each database's requests in order). */
  readonly #waiting = new Map<number, Array<{ resolve(msg: FromWriter): void; reject(err: unknown): void }>>();
  /** Requests in flight: the thread keeps the process alive only while one is. */
  #inFlight = 0;
  #dead: ServiceError | null = null;

  constructor(worker: Worker) {
    this.#worker = worker;
    worker.unref();
    worker.on('message', (msg: FromWriter) => {
      const queue = this.#waiting.get(msg.db);
      const waiter = queue?.shift();
      if (queue && queue.length === 0) this.#waiting.delete(msg.db);
      if (--this.#inFlight === 0) this.#worker.unref();
      waiter?.resolve(msg);
    });
    worker.on('error', (err) =>
      this.#die(new ServiceError('SESSION_STORE_ERROR', 'sqlite writer thread failed', undefined, { cause: err })),
    );
    worker.on('exit', (code) => this.#die(new ServiceError('SESSION_STORE_ERROR', `sqlite writer thread exited with ${code}`)));
  }

  get dead(): boolean {
    return this.#dead !== null;
  }

  request(msg: ToWriter): Promise<FromWriter> {
    if (this.#dead) return Promise.reject(this.#dead);
    return new Promise<FromWriter>((resolve, reject) => {
      const queue = this.#waiting.get(msg.db) ?? [];
      queue.push({ resolve, reject });
      this.#waiting.set(msg.db, queue);
      if (this.#inFlight++ === 0) this.#worker.ref();
      this.#worker.postMessage(msg);
    });
  }

  #die(err: ServiceError): void {
    if (this.#dead) return;
    this.#dead = err;
    if (shared === this) shared = undefined;
    const waiting = [...this.#waiting.values()].flat();
    this.#waiting.clear();
    for (const w of waiting) w.reject(err);
  }
}

let shared: WriterThread | undefined;
let nextDb = 1;

/**
 * The process's writer thread, started on first use. From the build (scripts/build.mjs) the thread imports
 * the compiled dist/sqlite-writer.js beside this bundle. From source (tsx), whose loader a worker does not
 * inherit, the thread registers tsx itself (resolved here) and then imports the TypeScript module.
 */
function writerThread(): WriterThread {
  if (shared && !shared.dead) return shared;
  let source: string;
  if (import.meta.url.endsWith('.js')) {
    source = `import(${JSON.stringify(new URL('./sqlite-writer.js', import.meta.url).href)});`;
  } else {
    const tsx = import.meta.resolve('tsx/esm/api');
    const entry = new URL('./sqlite-writer.ts', import.meta.url).href;
    source = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); });`;
  }
  shared = new WriterThread(new Worker(source, { eval: true, workerData: { warrenSqliteWriter: true } }));
  return shared;
}

/** One database file's writing connection, living in the writer thread. */
export class SqliteWriterHandle {
  readonly #thread: WriterThread;
  readonly #db: number;

  private constructor(thread: WriterThread, db: number) {
    this.#thread = thread;
    this.#db = db;
  }

  /** Opens `file` in the writer thread (WAL, synchronous=FULL, migrations applied). */
  static async open(file: string): Promise<SqliteWriterHandle> {
    const thread = writerThread();
    const db = nextDb++;
    const reply = await thread.request({ type: 'open', db, file });
    if (reply.type === 'failed') throw fromWire(reply.error);
    return new SqliteWriterHandle(thread, db);
  }

  /** Runs the commits in one transaction; resolves with each one's error (a ServiceError) or null once durable. */
  async run(commits: Write[][]): Promise<Array<ServiceError | null>> {
    const reply = await this.#thread.request({ type: 'run', db: this.#db, commits });
    if (reply.type !== 'done') throw new ServiceError('SESSION_STORE_ERROR', `unexpected ${reply.type} from the sqlite writer`);
    return reply.errors.map((e) => (e ? fromWire(e) : null));
  }

  async settings(): Promise<Record<string, unknown>> {
    const reply = await this.#thread.request({ type: 'settings', db: this.#db });
    return reply.type === 'settings' ? reply.settings : {};
  }

  async close(): Promise<void> {
    if (this.#thread.dead) return;
    await this.#thread.request({ type: 'close', db: this.#db });
  }
}
