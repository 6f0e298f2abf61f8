// actors/protocols/a2a/a2a-map.ts: Warren session events → A2A (v0.3 JSON-RPC wire) task state and stream
// events. A task is a turn, its context the session.
//   (stream opens)             → Task {status: working}
//   text_delta / text_complete → TaskArtifactUpdateEvent: one artifact per assistant text block
//                                (artifactId `<task>-text-<seq of its first event>`), append after the
//                                first chunk, lastChunk on text_complete
//   tool_call_requested        → TaskStatusUpdateEvent working, agent message with a data part
//                                {type: 'tool_call', id, name, args}
//   tool_execution_completed   → TaskStatusUpdateEvent working, data part {type: 'tool_result', id, name,
//                                content, is_error}
//   run_completed              → TaskStatusUpdateEvent completed (final), agent message with the reply text
//   run_failed                 → TaskStatusUpdateEvent canceled (an interrupt) or failed (final)
// The same fold builds the Task object tasks/get and tasks/resubscribe answer with, so a snapshot plus the
// events after it is exactly the stream from the start.
import type { HubEntry } from '../../event-hub.ts';

export type A2aState = 'submitted' | 'working' | 'input-required' | 'completed' | 'canceled' | 'failed' | 'rejected' | 'unknown';

export type A2aPart =
  | { kind: 'text'; text: string; metadata?: Record<string, unknown> }
  | { kind: 'data'; data: Record<string, unknown>; metadata?: Record<string, unknown> };

export interface A2aMessage {
  kind: 'message';
  messageId: string;
  role: 'user' | 'agent';
  parts: A2aPart[];
  contextId: string;
  taskId: string;
}

export interface A2aArtifact {
  artifactId: string;
  name: string;
  parts: A2aPart[];
}

export interface A2aStatus {
  state: A2aState;
  message?: A2aMessage;
  timestamp: string;
}

export interface A2aTask {
  kind: 'task';
  id: string;
  contextId: string;
  status: A2aStatus;
  artifacts: A2aArtifact[];
  history: A2aMessage[];
  metadata: Record<string, unknown>;
}

export type A2aStreamEvent =
  | A2aTask
  | { kind: 'status-update'; taskId: string; contextId: string; status: A2aStatus; final: boolean }
  | { kind: 'artifact-update'; taskId: string; contextId: string; artifact: A2aArtifact; append: boolean; lastChunk: boolean };

export const TERMINAL: ReadonlySet<A2aState> = new Set(['completed', 'canceled', 'failed', 'rejected']);

export class A2aTaskMapper {
  private status: A2aStatus;
  private readonly artifacts: A2aArtifact[] = [];
  private readonly history: A2aMessage[] = [];
  private open: { artifact: A2aArtifact; text: string } | null = null;
  private n = 0;
  finished = false;

  constructor(
    readonly taskId: string,
    readonly contextId: string,
    createdMs: number,
    private readonly metadata: Record<string, unknown> = {},
  ) {
    this.status = { state: 'working', timestamp: new Date(createdMs).toISOString() };
  }

  /** The task as it stands after the events folded so far. */
  task(historyLength?: number): A2aTask {
    const history = historyLength === undefined ? this.history : historyLength <= 0 ? [] : this.history.slice(-historyLength);
    return {
      kind: 'task',
      id: this.taskId,
      contextId: this.contextId,
      status: structuredClone(this.status),
      artifacts: structuredClone(this.artifacts),
      history: structuredClone(history),
      metadata: { ...this.metadata },
    };
  }

  /** Prepends messages to the task history (the user message of message/send). */
  addHistory(m: A2aMessage): void {
    this.history.unshift(m);
  }

  private agentMessage(id: string, parts: A2aPart[]): A2aMessage {
    return { kind: 'message', messageId: id, role: 'agent', parts, contextId: this.contextId, taskId: this.taskId };
  }

  private update(state: A2aState, timestampMs: number, message?: A2aMessage): A2aStreamEvent {
    this.status = { state, ...(message ? { message } : {}), timestamp: new Date(timestampMs).toISOString() };
    const final = TERMINAL.has(state);
    return { kind: 'status-update', taskId: this.taskId, contextId: this.contextId, status: structuredClone(this.status), final };
  }

