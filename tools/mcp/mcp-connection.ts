// tools/mcp/mcp-connection.ts: one connection to one MCP server through the official SDK client (stdio,
// Streamable HTTP or SSE). It connects in the background, bounded by the server's connect timeout; a
// server that fails, hangs or dies only moves this connection to `failed` (reported, never thrown at the
// session). mcp-client-set.ts owns the connections of one session.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { MCP_CONNECT_TIMEOUT_SECS, type McpServerConfig, type McpServerState } from '../../contracts/mcp.ts';
import type { ToolOutcome } from '../tool.ts';
import { mcpResultOutcome } from './mcp-result.ts';
import { mcpClientSdk, type McpClientSdk } from './mcp-sdk.ts';

/** A tool as the server lists it. */
export interface McpRemoteTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

export type McpTransportKind = 'stdio' | 'streamable-http' | 'sse';

/** Why a connection failed: `timeout` (connect bound), `connect` (refused, bad handshake), `exited` (died later). */
export interface McpFailure {
  kind: 'timeout' | 'connect' | 'exited' | 'config';
  message: string;
}

export interface McpConnectionOptions {
  /** Reported as the MCP client's name and version. */
  clientInfo: { name: string; version: string };
  /** Working directory of stdio servers. */
  cwd?: string;
  /** fetch of url servers (the outbound guard's: [network] rules after DNS); default: the global one. */
  fetch?: typeof fetch;
  /** Called on every state change (connecting → ready | failed, ready → failed | closed). */
  onChange(conn: McpConnection): void;
}

/** Bytes of a stdio server's stderr kept for the failure message. */
const STDERR_TAIL = 2048;
/** How long a failure report waits for a dead stdio server's stderr to drain. */
const STDERR_DRAIN_MS = 500;

/** The transport a config selects. */
function transportKind(config: McpServerConfig): McpTransportKind {
  return config.command !== undefined ? 'stdio' : (config.transport ?? 'streamable-http');
}

