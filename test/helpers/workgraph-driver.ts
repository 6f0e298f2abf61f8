// test/helpers/workgraph-driver.ts: drives the workgraph_* tools through real sessions and the scripted
// provider. A prompt `{"tool": name, "args": {...}}` makes the model call that one tool; the turn's text is
// then `{"is_error", "result"}` of the tool result. A prompt `{"agent": n, "claim_one": {...}}` makes the
// model loop ready -> claim (item n mod |ready|) until one claim succeeds, then answer `claimed <id>`.
import type { Message } from '../../contracts/transcript.ts';
import type { ProviderRequest } from '../../providers/provider.ts';
import type { Script, ScriptedReply } from '../../providers/scripted.ts';
import { plainText } from '../../providers/transcript-map.ts';
import { call } from './app.ts';

interface ClaimOne {
  agent: number;
  /** `spread`: agents pick among the first `spread` ready items only, so several race for each. */
  claim_one: { namespace?: string; lease_ms?: number; spread?: number };
}

type Row = Message;

function lastUserIndex(messages: Row[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === 'user') return i;
  return -1;
}

function lastCall(messages: Row[]): { name: string; content: string; is_error: boolean } | undefined {
  const last = messages.at(-1);
  if (!last || last.role !== 'tool_results') return undefined;
  const prev = messages.at(-2);
  const use = prev && prev.role === 'block_assistant' ? prev.blocks.find((b) => b.block_type === 'tool_use') : undefined;
  const r = last.results[0]!;
  return { name: use ? String((use.data as { name: string }).name) : '?', content: r.content, is_error: r.is_error === true };
}

function claimOneStep(cmd: ClaimOne, messages: Row[]): ScriptedReply {
  const ns = cmd.claim_one.namespace === undefined ? {} : { namespace: cmd.claim_one.namespace };
  const ready: ScriptedReply = { tool_calls: [{ name: 'workgraph_ready', args: { ...ns } }] };
  const prev = lastCall(messages);
  if (!prev) return ready;
  if (prev.name === 'workgraph_ready') {
    const items = (JSON.parse(prev.content) as { items: Array<{ id: string; revision: number }> }).items;
    if (items.length === 0) return ready;
    const pick = items[(cmd.agent % (cmd.claim_one.spread ?? items.length)) % items.length]!;
    const lease = cmd.claim_one.lease_ms === undefined ? {} : { lease_ms: cmd.claim_one.lease_ms };
    return { tool_calls: [{ name: 'workgraph_claim', args: { ...ns, item_id: pick.id, expected_revision: pick.revision, ...lease } }] };
  }
  if (prev.name === 'workgraph_claim' && !prev.is_error) return { text: `claimed ${(JSON.parse(prev.content) as { id: string }).id}` };
  return ready;
}

function parseOrText(content: string): unknown {
  try {
    return JSON.parse(content);
  } catch {
    return content;
  }
}

/** The scripted model of the driver (pass it to startApp). */
export const workGraphDriver: Script = (req: ProviderRequest): ScriptedReply => {
  const messages = req.messages;
  const cmd = JSON.parse(plainText((messages[lastUserIndex(messages)] as Extract<Row, { role: 'user' }>).content)) as
    { tool?: string; args?: unknown } | ClaimOne;
  if ('claim_one' in cmd) return claimOneStep(cmd, messages);
  const prev = lastCall(messages);
  if (prev) return { text: JSON.stringify({ is_error: prev.is_error, result: parseOrText(prev.content) }) };
  return { tool_calls: [{ name: cmd.tool!, args: cmd.args ?? {} }] };
};

export interface ToolAnswer {
  sessionId: string;
  is_error: boolean;
  result: any;
}

/**
 * One tool call as an agent: in a new session (enable_workgraph) or, with `sessionId`, in that session
 * (same owner identity for claims).
 */
export async function agentTool(base: string, tool: string, args: unknown, sessionId?: string): Promise<ToolAnswer> {
  const prompt = JSON.stringify({ tool, args });
  const res =
    sessionId === undefined
      ? await call(base, 'POST', '/sessions', { prompt, enable_workgraph: true })
      : await call(base, 'POST', `/sessions/${sessionId}/messages`, { session_id: sessionId, prompt });
  if (res.status !== 200) throw new Error(`${tool}: ${res.status} ${JSON.stringify(res.body)}`);
  const out = JSON.parse(res.body.text) as { is_error: boolean; result: unknown };
  return { sessionId: res.body.session_id, is_error: out.is_error, result: out.result };
}

/** Like agentTool, but fails the test when the tool answered is_error. */
export async function agentOk(base: string, tool: string, args: unknown, sessionId?: string): Promise<ToolAnswer> {
  const a = await agentTool(base, tool, args, sessionId);
  if (a.is_error) throw new Error(`${tool} failed: ${JSON.stringify(a.result)}`);
  return a;
}
