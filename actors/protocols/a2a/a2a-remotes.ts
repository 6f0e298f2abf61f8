// actors/protocols/a2a/a2a-remotes.ts: remote A2A agents as tools (`[a2a.remotes.<name>]` of config.toml).
// Each remote is the tool `a2a__<name>`: one call sends one user message (SendMessage on a protocol 1.0
// card, message/send on a 0.3 one, blocking) and returns the remote's reply text, task state and ids
// (pass context_id back to continue the remote conversation). The card is read first (A2A-Version: 1.0,
// cached a few minutes) to pick the endpoint and the wire. Every request goes through the outbound guard
// (the realm's [network] rules on the resolved address); redirects are refused; the credential (read
// from `auth_env` at each call) is sent only to the configured URL's origin.
import { randomUUID } from 'node:crypto';
import type { A2aRemote, Config } from '../../../contracts/config.ts';
import type { Tool, ToolOutcome } from '../../../tools/tool.ts';
import { failureReason } from '../../net/outbound-guard.ts';
import { A2A_V03, A2A_V1, type A2aWire } from './a2a-wire.ts';

const CARD_TTL_MS = 5 * 60_000;
const DEFAULT_TIMEOUT_SECS = 120;
const MAX_BODY_BYTES = 4_000_000;
const MAX_REPLY_CHARS = 100_000;

interface Endpoint {
  url: string;
  wire: A2aWire;
}

/** What an A2A reply (a Task or a Message, either wire) says: its text, its state, its ids. */
interface A2aReply {
  text: string;
  state: string;
  taskId?: string;
  contextId?: string;
}

function partsText(parts: unknown): string {
  if (!Array.isArray(parts)) return '';
  return parts
    .map((p: Record<string, unknown> | null) => {
      if (!p || typeof p !== 'object') return '';
      if (typeof p.text === 'string') return p.text;
      if (p.data !== undefined && p.data !== null) return JSON.stringify(p.data);
      return '';
    })
    .filter((s) => s)
    .join('\n');
}

function ids(taskId: unknown, contextId: unknown): { taskId?: string; contextId?: string } {
  return {
    ...(typeof taskId === 'string' && taskId ? { taskId } : {}),
    ...(typeof contextId === 'string' && contextId ? { contextId } : {}),
  };
}

/** Reads the result of a message/send or SendMessage (0.3: a Task or a Message; 1.0: {task} or {message}). */
function readReply(result: unknown): A2aReply {
  const r = (result ?? {}) as Record<string, unknown>;
  const inner = (r.task ?? r.message ?? r) as Record<string, unknown>;
  if (r.message !== undefined || inner.kind === 'message' || (inner.parts !== undefined && inner.status === undefined)) {
    return { text: partsText(inner.parts), state: 'completed', ...ids(inner.taskId, inner.contextId) };
  }
  const status = (inner.status ?? {}) as Record<string, unknown>;
  const state = String(status.state ?? 'unknown')
    .replace(/^TASK_STATE_/, '')
    .toLowerCase()
    .replace(/_/g, '-');
  const artifacts = Array.isArray(inner.artifacts) ? (inner.artifacts as Array<Record<string, unknown>>) : [];
  let text = artifacts.map((a) => partsText(a.parts)).join('\n');
  const statusText = partsText(((status.message ?? {}) as Record<string, unknown>).parts);
  if (!text || state !== 'completed') text = [text, statusText].filter((s) => s).join('\n');
  return { text, state, ...ids(inner.id, inner.contextId) };
}

const major = (v: unknown) => Number(/^\s*(\d+)/.exec(String(v ?? ''))?.[1] ?? NaN);
const isJsonRpc = (b: unknown) => String(b ?? 'JSONRPC').toUpperCase() === 'JSONRPC';

