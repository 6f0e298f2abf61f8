// http/handlers/mcp-endpoint.ts: Warren as an MCP server (Warren extension). POST/GET/DELETE /mcp speak
// MCP Streamable HTTP through the SDK's web-standard server transport, one transport per MCP session:
// the router's already-read request becomes a fetch Request, and the transport's Response goes back
// through the HttpResponder (JSON replies whole, the GET event stream chunk by chunk with backpressure).
// The tools are whatever subsystems registered in actors/mcp-exposed.ts.
import { randomUUID } from 'node:crypto';
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { ServiceError, type ErrorCode } from '../../contracts/errors.ts';
import type { ExposedTools } from '../../actors/mcp-exposed.ts';
import type { HandlerContext, HandlerResult, HandlerTable } from '../handler.ts';
import type { HttpResponder } from '../transport.ts';

export interface McpEndpointOptions {
  tools: ExposedTools;
  serverInfo: { name: string; version: string };
  /** `http://host:port` of this server (the transport wants absolute request URLs). */
  baseUrl(): string;
  /** Open MCP sessions kept at most; the oldest is closed beyond it. */
  maxSessions?: number;
}

export interface McpEndpoint {
  handlers: HandlerTable;
  /** Ends every MCP session (their event streams end too). */
  close(): Promise<void>;
}

/** Hop-by-hop and framing headers are the transport's business, never copied across. */
const SKIP = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive']);

/** Statuses the SDK transport answers, mapped onto the error table (406 Not Acceptable is a bad request). */
const STATUS_CODE: Record<number, ErrorCode> = {
  400: 'BAD_REQUEST',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  406: 'BAD_REQUEST',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
};

/** The SDK's server side, imported on the first MCP session (it costs most of a second at startup). */
async function loadServerSdk() {
  const [server, transport, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return {
    Server: server.Server,
    Transport: transport.WebStandardStreamableHTTPServerTransport,
    CallToolRequestSchema: types.CallToolRequestSchema,
    ListToolsRequestSchema: types.ListToolsRequestSchema,
  };
}

let serverSdk: ReturnType<typeof loadServerSdk> | undefined;

/** A single JSON-RPC `initialize` request (what opens an MCP session). */
function isInitialize(body: unknown): boolean {
  return (
    typeof body === 'object' &&
    body !== null &&
    !Array.isArray(body) &&
    (body as { method?: unknown }).method === 'initialize' &&
    'id' in body
  );
}

export function mcpEndpoint(opts: McpEndpointOptions): McpEndpoint {
  const maxSessions = opts.maxSessions ?? 256;
  /** Open MCP sessions; Map order is age. */
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();

  const open = async (): Promise<WebStandardStreamableHTTPServerTransport> => {
    const sdk = await (serverSdk ??= loadServerSdk());
    // The low-level Server: Warren's tools declare plain JSON Schema, which McpServer.registerTool does not take.
    const server = new sdk.Server(opts.serverInfo, { capabilities: { tools: {} } });
    server.setRequestHandler(sdk.ListToolsRequestSchema, () => ({ tools: opts.tools.list() }));
    server.setRequestHandler(sdk.CallToolRequestSchema, async (req, extra) => {
      const r = await opts.tools.call(req.params.name, req.params.arguments, { signal: extra.signal });
      return {
        content: [{ type: 'text', text: r.text }],
        ...(r.structured ? { structuredContent: r.structured } : {}),
        ...(r.is_error ? { isError: true } : {}),
      };
    });
    const transport: WebStandardStreamableHTTPServerTransport = new sdk.Transport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
        for (const [oldId, old] of sessions) {
          if (sessions.size <= maxSessions) break;
          sessions.delete(oldId);
          void old.close().catch(() => {});
        }
      },
      onsessionclosed: (id) => void sessions.delete(id),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    return transport;
  };

  const existing = (ctx: HandlerContext): WebStandardStreamableHTTPServerTransport => {
    const sid = ctx.headers['mcp-session-id'];
    if (sid === undefined) throw new ServiceError('BAD_REQUEST', 'Mcp-Session-Id header required (start with an initialize request)');
    const transport = sessions.get(sid);
    if (!transport) throw new ServiceError('NOT_FOUND', `MCP session not found: ${sid}`);
    return transport;
  };

  const toRequest = (ctx: HandlerContext, method: string): Request => {
    const headers = new Headers();
    for (const [k, v] of Object.entries(ctx.headers)) if (!SKIP.has(k)) headers.set(k, v);
    return new Request(`${opts.baseUrl()}/mcp`, { method, headers });
  };

  const relay = async (response: Response, res: HttpResponder): Promise<HandlerResult> => {
    const headers: Record<string, string> = {};
    response.headers.forEach((v, k) => {
      if (!SKIP.has(k)) headers[k] = v;
    });
    if (response.status >= 400) {
      const text = await response.text();
      let message = text || `MCP transport answered ${response.status}`;
      try {
        message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
      } catch {
        // not JSON: keep the text
      }
      throw new ServiceError(STATUS_CODE[response.status] ?? 'INTERNAL_ERROR', message);
    }
    if (response.body && (headers['content-type'] ?? '').startsWith('text/event-stream')) {
      pump(response.body, res, response.status, headers);
      return { streamed: true };
    }
    return { status: response.status, text: await response.text(), headers };
  };

  return {
    handlers: {
      'mcp.post': async (ctx) => {
        let transport: WebStandardStreamableHTTPServerTransport;
        if (ctx.headers['mcp-session-id'] !== undefined) transport = existing(ctx);
        else if (isInitialize(ctx.body)) transport = await open();
        else throw new ServiceError('BAD_REQUEST', 'Mcp-Session-Id header required (start with an initialize request)');
        return relay(await transport.handleRequest(toRequest(ctx, 'POST'), { parsedBody: ctx.body }), ctx.res);
      },
      'mcp.stream': async (ctx) => relay(await existing(ctx).handleRequest(toRequest(ctx, 'GET')), ctx.res),
      'mcp.close': async (ctx) => relay(await existing(ctx).handleRequest(toRequest(ctx, 'DELETE')), ctx.res),
    },
    async close() {
      const all = [...sessions.values()];
      sessions.clear();
      await Promise.all(all.map((t) => t.close().catch(() => {})));
    },
  };
}

/** Streams a web ReadableStream (the MCP event stream) to the responder, pausing on backpressure. */
function pump(body: ReadableStream<Uint8Array>, res: HttpResponder, status: number, headers: Record<string, string>): void {
  const reader = body.getReader();
  if (res.aborted) {
    void reader.cancel().catch(() => {});
    return;
  }
  let resume: (() => void) | null = null;
  res.onDrain(() => {
    resume?.();
    resume = null;
  });
  res.onAbort(() => {
    void reader.cancel().catch(() => {});
    resume?.();
    resume = null;
  });
  res.startStream(status, headers);
  // uWS sends the header block (and its closing blank line) only with the first body write: an SSE
  // comment flushes it now, so a client sees the stream open before the first event (a no-op to SSE).
  const contentType = Object.entries(headers).find(([k]) => k.toLowerCase() === 'content-type')?.[1] ?? '';
  if (contentType.startsWith('text/event-stream')) res.write(':\n\n');
  const decoder = new TextDecoder();
  (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done || res.aborted) break;
        if (!res.write(decoder.decode(value, { stream: true }))) await new Promise<void>((r) => (resume = r));
      }
    } catch {
      // The stream was cancelled (client gone or session closed).
    } finally {
      if (!res.aborted) res.end();
    }
  })().catch(() => undefined); // the loop catches its own errors; this only satisfies the detached-promise rule
}
