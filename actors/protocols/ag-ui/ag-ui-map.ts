// actors/protocols/ag-ui/ag-ui-map.ts: Warren session events → AG-UI events. A run is a turn, its thread
// the session.
//   run_started                → RUN_STARTED (sent when the stream opens)
//   text_delta / text_complete → TEXT_MESSAGE_START / TEXT_MESSAGE_CONTENT / TEXT_MESSAGE_END
//   tool_call_requested        → TOOL_CALL_START, TOOL_CALL_ARGS (the whole JSON), TOOL_CALL_END
//   tool_execution_completed   → TOOL_CALL_RESULT (Warren ran the tool server side)
//   run_completed              → RUN_FINISHED (outcome success, result: the turn's text)
//   run_failed                 → RUN_ERROR, or RUN_FINISHED outcome cancelled for an interrupt
import type { HubEntry } from '../../event-hub.ts';

export interface AgUiEvent {
  type: string;
  [k: string]: unknown;
}

/**
 * Where a frame ends in the run, independent of how the text was chunked: `item` counts every frame
 * that is not text content (RUN_STARTED is 1), `chars` the open message's text sent so far. A live run
 * (one frame per delta) and a replay after the commit (deltas pruned: one frame for the whole text)
 * give the same positions, so a Last-Event-ID means the same place in both.
 */
export interface Position {
  item: number;
  chars: number;
}

export interface Placed extends Position {
  ev: AgUiEvent;
}

export function formatPosition(p: Position): string {
  return `${p.item}:${p.chars}`;
}

/** True when position a is after position b. */
export function isAfter(a: Position, b: Position): boolean {
  return a.item > b.item || (a.item === b.item && a.chars > b.chars);
}

export class AgUiMapper {
  private open: { id: string; text: string } | null = null;
  private item = 0;
  private chars = 0;
  finished = false;

  constructor(
    private readonly threadId: string,
    private readonly runId: string,
  ) {}

  start(): Placed[] {
    const out: Placed[] = [];
    this.push(out, { type: 'RUN_STARTED', threadId: this.threadId, runId: this.runId });
    return out;
  }

  private push(out: Placed[], ev: AgUiEvent): void {
    if (ev.type === 'TEXT_MESSAGE_CONTENT') this.chars += String(ev.delta).length;
    else {
      this.item += 1;
      this.chars = 0;
    }
    out.push({ ev, item: this.item, chars: this.chars });
  }

  private close(out: Placed[]): void {
    if (!this.open) return;
    this.push(out, { type: 'TEXT_MESSAGE_END', messageId: this.open.id });
    this.open = null;
  }

  private text(delta: string, out: Placed[]): void {
    if (!delta) return;
    if (!this.open) {
      // Named by its place in the run, so a replay after the commit names it the same.
      this.open = { id: `msg-${this.runId}-${this.item + 1}`, text: '' };
      this.push(out, { type: 'TEXT_MESSAGE_START', messageId: this.open.id, role: 'assistant' });
    }
    this.open.text += delta;
    this.push(out, { type: 'TEXT_MESSAGE_CONTENT', messageId: this.open.id, delta });
  }

  apply(e: HubEntry): Placed[] {
    const out: Placed[] = [];
    const p = e.payload as Record<string, unknown>;
    switch (e.kind) {
      case 'text_delta':
        this.text(String(p.delta ?? ''), out);
        break;
      case 'text_complete': {
        // After the commit the ledger holds only the whole text (deltas pruned): send what is missing.
        const content = String(p.content ?? '');
        const have = this.open?.text ?? '';
        if (content.length > have.length && content.startsWith(have)) this.text(content.slice(have.length), out);
        this.close(out);
        break;
      }
      case 'tool_call_requested': {
        this.close(out);
        const id = String(p.id);
        this.push(out, { type: 'TOOL_CALL_START', toolCallId: id, toolCallName: String(p.name) });
        this.push(out, { type: 'TOOL_CALL_ARGS', toolCallId: id, delta: JSON.stringify(p.args ?? {}) });
        this.push(out, { type: 'TOOL_CALL_END', toolCallId: id });
        break;
      }
      case 'tool_execution_completed':
        this.push(out, {
          type: 'TOOL_CALL_RESULT',
          messageId: `tool-${this.runId}-${this.item + 1}`,
          toolCallId: String(p.id),
          content: String(p.content ?? ''),
          role: 'tool',
        });
        break;
      case 'run_completed':
        this.close(out);
        this.finished = true;
        this.push(out, {
          type: 'RUN_FINISHED',
          threadId: this.threadId,
          runId: this.runId,
          result: p.result,
          outcome: { type: 'success' },
        });
        break;
      case 'run_failed': {
        this.close(out);
        this.finished = true;
        const report = (p.error_report ?? {}) as { class?: string; message?: string };
        const cancelled = /cancel|interrupt/i.test(`${report.class ?? ''} ${report.message ?? ''} ${String(p.terminal_cause_kind ?? '')}`);
        this.push(
          out,
          cancelled
            ? { type: 'RUN_FINISHED', threadId: this.threadId, runId: this.runId, outcome: { type: 'cancelled' } }
            : { type: 'RUN_ERROR', message: report.message ?? 'the run failed', code: report.class ?? 'AGENT_ERROR' },
        );
        break;
      }
      default:
        break;
    }
    return out;
  }
}
