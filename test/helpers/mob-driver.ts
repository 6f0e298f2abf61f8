// test/helpers/mob-driver.ts: small clients of the mob surfaces for the mob tests: JSON-RPC calls over
// POST /rpc (result or error), and a mob definition with a few members and a two-step flow.
import { call } from './app.ts';

export interface RpcReply {
  status: number;
  result?: any;
  error?: { code: number; message: string; data?: { code?: string; details?: Record<string, unknown> } };
}

let nextId = 1;

/** One JSON-RPC 2.0 request; `principal` is sent as x-warren-principal. */
export async function rpc(base: string, method: string, params: unknown = {}, principal?: string): Promise<RpcReply> {
  const id = nextId++;
  const res = await call(
    base,
    'POST',
    '/rpc',
    { jsonrpc: '2.0', id, method, params },
    principal ? { 'x-warren-principal': principal } : {},
  );
  if (res.status !== 200 || res.body?.jsonrpc !== '2.0' || res.body.id !== id)
    throw new Error(`bad rpc reply: ${res.status} ${JSON.stringify(res.body)}`);
  return { status: res.status, ...(res.body.error ? { error: res.body.error } : { result: res.body.result }) };
}

/** Like rpc() but returns the result, failing on an error. */
export async function rpcOk(base: string, method: string, params: unknown = {}, principal?: string) {
  const r = await rpc(base, method, params, principal);
  if (r.error) throw new Error(`${method} failed: ${JSON.stringify(r.error)}`);
  return r.result;
}

/** Three members (planner, writer, reviewer), planner-writer and writer-reviewer wired, a two-step flow. */
export const TEAM = {
  members: [
    { agent_identity: 'planner', role: 'lead' },
    { agent_identity: 'writer', role: 'worker' },
    { agent_identity: 'reviewer', role: 'worker' },
  ],
  wiring: [
    { a: 'planner', b: 'writer' },
    { a: 'writer', b: 'reviewer' },
  ],
  flows: [
    {
      flow_id: 'draft',
      steps: [
        { step_id: 'write', member: 'writer', prompt: 'write about {{input}}' },
        { step_id: 'review', member: 'reviewer', prompt: 'review: {{input}}' },
      ],
    },
  ],
};
