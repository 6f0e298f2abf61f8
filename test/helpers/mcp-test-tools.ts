// test/helpers/mcp-test-tools.ts: the tools of the MCP servers the tests run (stdio and HTTP), built on
// the SDK's low-level Server so their input schemas are plain JSON Schema. `echo` answers with the
// server's label, `pid` with its process id, `crash` ends the process, `fail` answers an isError result, `stall` never answers.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const TOOLS = [
  {
    name: 'echo',
    description: 'Echoes its text',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
  { name: 'pid', description: 'The server process id', inputSchema: { type: 'object', properties: {} } },
  { name: 'crash', description: 'Ends the server process', inputSchema: { type: 'object', properties: {} } },
  { name: 'fail', description: 'Answers an error result', inputSchema: { type: 'object', properties: {} } },
  { name: 'stall', description: 'Never answers', inputSchema: { type: 'object', properties: {} } },
];

/** A server offering the test tools; `label` shows in every echo so tests can tell servers apart. */
export function buildTestServer(label: string): Server {
  const server = new Server({ name: `test-${label}`, version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, (req) => {
    const args = (req.params.arguments ?? {}) as Record<string, unknown>;
    switch (req.params.name) {
      case 'echo':
        return { content: [{ type: 'text', text: `${label}: ${String(args.text)}` }] };
      case 'pid':
        return { content: [{ type: 'text', text: String(process.pid) }] };
      case 'crash':
        process.exit(3);
        break;
      case 'fail':
        return { content: [{ type: 'text', text: 'it failed' }], isError: true };
      case 'stall':
        return new Promise<never>(() => {});
    }
    return { content: [{ type: 'text', text: `no tool ${req.params.name}` }], isError: true };
  });
  return server;
}
