// test/helpers/mcp-servers.ts: real MCP servers for the tests. A loopback HTTP server speaking Streamable
// HTTP (POST/GET/DELETE /mcp, one SDK transport per MCP session) and the legacy SSE transport (GET /sse +
// POST /messages), and the command line of the stdio server (mcp-stdio-server.ts).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { buildTestServer } from './mcp-test-tools.ts';
import { nodeEntry } from './child-entry.ts';

const SCRIPT = fileURLToPath(new URL('./mcp-stdio-server.ts', import.meta.url));

/** A stdio server config for `[tools] mcp_servers` or /mcp/add (mode: serve | hang | exit). */
export function stdioServer(name: string, mode: 'serve' | 'hang' | 'exit' = 'serve', extra: Record<string, unknown> = {}) {
  return { name, command: process.execPath, args: [...nodeEntry(SCRIPT), mode, name], ...extra };
}

export interface HttpMcpServer {
  port: number;
  /** Streamable HTTP endpoint. */
  url: string;
  /** Legacy SSE endpoint. */
  sseUrl: string;
  /** Headers seen on every request, in order. */
  readonly seenHeaders: Array<Record<string, string | string[] | undefined>>;
  close(): Promise<void>;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

/** Starts an HTTP MCP server on 127.0.0.1 (`port` 0 picks one; pass a port to restart on the same one). */
export async function startHttpMcpServer(label: string, port = 0): Promise<HttpMcpServer> {
  const streams = new Map<string, StreamableHTTPServerTransport>();
  const sse = new Map<string, SSEServerTransport>();
  const seenHeaders: HttpMcpServer['seenHeaders'] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    seenHeaders.push(req.headers);
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/mcp') {
      const sid = req.headers['mcp-session-id'];
      const body = req.method === 'POST' ? await readJson(req) : undefined;
      let transport = typeof sid === 'string' ? streams.get(sid) : undefined;
      if (!transport) {
        if (typeof sid === 'string') {
          res
            .writeHead(404, { 'content-type': 'application/json' })
            .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
          return;
        }
        const fresh = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => void streams.set(id, fresh),
        });
        fresh.onclose = () => {
          if (fresh.sessionId) streams.delete(fresh.sessionId);
        };
        await buildTestServer(label).connect(fresh);
        transport = fresh;
      }
      await transport.handleRequest(req, res, body);
      return;
    }
    if (path === '/sse' && req.method === 'GET') {
      const transport = new SSEServerTransport('/messages', res);
      sse.set(transport.sessionId, transport);
      res.on('close', () => sse.delete(transport.sessionId));
      await buildTestServer(label).connect(transport);
      return;
    }
    if (path === '/messages' && req.method === 'POST') {
      const sid = new URL(req.url ?? '/', 'http://x').searchParams.get('sessionId') ?? '';
      const transport = sse.get(sid);
      if (!transport) {
        res.writeHead(404).end();
        return;
      }
      await transport.handlePostMessage(req, res, await readJson(req));
      return;
    }
    res.writeHead(404).end();
  };
  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const actual = (server.address() as AddressInfo).port;
  return {
    port: actual,
    url: `http://127.0.0.1:${actual}/mcp`,
    sseUrl: `http://127.0.0.1:${actual}/sse`,
    seenHeaders,
    async close() {
      await Promise.all([...streams.values()].map((t) => t.close().catch(() => {})));
      await Promise.all([...sse.values()].map((t) => t.close().catch(() => {})));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
