// actors/mob/mob-agent-events.ts: the live tap of member agent events (a member turn started, completed,
// failed), as unified envelopes with source `agent`. Best-effort and in memory: each mob keeps its last
// 256 envelopes for a stream that connects late; the durable record of a mob is its structural ledger.
import { randomUUID } from 'node:crypto';
import type { UnifiedEnvelope } from '../../contracts/mob.ts';

const RING = 256;

export class AgentEvents {
  private readonly rings = new Map<string, UnifiedEnvelope[]>();
  private readonly subscribers = new Map<string, Set<(e: UnifiedEnvelope) => void>>();

  publish(mobId: string, agentId: string, eventType: string, fields: Record<string, unknown>, now: number): void {
    const env: UnifiedEnvelope = {
      event_id: randomUUID(),
      source: 'agent',
      timestamp_ms: now,
      event: { agent_id: agentId, event_type: eventType, ...fields },
    };
    let ring = this.rings.get(mobId);
    if (!ring) this.rings.set(mobId, (ring = []));
    ring.push(env);
    if (ring.length > RING) ring.shift();
    for (const fn of this.subscribers.get(mobId) ?? []) fn(env);
  }

  recent(mobId: string): UnifiedEnvelope[] {
    return [...(this.rings.get(mobId) ?? [])];
  }

  subscribe(mobId: string, fn: (e: UnifiedEnvelope) => void): () => void {
    let set = this.subscribers.get(mobId);
    if (!set) this.subscribers.set(mobId, (set = new Set()));
    set.add(fn);
    return () => set.delete(fn);
  }
}