/** The JSON-RPC endpoint a card offers: protocol 1.0 first, else 0.3. */
function endpointOf(card: Record<string, unknown>): Endpoint {
  const ifaces = Array.isArray(card.supportedInterfaces) ? (card.supportedInterfaces as Array<Record<string, unknown>>) : [];
  const rpc = ifaces.filter((i) => typeof i.url === 'string' && isJsonRpc(i.protocolBinding));
  const v1 = rpc.find((i) => major(i.protocolVersion) >= 1);
  if (v1) return { url: String(v1.url), wire: A2A_V1 };
  const v03 = rpc.find((i) => major(i.protocolVersion) === 0);
  if (v03) return { url: String(v03.url), wire: A2A_V03 };
  if (typeof card.url === 'string' && isJsonRpc(card.preferredTransport)) return { url: card.url, wire: A2A_V03 };
  const extra = Array.isArray(card.additionalInterfaces) ? (card.additionalInterfaces as Array<Record<string, unknown>>) : [];
  const alt = extra.find((i) => typeof i.url === 'string' && isJsonRpc(i.transport));
  if (alt) return { url: String(alt.url), wire: A2A_V03 };
  throw new Error('its agent card offers no JSON-RPC interface');
}

class ToolFailure extends Error {}

export interface A2aRemotesOptions {
  config: () => Config;
  env: NodeJS.ProcessEnv;
  /** The outbound guard's fetch. */
  fetch: typeof globalThis.fetch;
  now?: () => number;
}

export class A2aRemotes {
  private built: { from: unknown; tools: Tool[] } = { from: undefined, tools: [] };
  private readonly cards = new Map<string, { at: number; endpoint: Endpoint }>();

  constructor(private readonly opts: A2aRemotesOptions) {}

  /** One tool per configured remote, the same for every session (rebuilt when the section changes). */
  toolsFor(): readonly Tool[] {
    const remotes = this.opts.config().a2a?.remotes;
    if (remotes !== this.built.from) {
      this.cards.clear();
      this.built = { from: remotes, tools: Object.entries(remotes ?? {}).map(([name, r]) => this.tool(name, r)) };
    }
    return this.built.tools;
  }

  private tool(name: string, remote: A2aRemote): Tool {
    return {
      name: `a2a__${name}`,
      description:
        `Ask the remote A2A agent "${name}"${remote.description ? `: ${remote.description}` : ''}. ` +
        'Sends one message and waits for the reply; returns JSON {state, reply, context_id, task_id}. ' +
        'Pass context_id from an earlier reply to continue the same conversation with that agent.',
      input_schema: {
        type: 'object',
        properties: {
          message: { type: 'string', description: 'The message to send to the remote agent' },
          context_id: { type: 'string', description: 'The context_id of an earlier reply, to continue that conversation' },
        },
        required: ['message'],
        additionalProperties: false,
      },
      execute: (args, ctx) => this.call(name, remote, args, ctx.signal),
    };
  }

