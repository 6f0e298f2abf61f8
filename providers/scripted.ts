// providers/scripted.ts: a real Provider that plays a script of replies (tests, bench, demos, and
// `[providers.scripted]` in config). It streams text as text_delta events, honours the abort signal,
// and answers `echo: <last user text>` once the script runs out.
import { setImmediate as yieldTurn, setTimeout as delay } from 'node:timers/promises';
import { Type, type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { ServiceError, type ErrorCode } from '../contracts/errors.ts';
import type { AssistantBlock, StopReason, ProviderUsage } from '../contracts/transcript.ts';
import type { Provider, ProviderRequest, ProviderResponse, StreamEvent } from './provider.ts';
import type { ProviderName } from '../contracts/session.ts';
import { cancelledFailure } from './errors.ts';
import { plainText } from './transcript-map.ts';

/** One scripted model reply. */
export interface ScriptedReply {
  /** Whole reply text (streamed as one delta unless `chunks` is given). */
  text?: string;
  /** Text deltas, streamed in order; their concatenation is the reply text. */
  chunks?: string[];
  /** Reasoning text, streamed as one reasoning_delta before the text. */
  reasoning?: string;
  tool_calls?: Array<{ name: string; args: unknown; id?: string }>;
  usage?: ProviderUsage;
  /** The model the reply says answered (ProviderResponse.model); default: none said. */
  model?: string;
  /** Default: tool_use when there are tool calls, else end_turn. */
  stop_reason?: StopReason;
  /** Real wait before the reply starts (bench and demos; tests use `waitFor`). */
  delay_ms?: number;
  /** Reject with this ServiceError instead of replying. */
  error?: { code: ErrorCode; message: string; details?: unknown };
  /** A gate: the reply starts only once this settles (tests order events with it). */
  waitFor?: Promise<void>;
  /** A gate inside the stream: after `chunks` deltas the reply waits for `until` (a call held open mid-stream). */
  holdAfter?: { chunks: number; until: Promise<void> };
}

export type Script = ScriptedReply[] | ((req: ProviderRequest, callIndex: number) => ScriptedReply | Promise<ScriptedReply>);

/** A request as the scripted provider saw it (the signal left out). */
type RecordedRequest = Omit<ProviderRequest, 'signal'>;

export interface ScriptedProvider extends Provider {
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
}

export interface ScriptedOptions {
  /** Name to report; default 'scripted' (the registry may install it under any provider name). */
  name?: ProviderName;
}

/** Creates a scripted provider. Replies play in order; afterwards every call echoes. */
export function createScriptedProvider(script: Script, opts: ScriptedOptions = {}): ScriptedProvider {
  const requests: RecordedRequest[] = [];
  const name = opts.name ?? 'scripted';
  let next = 0;
  return {
    name,
    requests,
    async call(req, onEvent) {
      const { signal, ...recorded } = req;
      requests.push(structuredClone(recorded));
      const index = next++;
      const reply = typeof script === 'function' ? await script(req, index) : (script[index] ?? echoReply(req));
      return play(name, reply, req, onEvent);
    },
  };
}

/** The default reply once a script is exhausted: `echo: <last user text>`. */
export function echoReply(req: ProviderRequest): ScriptedReply {
  const lastUser = [...req.messages].reverse().find((m) => m.role === 'user');
  return { text: `echo: ${lastUser && lastUser.role === 'user' ? plainText(lastUser.content) : ''}` };
}

async function play(
  name: string,
  reply: ScriptedReply,
  req: ProviderRequest,
  onEvent: (e: StreamEvent) => void,
): Promise<ProviderResponse> {
  const { signal, model } = req;
  const guard = async <T>(p: Promise<T>): Promise<T> => {
    if (signal.aborted) throw cancelledFailure(name, model, signal.reason);
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(cancelledFailure(name, model, signal.reason));
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([p, aborted]);
    } catch (err) {
      if (signal.aborted) throw cancelledFailure(name, model, signal.reason);
      throw err;
    } finally {
      signal.removeEventListener('abort', onAbort!);
    }
  };
  if (reply.waitFor) await guard(reply.waitFor);
  if (reply.delay_ms && reply.delay_ms > 0) await guard(delay(reply.delay_ms, undefined, { signal }));
  if (signal.aborted) throw cancelledFailure(name, model, signal.reason);
  if (reply.error) {
    throw new ServiceError(
      reply.error.code,
      reply.error.message,
      reply.error.details ?? { error: { kind: 'llm_failure', provider: name, model, terminal: true, retryable: false } },
    );
  }
  const blocks: AssistantBlock[] = [];
  if (reply.reasoning) {
    onEvent({ type: 'reasoning_delta', delta: reply.reasoning });
    blocks.push({ block_type: 'reasoning', data: { text: reply.reasoning } });
  }
  const chunks = reply.chunks ?? (reply.text ? [reply.text] : []);
  for (let i = 0; i < chunks.length; i++) {
    const chunk = chunks[i];
    if (reply.holdAfter && i === reply.holdAfter.chunks) await guard(reply.holdAfter.until);
    // Yield a macrotask between deltas so an abort (or a reader) can interleave, as with a real stream.
    await guard(yieldTurn());
    onEvent({ type: 'text_delta', delta: chunk });
  }
  const text = chunks.join('');
  if (text !== '') blocks.push({ block_type: 'text', data: { text } });
  const calls = reply.tool_calls ?? [];
  calls.forEach((c, i) =>
    blocks.push({ block_type: 'tool_use', data: { id: c.id ?? `scripted_call_${i + 1}`, name: c.name, args: c.args } }),
  );
  return {
    blocks,
    stop_reason: reply.stop_reason ?? (calls.length > 0 ? 'tool_use' : 'end_turn'),
    usage: reply.usage ?? { input_tokens: 0, output_tokens: 0 },
    ...(reply.model ? { model: reply.model } : {}),
  };
}

