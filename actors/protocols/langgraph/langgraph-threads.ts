// actors/protocols/langgraph/langgraph-threads.ts: LangGraph threads as the store keeps them. A thread is the
// session with the same id; POST /threads reserves the id before the thread's first run creates that
// session, with a thread record (`langgraph_thread`, keyed by thread id, read through its record kind:
// a corrupt one is refused with SESSION_STORE_ERROR) that carries the thread's metadata.
import type { SessionRecord } from '../../../contracts/records.ts';
import type { StoredLangGraphThread } from '../../../contracts/stored-records.ts';
import { LANGGRAPH_THREAD_KIND, namespaceOf, readRecord } from '../../../storage/record-kinds.ts';
import type { Store } from '../../../storage/store.ts';

export class LangGraphThreads {
  constructor(private readonly store: Store) {}

  /** The thread's reservation record and its session's stored record (either may be absent). */
  async lookup(id: string): Promise<{ record: StoredLangGraphThread | undefined; session: SessionRecord | undefined }> {
    const [record, session] = await Promise.all([
      readRecord<StoredLangGraphThread>(this.store, LANGGRAPH_THREAD_KIND, id),
      this.store.getSession(id),
    ]);
    return { record, session };
  }

  /** True when the id is taken: reserved as a thread, or a session's. */
  async exists(id: string): Promise<boolean> {
    const { record, session } = await this.lookup(id);
    return record !== undefined || session !== undefined;
  }

  /** Reserves the thread id with its metadata. */
  async reserve(id: string, metadata: Record<string, unknown>, nowMs: number): Promise<StoredLangGraphThread> {
    const record: StoredLangGraphThread = { v: 1, thread_id: id, created_ms: nowMs, metadata };
    await this.store.commit([{ op: 'putRecord', ns: namespaceOf(LANGGRAPH_THREAD_KIND), key: id, value: record }]);
    return record;
  }
}