  private text(seq: number, delta: string, out: A2aStreamEvent[], last: boolean): void {
    if (!delta && !(last && this.open)) return;
    let append = true;
    if (!this.open) {
      const artifact: A2aArtifact = {
        artifactId: `${this.taskId}-text-${seq}`,
        name: `response-${this.n++}`,
        parts: [{ kind: 'text', text: '' }],
      };
      this.artifacts.push(artifact);
      this.open = { artifact, text: '' };
      append = false;
    }
    this.open.text += delta;
    (this.open.artifact.parts[0] as { text: string }).text = this.open.text;
    out.push({
      kind: 'artifact-update',
      taskId: this.taskId,
      contextId: this.contextId,
      artifact: { artifactId: this.open.artifact.artifactId, name: this.open.artifact.name, parts: [{ kind: 'text', text: delta }] },
      append,
      lastChunk: last,
    });
    if (last) this.open = null;
  }

  private close(seq: number, out: A2aStreamEvent[]): void {
    if (this.open) this.text(seq, '', out, true);
  }

  apply(e: HubEntry): A2aStreamEvent[] {
    if (this.finished) return [];
    const out: A2aStreamEvent[] = [];
    const p = (e.payload ?? {}) as Record<string, unknown>;
    switch (e.kind) {
      case 'text_delta':
        this.text(e.seq, String(p.delta ?? ''), out, false);
        break;
      case 'text_complete': {
        // After the commit the ledger holds only the whole text (deltas pruned): send what is missing.
        const content = String(p.content ?? '');
        const have = this.open?.text ?? '';
        const rest = content.length > have.length && content.startsWith(have) ? content.slice(have.length) : '';
        if (rest || this.open) this.text(e.seq, rest, out, true);
        break;
      }
      case 'tool_call_requested': {
        this.close(e.seq, out);
        const part: A2aPart = { kind: 'data', data: { type: 'tool_call', id: String(p.id), name: String(p.name), args: p.args ?? {} } };
        out.push(this.update('working', e.timestamp_ms, this.agentMessage(`${this.taskId}-${e.seq}`, [part])));
        break;
      }
      case 'tool_execution_completed': {
        const part: A2aPart = {
          kind: 'data',
          data: {
            type: 'tool_result',
            id: String(p.id),
            name: String(p.name ?? ''),
            content: String(p.content ?? ''),
            is_error: p.is_error === true,
          },
        };
        out.push(this.update('working', e.timestamp_ms, this.agentMessage(`${this.taskId}-${e.seq}`, [part])));
        break;
      }
      case 'run_completed': {
        this.close(e.seq, out);
        this.finished = true;
        const text = typeof p.result === 'string' ? p.result : this.artifacts.map((a) => (a.parts[0] as { text: string }).text).join('');
        const msg = this.agentMessage(`${this.taskId}-reply`, [{ kind: 'text', text }]);
        this.history.push(msg);
        out.push(this.update('completed', e.timestamp_ms, msg));
        break;
      }
      case 'run_failed': {
        this.close(e.seq, out);
        this.finished = true;
        const report = (p.error_report ?? {}) as { class?: string; message?: string };
        const cancelled = /cancel/i.test(`${report.class ?? ''} ${report.message ?? ''} ${String(p.terminal_cause_kind ?? '')}`);
        const msg = this.agentMessage(`${this.taskId}-error`, [
          { kind: 'text', text: report.message ?? (cancelled ? 'cancelled' : 'the turn failed') },
        ]);
        out.push(this.update(cancelled ? 'canceled' : 'failed', e.timestamp_ms, msg));
        break;
      }
      default:
        break;
    }
    return out;
  }

  /** Settles a task whose terminal event is not in the feed (a memory ring that dropped it, a restart). */
  settle(rec: { status: string; finished_ms?: number; created_ms: number; reply?: { text: string }; error?: { message: string } }): void {
    if (this.finished || rec.status === 'in_progress') return;
    const at = rec.finished_ms ?? rec.created_ms;
    if (rec.status === 'completed') {
      const text = rec.reply?.text ?? '';
      if (this.artifacts.length === 0 && text) {
        this.artifacts.push({ artifactId: `${this.taskId}-text-0`, name: 'response-0', parts: [{ kind: 'text', text }] });
      }
      this.apply({ seq: Number.MAX_SAFE_INTEGER, kind: 'run_completed', timestamp_ms: at, payload: { result: text } } as HubEntry);
      return;
    }
    this.close(Number.MAX_SAFE_INTEGER, []);
    this.finished = true;
    const msg = this.agentMessage(`${this.taskId}-error`, [{ kind: 'text', text: rec.error?.message ?? rec.status }]);
    this.update(rec.status === 'cancelled' ? 'canceled' : 'failed', at, msg);
  }
}
