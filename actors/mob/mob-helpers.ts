// actors/mob/mob-helpers.ts: spawn-helper and fork-helper. A helper is a short-lived member: spawned
// (fork: with the source member's conversation as injected context), its prompt run as its kickoff turn,
// its text captured as a bounded result (at most `max_text_bytes` UTF-8 bytes, cut at a character
// boundary), then retired: its session is archived and it leaves the mob's members for the bounded
// retired-helpers index (MobHost.cleanupHelper). `retirement_error` is reported only when cleanup debt
// remains after the result was captured: retirement failed, or work another caller started is on the
// helper's session (it is archived, and the helper pruned, once that work ends).
import { ServiceError } from '../../contracts/errors.ts';
import type { ProviderName } from '../../contracts/session.ts';
import type { Message } from '../../contracts/transcript.ts';
import { plainText } from '../../providers/transcript-map.ts';
import type { MobActor } from './mob-actor.ts';
import type { MobHost } from './mob-host.ts';

export interface HelperRequest {
  prompt: string;
  result_label: string;
  max_text_bytes: number;
  agent_identity: string;
  role_name?: string;
  model_override?: string;
  /** The helper's provider (a Warren extension); a fork without one inherits its source member's. */
  provider?: ProviderName;
}

export interface ForkRequest extends HelperRequest {
  source_member_id: string;
  fork_context?: { type: 'full_history' } | { type: 'last_messages'; count: number };
}

export interface HelperResult {
  output: string;
  tokens_used: number;
  agent_identity: string;
  member_ref: string;
  bounded_result: { label: string; text: string; truncated: boolean; original_bytes: number; max_text_bytes: number };
  session_id: string;
  usage: { input_tokens: number; output_tokens: number; total_tokens: number };
  turns: number;
  tool_calls: number;
  retirement_error?: string;
}

/** The longest prefix of `text` within `max` UTF-8 bytes, never splitting a character. */
export function boundText(text: string, max: number): { text: string; truncated: boolean; bytes: number } {
  const bytes = Buffer.byteLength(text);
  if (bytes <= max) return { text, truncated: false, bytes };
  let used = 0;
  let out = '';
  for (const ch of text) {
    const n = Buffer.byteLength(ch);
    if (used + n > max) break;
    used += n;
    out += ch;
  }
  return { text: out, truncated: true, bytes };
}

function render(rows: Message[]): string {
  const lines: string[] = [];
  for (const m of rows) {
    if (m.role === 'user') lines.push(`user: ${plainText(m.content)}`);
    else if (m.role === 'block_assistant')
      lines.push(`assistant: ${m.blocks.map((b) => ('text' in b && typeof b.text === 'string' ? b.text : '')).join('')}`);
  }
  return lines.join('\n');
}

async function runHelper(host: MobHost, mob: MobActor, req: HelperRequest, injected?: string): Promise<HelperResult> {
  const spec = {
    agent_identity: req.agent_identity,
    role: req.role_name ?? 'helper',
    ...(req.model_override ? { model: req.model_override } : {}),
    ...(req.provider ? { provider: req.provider } : {}),
  };
  const { member, kickoff } = await host.spawn(mob, spec, false, {
    helper: true,
    prompt: req.prompt,
    ...(injected !== undefined ? { injected: [injected] } : {}),
  });
  let reply;
  try {
    reply = await kickoff;
  } catch (err) {
    // No result: the helper is retired and cleaned up all the same (it never lingers in the mob).
    await host
      .retire(mob, req.agent_identity, { interrupt: false, emit: false })
      .then(() => host.cleanupHelper(mob, req.agent_identity))
      .catch(() => undefined);
    throw err;
  }
  const bounded = boundText(reply.text, req.max_text_bytes);
  const result: HelperResult = {
    output: bounded.text,
    tokens_used: reply.usage.total_tokens,
    agent_identity: req.agent_identity,
    member_ref: `${mob.id}/${req.agent_identity}@${member.record.generation}`,
    bounded_result: {
      label: req.result_label,
      text: bounded.text,
      truncated: bounded.truncated,
      original_bytes: bounded.bytes,
      max_text_bytes: req.max_text_bytes,
    },
    session_id: reply.sessionId,
    usage: { input_tokens: reply.usage.input_tokens, output_tokens: reply.usage.output_tokens, total_tokens: reply.usage.total_tokens },
    turns: reply.turns,
    tool_calls: reply.toolCalls,
  };
  await host.emit(mob, 'helper_completed', {
    agent_identity: req.agent_identity,
    data: { result_label: req.result_label, truncated: bounded.truncated, original_bytes: bounded.bytes },
  });
  try {
    await host.retire(mob, req.agent_identity, { interrupt: false, emit: false });
    const debt = await host.cleanupHelper(mob, req.agent_identity);
    if (debt !== undefined) result.retirement_error = debt;
  } catch (err) {
    result.retirement_error = err instanceof Error ? err.message : String(err);
  }
  return result;
}

export async function spawnHelper(host: MobHost, mobId: string, req: HelperRequest): Promise<HelperResult> {
  const mob = await host.live(mobId);
  return runHelper(host, mob, req);
}

export async function forkHelper(host: MobHost, mobId: string, req: ForkRequest): Promise<HelperResult> {
  const mob = await host.live(mobId);
  const source = host.member(mob, req.source_member_id);
  if (!source.record.session_id) throw new ServiceError('BAD_REQUEST', `member ${req.source_member_id} has no session to fork`);
  await source.lane;
  const { rows } = await host.sessions.history(source.record.session_id, 0);
  const ctx = req.fork_context ?? { type: 'full_history' as const };
  const picked = ctx.type === 'last_messages' ? rows.slice(Math.max(0, rows.length - ctx.count)) : rows;
  // The fork runs where its source runs unless the request says otherwise: the source member's provider
  // (and its model, unless the request overrides the model; a model override alone is inferred anew).
  const from = source.record.spec;
  const inherited: HelperRequest =
    req.provider || req.model_override
      ? req
      : { ...req, ...(from.provider ? { provider: from.provider } : {}), ...(from.model ? { model_override: from.model } : {}) };
  return runHelper(host, mob, inherited, `Conversation of ${req.source_member_id} so far:\n${render(picked)}`);
}