const ReplyConfig = Type.Object({
  text: Type.Optional(Type.String()),
  chunks: Type.Optional(Type.Array(Type.String())),
  reasoning: Type.Optional(Type.String()),
  tool_calls: Type.Optional(Type.Array(Type.Object({ name: Type.String(), args: Type.Unknown(), id: Type.Optional(Type.String()) }))),
  stop_reason: Type.Optional(
    Type.Union(['end_turn', 'tool_use', 'max_tokens', 'stop_sequence', 'content_filter'].map((s) => Type.Literal(s))),
  ),
  delay_ms: Type.Optional(Type.Integer({ minimum: 0 })),
  usage: Type.Optional(Type.Object({ input_tokens: Type.Integer({ minimum: 0 }), output_tokens: Type.Integer({ minimum: 0 }) })),
});

/** `[providers.scripted]`: `mode = "echo"`, or `replies = [{ text = "hi" }, …]` (then echo). */
const ScriptedConfig = Type.Object({
  mode: Type.Optional(Type.Union([Type.Literal('echo'), Type.Literal('script')])),
  replies: Type.Optional(Type.Array(ReplyConfig)),
});
type ScriptedConfig = Static<typeof ScriptedConfig>;

const checkConfig = Compile(ScriptedConfig);

/** Builds a scripted provider from its config section; an invalid section is BAD_REQUEST. */
export function scriptedFromConfig(cfg: unknown, opts: ScriptedOptions = {}): ScriptedProvider {
  const section = cfg ?? {};
  if (!checkConfig.Check(section)) {
    const first = [...checkConfig.Errors(section)][0];
    const where = first ? `${first.instancePath || '/'} ${first.message}` : 'invalid';
    throw new ServiceError('BAD_REQUEST', `invalid [providers.scripted] config: ${where}`);
  }
  const replies = section.mode === 'echo' ? [] : ((section.replies ?? []) as ScriptedReply[]);
  return createScriptedProvider(replies, opts);
}
