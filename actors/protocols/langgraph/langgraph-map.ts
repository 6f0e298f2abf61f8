// actors/protocols/langgraph/langgraph-map.ts: Warren sessions in the LangGraph Agent Protocol's terms.
// A thread is a session (same id), a run is a turn, the thread's state is {messages} rebuilt from the
// session's history (LangChain message dicts), and a checkpoint is the end of a turn. Stream parts are
// mapped from the turn's events per requested stream_mode:
//   values     → the thread state at the run's start and after each model turn / tool result
//   updates    → {agent: {messages: [ai]}} per model turn, {tools: {messages: [tool...]}} per tool result
//   messages   → messages/metadata, messages/partial (text so far) and messages/complete per AI message
//   messages-tuple → messages: [AIMessageChunk delta, {langgraph_node}]
//   events     → on_chat_model_stream / on_tool_start / on_tool_end / on_chain_end
import type { HubEntry } from '../../event-hub.ts';
import type { Message } from '../../../contracts/transcript.ts';

export interface LcMessage {
  type: 'human' | 'ai' | 'tool' | 'system';
  id: string;
  content: string;
  tool_calls?: Array<{ id: string; name: string; args: unknown; type: 'tool_call' }>;
  tool_call_id?: string;
  name?: string;
  status?: 'success' | 'error';
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b: { text?: string }) => b.text ?? '').join('');
  return '';
}

/** The session's history rows as LangChain messages (ids stable: `<session>:<row index>`). */
export function lcMessages(sessionId: string, rows: Message[], offset = 0): LcMessage[] {
  const out: LcMessage[] = [];
  rows.forEach((m, i) => {
    const id = `${sessionId}:${offset + i}`;
    switch (m.role) {
      case 'system':
        out.push({ type: 'system', id, content: m.content });
        break;
      case 'user':
        out.push({ type: 'human', id, content: contentText(m.content) });
        break;
      case 'block_assistant': {
        const text = m.blocks.flatMap((b) => (b.block_type === 'text' ? [b.data.text] : [])).join('');
        const calls = m.blocks.flatMap((b) =>
          b.block_type === 'tool_use' ? [{ id: b.data.id, name: b.data.name, args: b.data.args, type: 'tool_call' as const }] : [],
        );
        out.push({ type: 'ai', id, content: text, ...(calls.length ? { tool_calls: calls } : {}) });
        break;
      }
      case 'tool_results':
        m.results.forEach((r, k) =>
          out.push({
            type: 'tool',
            id: `${id}:${k}`,
            content: r.content,
            tool_call_id: r.tool_use_id,
            status: r.is_error ? 'error' : 'success',
          }),
        );
        break;
      default:
        break;
    }
  });
  return out;
}

export type StreamMode = 'values' | 'updates' | 'messages' | 'messages-tuple' | 'events' | 'custom' | 'debug';
export const STREAM_MODES: readonly StreamMode[] = ['values', 'updates', 'messages', 'messages-tuple', 'events', 'custom', 'debug'];

export interface StreamPart {
  event: string;
  data: unknown;
}

/** Folds one run's events into LangGraph stream parts for the requested modes. */
export class RunStreamMapper {
  private readonly messages: LcMessage[];
  private ai: LcMessage | null = null;
  private pendingTools: LcMessage[] = [];
  finished: 'success' | 'error' | 'interrupted' | null = null;
  error: { error: string; message: string } | null = null;

  constructor(
    private readonly runId: string,
    private readonly modes: ReadonlySet<StreamMode>,
    prior: LcMessage[],
  ) {
    this.messages = [...prior];
  }

  get state(): { messages: LcMessage[] } {
    return { messages: this.messages.map((m) => ({ ...m })) };
  }

  private meta(node: string) {
    return { run_id: this.runId, langgraph_node: node, langgraph_step: 1 };
  }

  private openAi(seq: number): LcMessage {
    if (!this.ai) {
      this.ai = { type: 'ai', id: `run-${this.runId}-${seq}`, content: '' };
    }
    return this.ai;
  }

  private closeAi(out: StreamPart[]): void {
    const m = this.ai;
    if (!m) return;
    this.ai = null;
    this.messages.push(m);
    if (this.modes.has('messages')) out.push({ event: 'messages/complete', data: [{ ...m }] });
    if (this.modes.has('updates')) out.push({ event: 'updates', data: { agent: { messages: [{ ...m }] } } });
    if (this.modes.has('values')) out.push({ event: 'values', data: this.state });
  }

