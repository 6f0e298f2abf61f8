// actors/mob/envelope.ts: the unified event envelope of the mob toolkit layer (pure functions).
// - moduleEnvelope: a structural event as a module event {module: 'mob', event_type, payload}.
// - mergeEvents: agent and module envelopes in one vector by timestamp_ms; on equal timestamps agent
//   events come first; otherwise the input order is kept (stable).
// - normalizeModuleLines: checks JSON lines of module events (ids present and unique, timestamps
//   non-decreasing, source `module`, event {module, event_type} strings). A malformed line raises a
//   NormalizationError naming the line; valid lines are returned exactly as parsed, never altered.
import type { MobEvent, UnifiedEnvelope } from '../../contracts/mob.ts';

export function moduleEnvelope(e: MobEvent): UnifiedEnvelope {
  return { event_id: e.event_id, source: 'module', timestamp_ms: e.timestamp_ms, event: { module: 'mob', event_type: e.kind, payload: e } };
}

export function mergeEvents(agent: readonly UnifiedEnvelope[], module: readonly UnifiedEnvelope[]): UnifiedEnvelope[] {
  const tagged = [...agent.map((e, i) => ({ e, rank: 0, i })), ...module.map((e, i) => ({ e, rank: 1, i }))];
  tagged.sort((x, y) => x.e.timestamp_ms - y.e.timestamp_ms || x.rank - y.rank || x.i - y.i);
  return tagged.map((t) => t.e);
}

export class NormalizationError extends Error {
  constructor(
    readonly line: number,
    readonly reason: string,
  ) {
    super(`module event line ${line}: ${reason}`);
    this.name = 'NormalizationError';
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function normalizeModuleLines(lines: readonly string[]): UnifiedEnvelope[] {
  const seen = new Set<string>();
  let last = -Infinity;
  const out: UnifiedEnvelope[] = [];
  lines.forEach((line, index) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw new NormalizationError(index, 'not JSON');
    }
    if (!isRecord(parsed)) throw new NormalizationError(index, 'not an object');
    const { event_id: id, source, timestamp_ms: ts, event } = parsed;
    if (typeof id !== 'string' || id === '') throw new NormalizationError(index, 'event_id missing');
    if (seen.has(id)) throw new NormalizationError(index, `duplicate event_id ${id}`);
    if (source !== 'module') throw new NormalizationError(index, `source must be 'module', got ${JSON.stringify(source)}`);
    if (typeof ts !== 'number' || !Number.isInteger(ts) || ts < 0)
      throw new NormalizationError(index, 'timestamp_ms must be a non-negative integer');
    if (ts < last) throw new NormalizationError(index, `timestamp_ms ${ts} goes backwards (previous ${last})`);
    if (!isRecord(event) || typeof event.module !== 'string' || typeof event.event_type !== 'string')
      throw new NormalizationError(index, 'event must carry module and event_type');
    seen.add(id);
    last = ts;
    out.push(parsed as unknown as UnifiedEnvelope);
  });
  return out;
}
