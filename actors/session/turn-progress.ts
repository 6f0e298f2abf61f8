// actors/session/turn-progress.ts: a running turn's live progress, for the viewer (GET
// /inspect/actors/session/{id}): the model call in flight (provider, model, since when, bytes and deltas
// received, retries) and the tool calls still running. callModel (turn-steps.ts) makes one per turn, feeds
// it every event the turn publishes and drops it when the model/tool loop ends. Counters only: a delta
// costs two additions and no allocation. Never persisted.
import type { TurnInFlight } from '../../contracts/routes-observe.ts';
import type { SessionEventKind } from '../../contracts/session-events.ts';

interface ModelCall {
  number: number;
  startedMs: number;
  bytes: number;
  textDeltas: number;
  reasoningDeltas: number;
  retries: number;
}

export class TurnProgress {
  private call: ModelCall | null = null;
  private calls = 0;
  /** Tool calls started and not completed, by call id. */
  private readonly tools = new Map<string, { name: string; sinceMs: number }>();

  constructor(
    private readonly requestId: string,
    private readonly startedMs: number,
    private readonly provider: string,
    private readonly model: string,
  ) {}

  /** Told of each event the turn publishes, with its timestamp. */
  onEvent(kind: SessionEventKind, payload: unknown, atMs: number): void {
    switch (kind) {
      case 'turn_started':
        this.calls++;
        this.call = { number: this.calls, startedMs: atMs, bytes: 0, textDeltas: 0, reasoningDeltas: 0, retries: 0 };
        break;
      case 'text_delta':
      case 'reasoning_delta': {
        const call = this.call;
        if (!call) break;
        if (kind === 'text_delta') call.textDeltas++;
        else call.reasoningDeltas++;
        call.bytes += Buffer.byteLength((payload as { delta: string }).delta, 'utf8');
        break;
      }
      case 'retrying':
        if (this.call) this.call.retries++;
        break;
      case 'turn_completed':
        this.call = null;
        break;
      case 'tool_execution_started': {
        const { id, name } = payload as { id: string; name: string };
        this.tools.set(id, { name, sinceMs: atMs });
        break;
      }
      case 'tool_execution_completed':
        this.tools.delete((payload as { id: string }).id);
        break;
      default:
        break;
    }
  }

  /** The record as the inspection API answers it, elapsed times measured at `nowMs`. */
  view(nowMs: number): TurnInFlight {
    const c = this.call;
    return {
      request_id: this.requestId,
      provider: this.provider,
      model: this.model,
      started_ms: this.startedMs,
      elapsed_ms: Math.max(0, nowMs - this.startedMs),
      model_calls: this.calls,
      model_call: c
        ? {
            provider: this.provider,
            model: this.model,
            number: c.number,
            started_ms: c.startedMs,
            elapsed_ms: Math.max(0, nowMs - c.startedMs),
            bytes_received: c.bytes,
            text_deltas: c.textDeltas,
            reasoning_deltas: c.reasoningDeltas,
            retries: c.retries,
          }
        : null,
      pending_tools: [...this.tools].map(([id, t]) => ({
        id,
        name: t.name,
        since_ms: t.sinceMs,
        elapsed_ms: Math.max(0, nowMs - t.sinceMs),
      })),
    };
  }
}