/** Why a config cannot be used, or null. */
export function configProblem(config: McpServerConfig): string | null {
  if ((config.command === undefined) === (config.url === undefined)) return `server '${config.name}' needs exactly one of command and url`;
  if (config.url !== undefined) {
    let url: URL;
    try {
      url = new URL(config.url);
    } catch {
      return `server '${config.name}' has an invalid url`;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return `server '${config.name}' url must be http or https`;
  }
  return null;
}

/**
 * Why a url server could not be reached, without anything the target sent back (its response body could
 * be another service's data): the outbound guard's refusal, the HTTP status, or the connection error code.
 */
function urlFailureReason(err: unknown): string {
  let status: number | undefined;
  let code: string | undefined;
  for (let e: unknown = err, i = 0; e instanceof Error && i < 6; e = (e as { cause?: unknown }).cause, i++) {
    const c = (e as { code?: unknown }).code;
    if (c === 'OUTBOUND_REFUSED') return e.message;
    if (typeof c === 'number' && status === undefined && c >= 100 && c < 600) status = c;
    if (typeof c === 'string' && code === undefined) code = c;
  }
  if (status !== undefined) return `the server answered HTTP ${status}`;
  if (code !== undefined) return `connection failed (${code})`;
  return 'connection failed (no MCP handshake)';
}

export class McpConnection {
  state: McpServerState = 'connecting';
  failure: McpFailure | undefined;
  tools: McpRemoteTool[] = [];
  readonly kind: McpTransportKind;
  /** Settles (never rejects) once the connection left `connecting`. */
  readonly settled: Promise<void>;
  private client: Client | null = null;
  private stderrTail = '';
  /** Resolves when a stdio server's stderr has ended (its last words are in stderrTail). */
  private stderrEnded: Promise<void> = Promise.resolve();
  private closing = false;
  private settle!: () => void;

  constructor(
    readonly config: McpServerConfig,
    private readonly opts: McpConnectionOptions,
  ) {
    this.kind = transportKind(config);
    this.settled = new Promise((resolve) => (this.settle = resolve));
    // connect() records its own failure (state 'failed' with a reason); nothing is left to report here.
    this.connect().catch(() => undefined);
  }

  get name(): string {
    return this.config.name;
  }

  private get timeoutMs(): number {
    return (this.config.connect_timeout_secs ?? MCP_CONNECT_TIMEOUT_SECS) * 1000;
  }

  private makeTransport(sdk: McpClientSdk): Transport {
    const c = this.config;
    if (c.command !== undefined) {
      const t = new sdk.StdioClientTransport({
        command: c.command,
        args: c.args ?? [],
        env: { ...sdk.getDefaultEnvironment(), ...c.env },
        stderr: 'pipe',
        ...(this.opts.cwd ? { cwd: this.opts.cwd } : {}),
      });
      const stderr = t.stderr;
      if (stderr) {
        stderr.on('data', (b: Buffer) => {
          this.stderrTail = (this.stderrTail + b.toString('utf8')).slice(-STDERR_TAIL);
        });
        this.stderrEnded = new Promise((resolve) => {
          stderr.once('end', resolve);
          stderr.once('close', resolve);
        });
      }
      return t;
    }
    const url = new URL(c.url!);
    const requestInit = c.headers ? { headers: c.headers } : undefined;
    const opts = { ...(requestInit ? { requestInit } : {}), ...(this.opts.fetch ? { fetch: this.opts.fetch } : {}) };
    if (c.transport === 'sse') return new sdk.SSEClientTransport(url, opts);
    return new sdk.StreamableHTTPClientTransport(url, opts);
  }

  private async connect(): Promise<void> {
    const problem = configProblem(this.config);
    if (problem) return this.fail({ kind: 'config', message: problem });
    let sdk: McpClientSdk;
    try {
      sdk = await mcpClientSdk();
    } catch (err) {
      return this.fail({ kind: 'connect', message: `MCP client unavailable: ${err instanceof Error ? err.message : String(err)}` });
    }
    if (this.closing) return;
    const client = new sdk.Client(this.opts.clientInfo, { capabilities: {} });
    this.client = client;
    const limit = this.timeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), limit);
    });
    const handshake = (async () => {
      await client.connect(this.makeTransport(sdk), { timeout: limit + 1000 });
      client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, () => void this.refreshTools().catch(() => {}));
      await this.refreshTools(limit + 1000);
      return 'ok' as const;
    })();
    try {
      const outcome = await Promise.race([handshake, timedOut]);
      if (this.closing) return;
      if (outcome === 'timeout') {
        handshake.catch(() => {});
        await this.fail({ kind: 'timeout', message: `server '${this.name}' did not complete its handshake within ${limit / 1000}s` });
        return;
      }
      // A server that dies later (process exit, dropped stream) is reported, not thrown.
      client.onclose = () => {
        if (this.closing) return;
        // Failed at once (no call may reach it any more); the message gains the stderr tail once drained.
        const base = `server '${this.name}' closed its connection`;
        this.fail({ kind: 'exited', message: base }).catch(() => undefined); // the failure is recorded first, synchronously
        this.withStderr(base)
          .then((message) => {
            if (this.failure?.kind !== 'exited' || message === base) return;
            this.failure = { kind: 'exited', message };
            this.opts.onChange(this);
          })
          .catch(() => undefined); // only refines the message of a failure already recorded
      };
      this.state = 'ready';
      this.settle();
      this.opts.onChange(this);
    } catch (err) {
      if (!this.closing)
        await this.fail({
          kind: 'connect',
          message:
            this.kind === 'stdio'
              ? await this.withStderr(`server '${this.name}' failed to connect: ${err instanceof Error ? err.message : String(err)}`)
              : `server '${this.name}' failed to connect: ${urlFailureReason(err)}`,
        });
    } finally {
      clearTimeout(timer);
    }
  }

  private async refreshTools(timeout?: number): Promise<void> {
    const client = this.client;
    if (!client) return;
    const tools: McpRemoteTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined, timeout ? { timeout } : undefined);
      for (const t of page.tools)
        tools.push({ name: t.name, description: t.description, inputSchema: t.inputSchema as Record<string, unknown> });
      cursor = page.nextCursor;
    } while (cursor);
    this.tools = tools;
    if (this.state === 'ready') this.opts.onChange(this);
  }

  /** The message plus the tail of a stdio server's stderr (waiting briefly for the stream to drain). */
  private async withStderr(message: string): Promise<string> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.stderrEnded, new Promise<void>((resolve) => (timer = setTimeout(resolve, STDERR_DRAIN_MS)))]);
    clearTimeout(timer);
    const tail = this.stderrTail.trim();
    return tail ? `${message}; stderr: ${tail.slice(-500)}` : message;
  }

  private async fail(failure: McpFailure): Promise<void> {
    if (this.state === 'failed' || this.state === 'closed') return;
    this.state = 'failed';
    this.failure = failure;
    this.tools = [];
    this.settle();
    this.opts.onChange(this);
    await this.shutdown();
  }

  /**
   * Calls one tool. Never rejects: a dead server, a protocol error or the time limit become an error
   * outcome (`timed_out` set when `timeoutMs` ran out) fed back to the model as the tool result.
   */
  async call(tool: string, args: unknown, signal: AbortSignal, timeoutMs: number): Promise<ToolOutcome> {
    const client = this.client;
    if (this.state !== 'ready' || !client) {
      return { content: `MCP server '${this.name}' is not connected${this.failure ? `: ${this.failure.message}` : ''}`, is_error: true };
    }
    const abort = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.abort(new Error('timeout'));
    }, timeoutMs);
    const onAbort = () => abort.abort(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    try {
      const argObject = args && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
      const result = await client.callTool({ name: tool, arguments: argObject }, undefined, {
        signal: abort.signal,
        timeout: timeoutMs + 1000,
      });
      return mcpResultOutcome(result);
    } catch (err) {
      if (timedOut)
        return {
          content: `MCP tool ${this.name}/${tool} timed out after ${timeoutMs} ms`,
          is_error: true,
          timed_out: { timeout_ms: timeoutMs },
        };
      return { content: `MCP tool ${this.name}/${tool} failed: ${err instanceof Error ? err.message : String(err)}`, is_error: true };
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    }
  }

  private async shutdown(): Promise<void> {
    const client = this.client;
    this.client = null;
    if (!client) return;
    client.onclose = undefined;
    await client.close().catch(() => {});
  }

  /** Closes the connection (a stdio server's process ends). Idempotent. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    const wasConnecting = this.state === 'connecting';
    if (this.state !== 'failed') this.state = 'closed';
    this.tools = [];
    if (wasConnecting) this.settle();
    await this.shutdown();
    this.opts.onChange(this);
  }
}
