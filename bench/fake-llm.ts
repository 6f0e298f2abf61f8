// bench/fake-llm.ts: a loopback fake LLM vendor for the benchmarks. Speaks the OpenAI Chat Completions
// (POST …/chat/completions) and Anthropic Messages (POST …/messages) wire formats, streaming (SSE) and
// not, with knobs for time to first token, tokens per reply, per-token delay and one scripted tool call.
// Warren reaches it through its normal provider configuration (base URL); bench/run.ts owns it.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the fake answers. Every field can be changed between phases with `configure`. */
export interface FakeLlmKnobs {
  /** Delay before the first token (ms); headers go out at once, as real vendors do. Default 0. */
  ttftMs: number;
  /** Text tokens per answer. Default 8. */
  tokens: number;
  /** Gap between tokens (ms). 0 writes the whole reply in one chunk (cheapest). Default 0. */
  tokenDelayMs: number;
  /** Text of each token (ignored when stampTokens). Default ' tok'. */
  tokenText: string;
  /**
   * When set, a request whose last message is not a tool result is answered with this one tool call
   * (no text); once the tool result comes back the normal text answer follows. Default null.
   */
  toolCall: { name: string; args: Record<string, unknown> } | null;
  /**
   * Each token's text becomes ` t<ns>` where <ns> is process.hrtime.bigint() when the token is written,
   * so an SSE client can measure token-to-client latency (CLOCK_MONOTONIC, comparable across processes).
   */
  stampTokens: boolean;
  /**
   * Paced streams (ttftMs or tokenDelayMs set) send their headers and first frame, then wait for
   * `release()` before their schedule starts (time to first token counted from the release): the
   * inflight scenario holds every turn open until all N are in flight. Default false.
   */
  hold: boolean;
  /**
   * The whole answer to a structured-output extraction request (one carrying a JSON schema in
   * `response_format` or `output_config`), sent as one token. Default '{"ok":true}'.
   */
  jsonText: string;
}

export const DEFAULT_KNOBS: FakeLlmKnobs = {
  ttftMs: 0,
  tokens: 8,
  tokenDelayMs: 0,
  tokenText: ' tok',
  toolCall: null,
  stampTokens: false,
  hold: false,
  jsonText: '{"ok":true}',
};

export interface FakeLlmStats {
  requests: number;
  streamed: number;
  toolCalls: number;
  errors: number;
  /** Request body characters received (the provider request size; bodies are ASCII JSON here). */
  bytesIn: number;
  /** The last request body received (to copy Warren's request shape). */
  lastBody: string;
  /** Paced streams open now, and the most open at once since the last `configure`. */
  open: number;
  peakOpen: number;
  /** Paced streams waiting for `release()` (knob `hold`). */
  held: number;
}

export interface FakeLlm {
  /** `http://127.0.0.1:<port>` (no version segment; Warren appends `/v1/...`). */
  readonly url: string;
  readonly knobs: Readonly<FakeLlmKnobs>;
  readonly stats: FakeLlmStats;
  configure(knobs: Partial<FakeLlmKnobs>): void;
  /** Starts every held paced stream's schedule (knob `hold`). */
  release(): void;
  close(): Promise<void>;
}

/** Paced streams in progress and those held for `release()`. */
interface Pacing {
  stats: FakeLlmStats;
  held: Array<() => void>;
}

type Wire = 'chat' | 'anthropic';
type Json = Record<string, unknown>;

/** Per-request facts the reply depends on. */
interface Ask {
  wire: Wire;
  stream: boolean;
  model: string;
  /** The last message is a tool result: answer with text. */
  afterTool: boolean;
  promptTokens: number;
  /** The request asks for JSON matching a schema (an extraction call): answered with `jsonText`. */
  json: boolean;
}

