// actors/memory/memory-store.ts: the session-scoped semantic memory. Fed by what compaction discards
// (a DiscardSink of actors/compaction.ts: its documents are committed in the rewrite's own commit, in
// the `memory:<session>` record namespace), searched by the memory_search tool. Full-text ranking by
// minisearch; with an embeddings endpoint, vector similarity too, fused by reciprocal rank (hybrid).
// The index is rebuilt from the durable documents on first use after a restart.
import MiniSearch from 'minisearch';
import type { StoredMemoryDoc } from '../../contracts/stored-records.ts';
import type { Message } from '../../contracts/transcript.ts';
import { MEMORY_DOC_KIND, namespaceOf, readRecords } from '../../storage/record-kinds.ts';
import type { Store, StoreOp } from '../../storage/store.ts';
import type { DiscardSink } from '../compaction.ts';
import type { ToolSource } from '../tool-contributions.ts';
import { cosine, type Embedder } from './embeddings.ts';
import { createMemorySearchTool } from '../../tools/memory-tools.ts';
import type { Tool } from '../../tools/tool.ts';

export interface MemoryHit {
  id: string;
  role: string;
  text: string;
  created_at: string;
  score: number;
}

interface SessionIndex {
  search: MiniSearch<StoredMemoryDoc>;
  docs: Map<string, StoredMemoryDoc>;
}

const ns = (sessionId: string) => namespaceOf(MEMORY_DOC_KIND, sessionId);
const RRF_K = 60;

/** Text of a discarded row; undefined for rows memory never holds (injected context, summaries, system). */
function memoryText(row: Message): { role: StoredMemoryDoc['role']; text: string } | undefined {
  if (row.role === 'user') {
    if (row.transcript_role === 'injected_context' || row.transcript_role === 'compaction_summary') return undefined;
    const text =
      typeof row.content === 'string'
        ? row.content
        : row.content
            .filter((b) => b.type === 'text')
            .map((b) => (b as { text: string }).text)
            .join('\n');
    return text.trim() ? { role: 'user', text } : undefined;
  }
  if (row.role === 'block_assistant') {
    const text = row.blocks
      .map((b) =>
        b.block_type === 'text' ? b.data.text : b.block_type === 'tool_use' ? `[tool ${b.data.name}] ${JSON.stringify(b.data.args)}` : '',
      )
      .filter(Boolean)
      .join('\n');
    return text.trim() ? { role: 'assistant', text } : undefined;
  }
  if (row.role === 'tool_results') {
    const text = row.results.map((r) => r.content).join('\n');
    return text.trim() ? { role: 'tool_results', text } : undefined;
  }
  return undefined;
}

export class MemoryStore implements DiscardSink, ToolSource {
  private readonly indexes = new Map<string, Promise<SessionIndex>>();

  constructor(
    private readonly store: Store,
    /** The embedder of the current config, or undefined (full-text only). */
    private readonly embedder: () => Embedder | undefined,
  ) {}

  /** memory_search over this session's store (sessions created with enable_memory). */
  toolsFor(sessionId: string): Tool[] {
    return [createMemorySearchTool((query, limit, signal) => this.search(sessionId, query, limit, signal))];
  }

  async ops(sessionId: string, settings: Readonly<Record<string, unknown>>, discarded: Message[], atMs: number): Promise<StoreOp[]> {
    if (settings.memory !== true) return [];
    const docs: StoredMemoryDoc[] = [];
    discarded.forEach((row, i) => {
      const t = memoryText(row);
      if (t)
        docs.push({
          v: 1,
          id: `${String(atMs).padStart(15, '0')}-${String(i).padStart(6, '0')}`,
          role: t.role,
          text: t.text,
          created_at: row.created_at,
        });
    });
    const embed = this.embedder();
    if (embed && docs.length) {
      // Vectors are best-effort: an unreachable endpoint leaves the documents full-text searchable.
      try {
        const vectors = await embed(docs.map((d) => d.text));
        docs.forEach((d, i) => (d.embedding = vectors[i]));
      } catch {
        // keep full-text only
      }
    }
    return docs.map((d) => ({ op: 'putRecord' as const, ns: ns(sessionId), key: d.id, value: d }));
  }

  committed(sessionId: string, ops: StoreOp[]): number {
    const docs = ops.flatMap((op) => (op.op === 'putRecord' ? [op.value as StoredMemoryDoc] : []));
    if (docs.length === 0) return 0;
    const loaded = this.indexes.get(sessionId);
    if (loaded) void loaded.then((idx) => this.add(idx, docs)).catch(() => this.indexes.delete(sessionId));
    return docs.length;
  }

  private add(idx: SessionIndex, docs: StoredMemoryDoc[]): void {
    for (const d of docs) {
      if (idx.docs.has(d.id)) continue;
      idx.docs.set(d.id, d);
      idx.search.add(d);
    }
  }

  private index(sessionId: string): Promise<SessionIndex> {
    let idx = this.indexes.get(sessionId);
    if (!idx) {
      idx = (async () => {
        const search = new MiniSearch<StoredMemoryDoc>({
          fields: ['text'],
          storeFields: ['id'],
          searchOptions: { prefix: true, fuzzy: 0.2, combineWith: 'OR' },
        });
        const out: SessionIndex = { search, docs: new Map() };
        this.add(
          out,
          (await readRecords<StoredMemoryDoc>(this.store, MEMORY_DOC_KIND, sessionId)).map((r) => r.value),
        );
        return out;
      })();
      this.indexes.set(sessionId, idx);
      idx.catch(() => this.indexes.delete(sessionId));
    }
    return idx;
  }

  /** Ranked documents for a query: full-text, fused with vector similarity when embeddings exist. */
  async search(
    sessionId: string,
    query: string,
    limit: number,
    signal?: AbortSignal,
  ): Promise<{ hits: MemoryHit[]; mode: 'hybrid' | 'full_text' }> {
    const idx = await this.index(sessionId);
    const text = idx.search.search(query);
    const score = new Map<string, number>();
    text.forEach((r, rank) => score.set(String(r.id), 1 / (RRF_K + rank + 1)));
    let mode: 'hybrid' | 'full_text' = 'full_text';
    const embed = this.embedder();
    const withVectors = [...idx.docs.values()].filter((d) => d.embedding);
    if (embed && withVectors.length) {
      try {
        const [q] = await embed([query], signal);
        withVectors
          .map((d) => ({ id: d.id, sim: cosine(q, d.embedding!) }))
          .sort((a, b) => b.sim - a.sim)
          .slice(0, Math.max(limit * 4, 20))
          .forEach((v, rank) => score.set(v.id, (score.get(v.id) ?? 0) + 1 / (RRF_K + rank + 1)));
        mode = 'hybrid';
      } catch {
        // the endpoint failed: answer from the full-text ranking
      }
    }
    const hits = [...score.entries()]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, limit)
      .map(([id, s]) => {
        const d = idx.docs.get(id)!;
        return { id, role: d.role, text: d.text, created_at: d.created_at, score: Number(s.toFixed(6)) };
      });
    return { hits, mode };
  }

  /** Drops a session's live index (its documents stay durable). */
  evict(sessionId: string): void {
    this.indexes.delete(sessionId);
  }
}
