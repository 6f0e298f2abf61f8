// storage/group-commit.ts: the group-commit queue of the SQL backends (sqlite-store.ts, postgres-store.ts).
// Commits are encoded by the store, then queued here. Everything queued in one event-loop turn, and
// everything queued while a transaction runs, goes into the next transaction, one transaction at a time
// so they land in issue order. Each commit's promise settles with its own outcome once the transaction
// that carried it returned (the runner reports one error or null per commit), i.e. once it is durable.

/** Runs the commits in one transaction; resolves with each one's error or null. May reject for the whole batch. */
export type BatchRunner<W> = (commits: W[]) => Promise<Array<unknown>>;

interface Pending<W> {
  writes: W;
  resolve(): void;
  reject(err: unknown): void;
}

export class GroupCommitQueue<W> {
  readonly #run: BatchRunner<W>;
  /** Commits not yet handed to the runner. */
  #queue: Pending<W>[] = [];
  /** The batch the runner is running (at most one). */
  #inFlight = false;
  #scheduled = false;
  #idle: Array<() => void> = [];

  constructor(run: BatchRunner<W>) {
    this.#run = run;
  }

  /** Queues one commit's encoded writes; resolves once the transaction carrying them committed. */
  push(writes: W): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ writes, resolve, reject });
      if (!this.#scheduled && !this.#inFlight) {
        this.#scheduled = true;
        setImmediate(() => {
          this.#scheduled = false;
          this.#send();
        });
      }
    });
  }

  /** Resolves once nothing is queued or running (commits already accepted have landed). */
  drain(): Promise<void> {
    if (!this.#inFlight && !this.#scheduled && this.#queue.length === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.#idle.push(resolve));
  }

  /** Hands every queued commit to the runner as one transaction, unless one is running. */
  #send(): void {
    if (this.#inFlight) return;
    const batch = this.#queue;
    if (batch.length === 0) {
      const idle = this.#idle;
      this.#idle = [];
      for (const resolve of idle) resolve();
      return;
    }
    this.#queue = [];
    this.#inFlight = true;
    // Never rejects: every outcome settles the batch's own promises.
    void this.#run(batch.map((p) => p.writes))
      .then(
        (errors) => batch.forEach((p, i) => (errors[i] ? p.reject(errors[i]) : p.resolve())),
        (err: unknown) => batch.forEach((p) => p.reject(err)),
      )
      .finally(() => {
        this.#inFlight = false;
        this.#send();
      });
  }
}
