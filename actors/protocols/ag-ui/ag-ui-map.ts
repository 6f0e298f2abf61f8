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

export class AgUiMapper {
  private open: { id: string; text: string } | null = null;
  finished = false;

  constructor(
    private readonly threadId: string,
    private readonly runId: string,
  ) {}

  start(): AgUiEvent[] {
    return [{ type: 'RUN_STARTED', threadId: this.threadId, runId: this.runId }];
  }

  private close(out: AgUiEvent[]): void {
    if (!this.open) return;
    out.push({ type: 'TEXT_MESSAGE_END', messageId: this.open.id });
    this.open = null;
  }

  private text(seq: number, delta: string, out: AgUiEvent[]): void {
    if (!delta) return;
    if (!this.open) {
      this.open = { id: `msg-${this.runId}-${seq}`, text: '' };
      out.push({ type: 'TEXT_MESSAGE_START', messageId: this.open.id, role: 'assistant' });
    }
    this.open.text += delta;
    out.push({ type: 'TEXT_MESSAGE_CONTENT', messageId: this.open.id, delta });
  }

  apply(e: HubEntry): AgUiEvent[] {
    const out: AgUiEvent[] = [];
    const p = e.payload as Record<string, unknown>;
    switch (e.kind) {
      case 'text_delta':
        this.text(e.seq, String(p.delta ?? ''), out);
        break;
      case 'text_complete': {
        // After the commit the ledger holds only the whole text (deltas pruned): send what is missing.
        const content = String(p.content ?? '');
        const have = this.open?.text ?? '';
        if (content.length > have.length && content.startsWith(have)) this.text(e.seq, content.slice(have.length), out);
        this.close(out);
        break;
      }
      case 'tool_call_requested': {
        this.close(out);
        const id = String(p.id);
        out.push({ type: 'TOOL_CALL_START', toolCallId: id, toolCallName: String(p.name) });
        out.push({ type: 'TOOL_CALL_ARGS', toolCallId: id, delta: JSON.stringify(p.args ?? {}) });
        out.push({ type: 'TOOL_CALL_END', toolCallId: id });
        break;
      }
      case 'tool_execution_completed':
        out.push({
          type: 'TOOL_CALL_RESULT',
          messageId: `tool-${this.runId}-${e.seq}`,
          toolCallId: String(p.id),
          content: String(p.content ?? ''),
          role: 'tool',
        });
        break;
      case 'run_completed':
        this.close(out);
        this.finished = true;
        out.push({ type: 'RUN_FINISHED', threadId: this.threadId, runId: this.runId, result: p.result, outcome: { type: 'success' } });
        break;
      case 'run_failed': {
        this.close(out);
        this.finished = true;
        const report = (p.error_report ?? {}) as { class?: string; message?: string };
        const cancelled = /cancel|interrupt/i.test(`${report.class ?? ''} ${report.message ?? ''} ${String(p.terminal_cause_kind ?? '')}`);
        out.push(
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