  private async call(name: string, remote: A2aRemote, args: unknown, signal: AbortSignal): Promise<ToolOutcome> {
    const a = (args ?? {}) as { message?: unknown; context_id?: unknown };
    if (typeof a.message !== 'string' || !a.message.trim()) return { content: 'message must be a non-empty string', is_error: true };
    if (a.context_id !== undefined && (typeof a.context_id !== 'string' || a.context_id.length > 200)) {
      return { content: 'context_id must be a string', is_error: true };
    }
    const timeoutMs = (remote.timeout_secs ?? DEFAULT_TIMEOUT_SECS) * 1000;
    const bound = AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]);
    try {
      const endpoint = await this.endpoint(remote, bound);
      const v1 = endpoint.wire === A2A_V1;
      const body = {
        jsonrpc: '2.0',
        id: randomUUID(),
        method: v1 ? 'SendMessage' : 'message/send',
        params: {
          message: endpoint.wire.userMessage({
            messageId: randomUUID(),
            text: a.message,
            ...(a.context_id ? { contextId: a.context_id } : {}),
          }),
          configuration: v1 ? { returnImmediately: false } : { blocking: true },
        },
      };
      const res = await this.request(remote, endpoint.url, bound, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', 'a2a-version': endpoint.wire.version },
        body: JSON.stringify(body),
      });
      const rpc = res as { error?: { code?: unknown; message?: unknown }; result?: unknown };
      if (rpc.error) throw new ToolFailure(`the agent answered error ${String(rpc.error.code)}: ${String(rpc.error.message ?? '')}`);
      if (rpc.result === undefined) throw new ToolFailure('the agent answered no JSON-RPC result');
      const reply = readReply(rpc.result);
      const text = reply.text.length > MAX_REPLY_CHARS ? `${reply.text.slice(0, MAX_REPLY_CHARS)}… (truncated)` : reply.text;
      return {
        content: JSON.stringify({
          state: reply.state,
          reply: text,
          ...(reply.contextId ? { context_id: reply.contextId } : {}),
          ...(reply.taskId ? { task_id: reply.taskId } : {}),
        }),
        ...(reply.state === 'failed' || reply.state === 'rejected' ? { is_error: true } : {}),
      };
    } catch (err) {
      const why =
        err instanceof ToolFailure
          ? err.message
          : signal.aborted
            ? 'cancelled'
            : bound.aborted
              ? `no reply within ${timeoutMs} ms`
              : failureReason(err);
      return { content: `remote A2A agent '${name}' failed: ${why}`, is_error: true };
    }
  }

  private async endpoint(remote: A2aRemote, signal: AbortSignal): Promise<Endpoint> {
    const now = (this.opts.now ?? Date.now)();
    const hit = this.cards.get(remote.url);
    if (hit && now - hit.at < CARD_TTL_MS) return hit.endpoint;
    const cardUrl = /\.json(?:[?#]|$)/.test(remote.url) ? remote.url : `${remote.url.replace(/\/+$/, '')}/.well-known/agent-card.json`;
    const card = await this.request(remote, cardUrl, signal, {
      method: 'GET',
      headers: { accept: 'application/json', 'a2a-version': '1.0' },
    });
    if (!card || typeof card !== 'object' || Array.isArray(card)) throw new ToolFailure('its agent card is not a JSON object');
    let endpoint: Endpoint;
    try {
      endpoint = endpointOf(card as Record<string, unknown>);
      new URL(endpoint.url);
    } catch (err) {
      throw new ToolFailure(err instanceof Error ? err.message : String(err));
    }
    this.cards.set(remote.url, { at: now, endpoint });
    return endpoint;
  }

  /** One guarded request whose JSON body is answered; the credential only to the configured origin. */
  private async request(
    remote: A2aRemote,
    url: string,
    signal: AbortSignal,
    init: RequestInit & { headers: Record<string, string> },
  ): Promise<unknown> {
    const headers = { ...init.headers };
    if (remote.auth_env && new URL(url).origin === new URL(remote.url).origin) {
      const secret = this.opts.env[remote.auth_env];
      if (!secret) throw new ToolFailure(`the variable ${remote.auth_env} (auth_env) is not set`);
      const header = remote.auth_header ?? 'Authorization';
      headers[header.toLowerCase()] = header.toLowerCase() === 'authorization' ? `Bearer ${secret}` : secret;
    }
    const res = await this.opts.fetch(url, { ...init, headers, signal, redirect: 'error' });
    if (Number(res.headers.get('content-length') ?? 0) > MAX_BODY_BYTES) {
      await res.body?.cancel();
      throw new ToolFailure(`${url}: the answer exceeds ${MAX_BODY_BYTES} bytes`);
    }
    const text = await res.text();
    if (Buffer.byteLength(text) > MAX_BODY_BYTES) throw new ToolFailure(`${url}: the answer exceeds ${MAX_BODY_BYTES} bytes`);
    if (!res.ok) throw new ToolFailure(`${url} answered HTTP ${res.status}`);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new ToolFailure(`${url} answered something other than JSON`);
    }
  }
}
