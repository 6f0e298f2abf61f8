// test/helpers/binding-driver.ts: what the work execution binding tests share: a scripted model that
// drives the workgraph_* tools for JSON prompts (workgraph-driver.ts) and echoes everything else (mob
// member turns; a prompt containing FAIL answers a provider error), a mob of member sessions with a
// two-step flow created over JSON-RPC, an MCP client on Warren's own endpoint, and a reader that follows
// a binding until it reaches a terminal phase (each read is a real MCP call; no timers).
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ProviderRequest } from '../../providers/provider.ts';
import { echoReply, type ScriptedReply } from '../../providers/scripted.ts';
import { plainText } from '../../providers/transcript-map.ts';
import { call } from './app.ts';
import { agentOk, workGraphDriver } from './workgraph-driver.ts';

export const FLOW = {
  flow_id: 'review',
  steps: [
    { step_id: 'draft', member: 'writer', prompt: 'Draft: {{input}}' },
    { step_id: 'check', member: 'reviewer', prompt: 'Check: {{input}}' },
  ],
};

function lastUserText(req: ProviderRequest): string {
  const u = [...req.messages].reverse().find((m) => m.role === 'user');
  return u && u.role === 'user' ? plainText(u.content) : '';
}

function isDriverCommand(text: string): boolean {
  try {
    const v = JSON.parse(text) as Record<string, unknown>;
    return typeof v === 'object' && v !== null && ('tool' in v || 'claim_one' in v);
  } catch {
    return false;
  }
}

/** The model: workgraph tool driver for `{"tool": ...}` prompts, echo otherwise, an error for FAIL. */
export function bindingScript(hang?: { text: string; entered?: () => void; release?: Promise<void> }) {
  return (req: ProviderRequest, i: number): ScriptedReply | Promise<ScriptedReply> => {
    const text = lastUserText(req);
    if (isDriverCommand(text)) return (workGraphDriver as (r: ProviderRequest, i: number) => ScriptedReply)(req, i);
    if (text.includes('FAIL')) return { error: { code: 'PROVIDER_ERROR', message: 'scripted failure' } };
    if (hang && text.includes(hang.text)) {
      hang.entered?.();
      return hang.release ? { text: `released: ${text}`, waitFor: hang.release } : { text: 'never', waitFor: new Promise<void>(() => {}) };
    }
    return echoReply(req);
  };
}

export async function rpc(url: string, method: string, params: unknown): Promise<any> {
  const res = await call(url, 'POST', '/rpc', { jsonrpc: '2.0', id: 1, method, params });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.error, undefined, JSON.stringify(res.body.error));
  return res.body.result;
}

export async function createMob(url: string, mobId = 'crew'): Promise<void> {
  await rpc(url, 'mob/create', {
    mob_id: mobId,
    definition: { members: [{ agent_identity: 'writer' }, { agent_identity: 'reviewer' }], flows: [FLOW] },
  });
}

/** A new work item (through the workgraph_create tool of an agent session). */
export async function createItem(
  url: string,
  title: string,
  extra: Record<string, unknown> = {},
): Promise<{ id: string; revision: number }> {
  return (await agentOk(url, 'workgraph_create', { title, ...extra })).result;
}

export type ToolResult = { isError?: boolean; structured: any; text: string };

export interface Mcp {
  tool(name: string, args: Record<string, unknown>): Promise<ToolResult>;
  ok(name: string, args: Record<string, unknown>): Promise<any>;
  /** Reads the binding until it is terminal (or `until` holds). */
  settle(bindingId: string, until?: (b: { machine_state: string; terminal: boolean }) => boolean): Promise<any>;
  client: Client;
}

export async function mcpClient(t: Pick<TestContext, 'after'>, url: string): Promise<Mcp> {
  const client = new Client({ name: 'binding-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  t.after(() => client.close());
  const tool = async (name: string, args: Record<string, unknown>): Promise<ToolResult> => {
    const r = (await client.callTool({ name, arguments: args })) as {
      isError?: boolean;
      structuredContent?: unknown;
      content: Array<{ text?: string }>;
    };
    return { isError: r.isError, structured: r.structuredContent, text: r.content[0]?.text ?? '' };
  };
  const ok = async (name: string, args: Record<string, unknown>) => {
    const r = await tool(name, args);
    assert.notEqual(r.isError, true, `${name}: ${r.text}`);
    return r.structured;
  };
  const settle = async (bindingId: string, until = (b: { machine_state: string; terminal: boolean }) => b.terminal) => {
    for (let i = 0; i < 20_000; i++) {
      const b = (await ok('warren_workgraph_flow_binding_get', { binding_id: bindingId })).binding;
      if (until(b)) return b;
    }
    throw new Error(`binding ${bindingId} did not settle`);
  };
  return { tool, ok, settle, client };
}
