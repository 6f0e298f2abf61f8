// actors/protocols/openai/responses-map.ts: Warren session events → OpenAI Responses objects and stream
// events. One mapper serves the stream (each entry yields its stream events) and the stored response
// (GET /v1/responses/{id} folds the turn's ledger entries the same way), so both tell the same story.
//   text_delta / text_complete        → a `message` output item (output_text part, output_text.delta/done)
//   tool_call_requested               → an `mcp_call` output item (server_label "warren"), in progress
//   tool_execution_completed          → that item done, with `output` (or `error` when is_error)
//   run_completed / run_failed        → response.completed / response.failed (interrupt: cancelled)
// Warren runs its own tools server side, so they are not `function_call` items (those ask the client to
// run the function): `mcp_call` is the Responses item for a tool the server called, with its output.
import type { HubEntry } from '../../event-hub.ts';
import type { ProtocolTurnRecord } from '../protocol-turns.ts';

export type ResponseStatus = 'queued' | 'in_progress' | 'completed' | 'failed' | 'cancelled';

interface MessageItem {
  type: 'message';
  id: string;
  role: 'assistant';
  status: 'in_progress' | 'completed';
  content: Array<{ type: 'output_text'; text: string; annotations: []; logprobs: [] }>;
}
interface McpCallItem {
  type: 'mcp_call';
  id: string;
  server_label: 'warren';
  name: string;
  arguments: string;
  output: string | null;
  error: string | null;
  status: 'in_progress' | 'completed' | 'failed';
}
type OutputItem = MessageItem | McpCallItem;

export interface StreamEvent {
  type: string;
  [k: string]: unknown;
}

interface Usage {
  input_tokens?: number;
  output_tokens?: number;
  total_tokens?: number;
  cache_read_tokens?: number;
}

function usageOf(u: Usage | undefined) {
  const input = u?.input_tokens ?? 0;
  const output = u?.output_tokens ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: u?.cache_read_tokens ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: u?.total_tokens ?? input + output,
  };
}

/** Builds one response from the turn's events, emitting the stream events each entry causes. */
export class ResponseBuilder {
  readonly output: OutputItem[] = [];
  status: ResponseStatus = 'in_progress';
  error: { code: string; message: string } | null = null;
  usage: ReturnType<typeof usageOf> | null = null;
  private open: MessageItem | null = null;
  private readonly calls = new Map<string, McpCallItem>();
  private seqNo = 0;

  constructor(
    readonly record: Pick<ProtocolTurnRecord, 'id' | 'session_id' | 'created_ms' | 'meta'>,
    private readonly background = false,
  ) {}

  private ev(type: string, fields: Record<string, unknown>): StreamEvent {
    return { type, sequence_number: this.seqNo++, ...fields };
  }

  /** The Response object as it stands. */
  response(): Record<string, unknown> {
    const meta = this.record.meta ?? {};
    return {
      id: this.record.id,
      object: 'response',
      created_at: Math.floor(this.record.created_ms / 1000),
      status: this.status,
      background: this.background || meta.background === true,
      error: this.error,
      incomplete_details: null,
      instructions: (meta.instructions as string | undefined) ?? null,
      max_output_tokens: (meta.max_output_tokens as number | undefined) ?? null,
      model: (meta.model as string | undefined) ?? 'warren',
      output: this.output.map((o) => structuredClone(o)),
      parallel_tool_calls: true,
      previous_response_id: (meta.previous_response_id as string | undefined) ?? null,
      temperature: null,
      tool_choice: 'auto',
      tools: [],
      top_p: null,
      truncation: 'disabled',
      metadata: (meta.metadata as Record<string, string> | undefined) ?? {},
      usage: this.usage,
      // Warren extension: the session this response's turn ran in (every response of a chain shares it).
      session_id: this.record.session_id,
    };
  }

  /** The opening events of a stream. */
  start(): StreamEvent[] {
    return [this.ev('response.created', { response: this.response() }), this.ev('response.in_progress', { response: this.response() })];
  }

  private closeMessage(out: StreamEvent[]): void {
    const m = this.open;
    if (!m) return;
    this.open = null;
    const index = this.output.indexOf(m);
    const part = m.content[0];
    m.status = 'completed';
    out.push(this.ev('response.output_text.done', { item_id: m.id, output_index: index, content_index: 0, text: part.text, logprobs: [] }));
    out.push(this.ev('response.content_part.done', { item_id: m.id, output_index: index, content_index: 0, part: { ...part } }));
    out.push(this.ev('response.output_item.done', { output_index: index, item: structuredClone(m) }));
  }