  /** The parts of the run's input (its human message), as they open the stream. */
  begin(input: LcMessage): StreamPart[] {
    this.messages.push(input);
    return this.modes.has('values') ? [{ event: 'values', data: this.state }] : [];
  }

  apply(e: HubEntry): StreamPart[] {
    const out: StreamPart[] = [];
    const p = e.payload as Record<string, unknown>;
    switch (e.kind) {
      case 'text_delta': {
        const fresh = !this.ai;
        const m = this.openAi(e.seq);
        const delta = String(p.delta ?? '');
        m.content += delta;
        if (this.modes.has('messages')) {
          if (fresh) out.push({ event: 'messages/metadata', data: { [m.id]: { metadata: this.meta('agent') } } });
          out.push({ event: 'messages/partial', data: [{ ...m }] });
        }
        if (this.modes.has('messages-tuple')) {
          out.push({ event: 'messages', data: [{ type: 'AIMessageChunk', id: m.id, content: delta }, this.meta('agent')] });
        }
        if (this.modes.has('events')) {
          out.push({
            event: 'events',
            data: {
              event: 'on_chat_model_stream',
              name: 'warren',
              run_id: this.runId,
              data: { chunk: { type: 'AIMessageChunk', id: m.id, content: delta } },
              metadata: this.meta('agent'),
            },
          });
        }
        break;
      }
      case 'text_complete': {
        // A replay after the commit (deltas pruned) or a ledger tail may carry only the whole text: the
        // part not yet streamed goes out as one delta.
        const content = String(p.content ?? '');
        const have = this.ai?.content ?? '';
        if (content.length > have.length && content.startsWith(have)) {
          out.push(...this.apply({ ...e, kind: 'text_delta', payload: { delta: content.slice(have.length) } }));
        }
        break;
      }
      case 'tool_call_requested': {
        const m = this.openAi(e.seq);
        (m.tool_calls ??= []).push({ id: String(p.id), name: String(p.name), args: p.args ?? {}, type: 'tool_call' });
        if (this.modes.has('events')) {
          out.push({
            event: 'events',
            data: {
              event: 'on_tool_start',
              name: String(p.name),
              run_id: this.runId,
              data: { input: p.args ?? {} },
              metadata: this.meta('tools'),
            },
          });
        }
        break;
      }
      case 'tool_execution_started':
        this.closeAi(out);
        break;
      case 'tool_execution_completed': {
        this.closeAi(out);
        const t: LcMessage = {
          type: 'tool',
          id: `run-${this.runId}-${e.seq}`,
          name: String(p.name),
          content: String(p.content ?? ''),
          tool_call_id: String(p.id),
          status: p.is_error === true ? 'error' : 'success',
        };
        this.messages.push(t);
        this.pendingTools.push(t);
        if (this.modes.has('events')) {
          out.push({
            event: 'events',
            data: { event: 'on_tool_end', name: t.name, run_id: this.runId, data: { output: t.content }, metadata: this.meta('tools') },
          });
        }
        if (this.modes.has('messages')) out.push({ event: 'messages/complete', data: [{ ...t }] });
        break;
      }
      case 'turn_started': {
        this.flushTools(out);
        break;
      }
      case 'run_completed': {
        this.closeAi(out);
        this.flushTools(out);
        this.finished = 'success';
        if (this.modes.has('events')) {
          out.push({ event: 'events', data: { event: 'on_chain_end', name: 'agent', run_id: this.runId, data: { output: this.state } } });
        }
        break;
      }
      case 'run_failed': {
        this.closeAi(out);
        const report = (p.error_report ?? {}) as { class?: string; message?: string };
        const cancelled = /cancel|interrupt/i.test(`${report.class ?? ''} ${report.message ?? ''} ${String(p.terminal_cause_kind ?? '')}`);
        this.finished = cancelled ? 'interrupted' : 'error';
        if (!cancelled) {
          this.error = { error: report.class ?? 'AgentError', message: report.message ?? 'the run failed' };
          out.push({ event: 'error', data: this.error });
        }
        break;
      }
      default:
        break;
    }
    return out;
  }

  private flushTools(out: StreamPart[]): void {
    if (!this.pendingTools.length) return;
    const tools = this.pendingTools.splice(0);
    if (this.modes.has('updates')) out.push({ event: 'updates', data: { tools: { messages: tools.map((t) => ({ ...t })) } } });
    if (this.modes.has('values')) out.push({ event: 'values', data: this.state });
  }
}
