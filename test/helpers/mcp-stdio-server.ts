// test/helpers/mcp-stdio-server.ts: a stdio MCP server for the tests, run as a child process with
// `node --import tsx`. argv[2] picks the behaviour: `serve <label>` (answers normally), `hang` (reads its
// stdin and never answers the handshake), `exit` (writes to stderr and exits at once).
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { buildTestServer } from './mcp-test-tools.ts';

const mode = process.argv[2] ?? 'serve';
if (mode === 'hang') {
  process.stdin.resume();
  process.stdin.on('end', () => process.exit(0));
} else if (mode === 'exit') {
  process.stderr.write('refusing to start\n');
  process.exit(2);
} else {
  await buildTestServer(process.argv[3] ?? 'stdio').connect(new StdioServerTransport());
}