/** Starts the fake on 127.0.0.1 (port 0 = any free port). */
export async function startFakeLlm(knobs: Partial<FakeLlmKnobs> = {}, port = 0, host = '127.0.0.1'): Promise<FakeLlm> {
  let k: FakeLlmKnobs = { ...DEFAULT_KNOBS, ...knobs };
  // Pre-serialized bodies for the common case (no delays, no stamps), keyed by wire/stream/model/kind.
  let cache = new Map<string, Buffer>();
  const stats: FakeLlmStats = {
    requests: 0,
    streamed: 0,
    toolCalls: 0,
    errors: 0,
    bytesIn: 0,
    lastBody: '',
    open: 0,
    peakOpen: 0,
    held: 0,
  };
  const pacing: Pacing = { stats, held: [] };
  let callSeq = 0;

  const server: Server = createServer((req, res) => {
    const wire: Wire | null = req.url?.endsWith('/chat/completions') ? 'chat' : req.url?.endsWith('/messages') ? 'anthropic' : null;
    if (req.method !== 'POST' || wire === null) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
      return;
    }
    readBody(req).then(
      (raw) => {
        let ask: Ask;
        try {
          ask = parseAsk(wire, raw);
        } catch {
          stats.errors++;
          res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"bad request body"}}');
          return;
        }
        stats.requests++;
        stats.bytesIn += raw.length;
        stats.lastBody = raw;
        if (ask.stream) stats.streamed++;
        const tool = k.toolCall && !ask.afterTool ? k.toolCall : null;
        if (tool) stats.toolCalls++;
        reply(res, ask, tool, k, ++callSeq, cache, pacing);
      },
      () => {
        stats.errors++;
        res.destroy();
      },
    );
  });
  server.keepAliveTimeout = 65_000; // longer than undici's keep-alive, so the server never closes first
  server.headersTimeout = 70_000;
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const { port: bound } = server.address() as AddressInfo;

  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    get knobs() {
      return k;
    },
    stats,
    configure(next) {
      k = { ...k, ...next };
      cache = new Map();
      stats.peakOpen = stats.open;
    },
    release() {
      const held = pacing.held;
      pacing.held = [];
      stats.held = 0;
      for (const start of held) start();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(parts.length === 1 ? parts[0].toString('utf8') : Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

function parseAsk(wire: Wire, raw: string): Ask {
  const body = JSON.parse(raw) as Json;
  const messages = Array.isArray(body.messages) ? (body.messages as Json[]) : [];
  const last = messages[messages.length - 1];
  let afterTool = false;
  if (last) {
    if (wire === 'chat') afterTool = last.role === 'tool';
    else afterTool = last.role === 'user' && Array.isArray(last.content) && (last.content as Json[]).some((b) => b.type === 'tool_result');
  }
  const json = body.response_format !== undefined || body.output_config !== undefined;
  return {
    wire,
    stream: body.stream === true,
    model: String(body.model ?? 'fake'),
    afterTool,
    promptTokens: Math.ceil(raw.length / 4),
    json,
  };
}

function tokenTexts(k: FakeLlmKnobs): string[] {
  return Array.from({ length: k.tokens }, () => k.tokenText);
}

function stamp(): string {
  return ` t${process.hrtime.bigint()}`;
}

/** Writes the reply: one buffer when nothing is paced, else headers now and tokens on a schedule. */
function reply(
  res: ServerResponse,
  ask: Ask,
  tool: FakeLlmKnobs['toolCall'],
  k: FakeLlmKnobs,
  seq: number,
  cache: Map<string, Buffer>,
  pacing: Pacing,
): void {
  const paced = k.ttftMs > 0 || k.tokenDelayMs > 0;
  const id = `${ask.wire === 'chat' ? 'chatcmpl' : 'msg'}_bench${seq}`;
  const callId = `call_bench${seq}`;
  // An extraction call is answered at once with the JSON text as one token (no pacing, no tool call).
  if (ask.json) {
    k = { ...k, tokens: 1, tokenText: k.jsonText, ttftMs: 0, tokenDelayMs: 0, stampTokens: false };
    tool = null;
  }
  if (!ask.stream) {
    const send = () => {
      const texts = k.stampTokens ? Array.from({ length: k.tokens }, stamp) : tokenTexts(k);
      const body = ask.wire === 'chat' ? chatJson(id, ask, texts, tool, callId) : anthropicJson(id, ask, texts, tool, callId);
      if (!res.destroyed) res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    };
    const wait = k.ttftMs + (tool ? 0 : k.tokenDelayMs * Math.max(0, k.tokens - 1));
    if (wait > 0) setTimeout(send, wait);
    else send();
    return;
  }
  const frames = ask.wire === 'chat' ? chatFrames(id, ask, tool, callId) : anthropicFrames(id, ask, tool, callId);
  const headers = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };
  if (!paced && !k.stampTokens) {
    // Same bytes for every request of this shape except the ids, which do not matter to Warren: cache them.
    const key = `${ask.wire}|${ask.model}|${tool ? 'tool' : ask.json ? 'json' : 'text'}`;
    let buf = cache.get(key);
    if (!buf) {
      buf = Buffer.from(
        frames.head +
          tokenTexts(tool ? { ...k, tokens: 0 } : k)
            .map(frames.token)
            .join('') +
          frames.tail,
      );
      cache.set(key, buf);
    }
    res.writeHead(200, headers).end(buf);
    return;
  }
  res.writeHead(200, headers);
  res.write(frames.head);
  if (tool) {
    const done = () => res.end(frames.tail);
    if (k.ttftMs > 0) setTimeout(done, k.ttftMs);
    else done();
    return;
  }
  if (!paced) {
    res.end(Array.from({ length: k.tokens }, () => frames.token(stamp())).join('') + frames.tail);
    return;
  }
  const { stats } = pacing;
  stats.open++;
  stats.peakOpen = Math.max(stats.peakOpen, stats.open);
  res.once('close', () => stats.open--);
  // Paced tokens are scheduled against absolute times so timer lateness does not accumulate.
  let t0 = 0;
  let i = 0;
  const next = (): void => {
    if (res.destroyed) return;
    // Everything already due goes out in one write (what a real server under load does too).
    let chunk = '';
    while (i < k.tokens && t0 + i * k.tokenDelayMs <= performance.now() + 0.5) {
      chunk += frames.token(k.stampTokens ? stamp() : k.tokenText);
      i++;
    }
    if (i >= k.tokens) {
      res.end(chunk + frames.tail);
      return;
    }
    if (chunk) res.write(chunk);
    setTimeout(next, Math.max(0, t0 + i * k.tokenDelayMs - performance.now()));
  };
  const start = (): void => {
    t0 = performance.now() + k.ttftMs;
    setTimeout(next, Math.max(0, k.ttftMs));
  };
  if (!k.hold) return start();
  pacing.held.push(start);
  stats.held++;
}

interface Frames {
  head: string;
  token(text: string): string;
  tail: string;
}

function sse(data: unknown, event?: string): string {
  return `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;
}

function chatFrames(id: string, ask: Ask, tool: FakeLlmKnobs['toolCall'], callId: string): Frames {
  const base = { id, object: 'chat.completion.chunk', created: 1700000000, model: ask.model };
  const chunk = (delta: Json, finish: string | null) => sse({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
  let head = chunk({ role: 'assistant', content: '' }, null);
  let completion = 0;
  if (tool) {
    head += chunk({ tool_calls: [{ index: 0, id: callId, type: 'function', function: { name: tool.name, arguments: '' } }] }, null);
    head += chunk({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify(tool.args) } }] }, null);
    completion = 8;
  }
  const usage = (n: number) =>
    sse({ ...base, choices: [], usage: { prompt_tokens: ask.promptTokens, completion_tokens: n, total_tokens: ask.promptTokens + n } });
  return {
    head,
    token: (text) => {
      completion++;
      return chunk({ content: text }, null);
    },
    get tail() {
      return chunk({}, tool ? 'tool_calls' : 'stop') + usage(completion) + 'data: [DONE]\n\n';
    },
  };
}

function anthropicFrames(id: string, ask: Ask, tool: FakeLlmKnobs['toolCall'], callId: string): Frames {
  let head = sse(
    {
      type: 'message_start',
      message: {
        id,
        type: 'message',
        role: 'assistant',
        content: [],
        model: ask.model,
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: ask.promptTokens, output_tokens: 1 },
      },
    },
    'message_start',
  );
  let completion = 0;
  if (tool) {
    head += sse(
      { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: callId, name: tool.name, input: {} } },
      'content_block_start',
    );
    head += sse(
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(tool.args) } },
      'content_block_delta',
    );
    completion = 8;
  } else {
    head += sse({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start');
  }
  return {
    head,
    token: (text) => {
      completion++;
      return sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }, 'content_block_delta');
    },
    get tail() {
      return (
        sse({ type: 'content_block_stop', index: 0 }, 'content_block_stop') +
        sse(
          {
            type: 'message_delta',
            delta: { stop_reason: tool ? 'tool_use' : 'end_turn', stop_sequence: null },
            usage: { output_tokens: completion },
          },
          'message_delta',
        ) +
        sse({ type: 'message_stop' }, 'message_stop')
      );
    },
  };
}

function chatJson(id: string, ask: Ask, texts: string[], tool: FakeLlmKnobs['toolCall'], callId: string): string {
  const message: Json = tool
    ? {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: callId, type: 'function', function: { name: tool.name, arguments: JSON.stringify(tool.args) } }],
      }
    : { role: 'assistant', content: texts.join('') };
  const n = tool ? 8 : texts.length;
  return JSON.stringify({
    id,
    object: 'chat.completion',
    created: 1700000000,
    model: ask.model,
    choices: [{ index: 0, message, finish_reason: tool ? 'tool_calls' : 'stop' }],
    usage: { prompt_tokens: ask.promptTokens, completion_tokens: n, total_tokens: ask.promptTokens + n },
  });
}

function anthropicJson(id: string, ask: Ask, texts: string[], tool: FakeLlmKnobs['toolCall'], callId: string): string {
  const content = tool ? [{ type: 'tool_use', id: callId, name: tool.name, input: tool.args }] : [{ type: 'text', text: texts.join('') }];
  return JSON.stringify({
    id,
    type: 'message',
    role: 'assistant',
    model: ask.model,
    content,
    stop_reason: tool ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: ask.promptTokens, output_tokens: tool ? 8 : texts.length },
  });
}
