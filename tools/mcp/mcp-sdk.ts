// tools/mcp/mcp-sdk.ts: the MCP SDK's client side, loaded on first use. Importing the SDK (and the zod
// schemas behind it) costs most of a second at startup, which servers that never connect to an MCP
// server should not pay; mcp-connection.ts awaits this before its first connect.

async function load() {
  const [client, stdio, streamable, sse, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/client/sse.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return {
    Client: client.Client,
    StdioClientTransport: stdio.StdioClientTransport,
    getDefaultEnvironment: stdio.getDefaultEnvironment,
    StreamableHTTPClientTransport: streamable.StreamableHTTPClientTransport,
    SSEClientTransport: sse.SSEClientTransport,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
  };
}

export type McpClientSdk = Awaited<ReturnType<typeof load>>;

let loading: Promise<McpClientSdk> | undefined;

/** The SDK client classes (one shared import). */
export function mcpClientSdk(): Promise<McpClientSdk> {
  loading ??= load();
  return loading;
}