  /** Folds one session event; returns the stream events it causes. */
  apply(e: HubEntry): StreamEvent[] {
    const out: StreamEvent[] = [];
    const p = e.payload as Record<string, unknown>;
    switch (e.kind) {
      case 'text_delta': {
        let m = this.open;
        if (!m) {
          m = { type: 'message', id: `msg_${this.record.id.slice(5)}_${e.seq}`, role: 'assistant', status: 'in_progress', content: [] };
          this.open = m;
          this.output.push(m);
          const index = this.output.length - 1;
          out.push(this.ev('response.output_item.added', { output_index: index, item: structuredClone(m) }));
          m.content.push({ type: 'output_text', text: '', annotations: [], logprobs: [] });
          out.push(
            this.ev('response.content_part.added', { item_id: m.id, output_index: index, content_index: 0, part: { ...m.content[0] } }),
          );
        }
        const delta = String(p.delta ?? '');
        m.content[0].text += delta;
        out.push(
          this.ev('response.output_text.delta', {
            item_id: m.id,
            output_index: this.output.indexOf(m),
            content_index: 0,
            delta,
            logprobs: [],
          }),
        );
        break;
      }
      case 'text_complete': {
        // A ledger tail (another node) may carry only the whole text: it is the item's text either way.
        const content = String(p.content ?? '');
        if (!this.open && content) {
          out.push(...this.apply({ ...e, kind: 'text_delta', payload: { delta: content } }));
        } else if (this.open && content.length > this.open.content[0].text.length && content.startsWith(this.open.content[0].text)) {
          out.push(...this.apply({ ...e, kind: 'text_delta', payload: { delta: content.slice(this.open.content[0].text.length) } }));
        }
        this.closeMessage(out);
        break;
      }
      case 'tool_call_requested': {
        this.closeMessage(out);
        const item: McpCallItem = {
          type: 'mcp_call',
          id: `mcp_${String(p.id)}`,
          server_label: 'warren',
          name: String(p.name),
          arguments: JSON.stringify(p.args ?? {}),
          output: null,
          error: null,
          status: 'in_progress',
        };
        this.calls.set(String(p.id), item);
        this.output.push(item);
        const index = this.output.length - 1;
        out.push(this.ev('response.output_item.added', { output_index: index, item: structuredClone(item) }));
        out.push(this.ev('response.mcp_call_arguments.done', { item_id: item.id, output_index: index, arguments: item.arguments }));
        out.push(this.ev('response.mcp_call.in_progress', { item_id: item.id, output_index: index }));
        break;
      }
      case 'tool_execution_completed': {
        const item = this.calls.get(String(p.id));
        if (!item) break;
        const index = this.output.indexOf(item);
        if (p.is_error === true) {
          item.status = 'failed';
          item.error = String(p.content ?? '');
          out.push(this.ev('response.mcp_call.failed', { item_id: item.id, output_index: index }));
        } else {
          item.status = 'completed';
          item.output = String(p.content ?? '');
          out.push(this.ev('response.mcp_call.completed', { item_id: item.id, output_index: index }));
        }
        out.push(this.ev('response.output_item.done', { output_index: index, item: structuredClone(item) }));
        break;
      }
      case 'run_completed': {
        this.closeMessage(out);
        this.status = 'completed';
        this.usage = usageOf(p.usage as Usage | undefined);
        out.push(this.ev('response.completed', { response: this.response() }));
        break;
      }
      case 'run_failed': {
        this.closeMessage(out);
        const report = (p.error_report ?? {}) as { class?: string; message?: string };
        const cancelled = /cancel|interrupt/i.test(`${report.class ?? ''} ${report.message ?? ''} ${String(p.terminal_cause_kind ?? '')}`);
        this.status = cancelled ? 'cancelled' : 'failed';
        this.error = cancelled ? null : { code: 'server_error', message: report.message ?? 'the turn failed' };
        out.push(this.ev(cancelled ? 'response.cancelled' : 'response.failed', { response: this.response() }));
        break;
      }
      default:
        break;
    }
    return out;
  }

  /** True once the turn's terminal event was folded. */
  get finished(): boolean {
    return this.status !== 'in_progress' && this.status !== 'queued';
  }

  /** Settles the response from the durable record when the events end without a terminal one. */
  settle(rec: ProtocolTurnRecord): void {
    if (this.finished || rec.status === 'in_progress') return;
    this.status = rec.status;
    if (rec.status === 'completed') this.usage = usageOf(rec.reply?.usage as Usage | undefined);
    if (rec.status === 'failed') this.error = { code: 'server_error', message: rec.error?.message ?? 'the turn failed' };
  }
}
