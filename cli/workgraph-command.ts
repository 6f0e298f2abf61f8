// cli/workgraph-command.ts: runs `warren workgraph ...` (parsed by workgraph-args.ts). Reads go to the
// realm opened directly (--realm) or to a running server (--url); goal and attention mutations need the
// realm opened directly, which is the trusted in-process host authority SPEC.md asks for. Returns the
// exit code and output; main.ts writes them (the only place with console and process.exit).
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pino from 'pino';
import { Compile } from 'typebox/compile';
import { ActorRegistry } from '../actors/actor-registry.ts';
import { WorkGraphHost } from '../actors/workgraph/wg-host.ts';
import {
  closeGoal,
  confirmGoal,
  createGoal,
  goalStatus,
  listAttention,
  pauseAttention,
  resumeAttention,
} from '../actors/workgraph/wg-goals.ts';
import { realmsRoot, openRealm, MANIFEST_FILE } from '../config/realm.ts';
import { GoalCreateInput, type WorkListInput } from '../contracts/workgraph-inputs.ts';
import type { AttentionListRequest, WorkStatus } from '../contracts/workgraph.ts';
import { isServiceError } from '../contracts/errors.ts';
import { openStore } from '../storage/open-store.ts';
import { MUTATING, parseOwnerKey, parseWorkGraphArgs, UsageError, WORKGRAPH_HELP, type ParsedWorkGraph } from './workgraph-args.ts';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

const checkGoal = Compile(GoalCreateInput);
const json = (v: unknown): CliResult => ({ code: 0, stdout: `${JSON.stringify(v, null, 2)}\n`, stderr: '' });
const fail = (message: string, code?: string): CliResult => ({
  code: 1,
  stdout: '',
  stderr: `warren: ${message}\n${code ? `${JSON.stringify({ error: message, code })}\n` : ''}`,
});

function int(p: ParsedWorkGraph, name: string): number | undefined {
  const v = p.opts[name];
  if (v === undefined) return undefined;
  if (!/^-?[0-9]{1,15}$/.test(v)) throw new UsageError(`--${name} must be an integer (got '${v}')`);
  return Number(v);
}

function one(p: ParsedWorkGraph, what: string): string {
  if (p.positional.length !== 1) throw new UsageError(`${p.command} needs exactly one <${what}>`);
  return p.positional[0]!;
}

function listInput(p: ParsedWorkGraph): WorkListInput {
  const q: WorkListInput = {};
  if (p.opts.namespace) q.namespace = p.opts.namespace;
  if (p.flags.has('all-namespaces')) q.all_namespaces = true;
  if (p.flags.has('include-terminal')) q.include_terminal = true;
  if (p.multi.status) q.statuses = p.multi.status as WorkStatus[];
  if (p.multi.label) q.labels = p.multi.label;
  const limit = int(p, 'limit');
  if (limit !== undefined) q.limit = limit;
  return q;
}

function goalInput(p: ParsedWorkGraph): GoalCreateInput {
  const o = p.opts;
  if (!o.title) throw new UsageError('goal-create needs --title');
  const policyKind = o.policy ?? 'self_attest';
  const policy =
    policyKind === 'principal_confirmed'
      ? { kind: policyKind, ...(o.principal ? { principal: { kind: 'principal', id: o.principal } } : {}) }
      : policyKind === 'supervisor'
        ? { kind: policyKind, owner_key: o.supervisor ? parseOwnerKey(o.supervisor) : undefined }
        : policyKind === 'reviewer_quorum'
          ? { kind: policyKind, threshold: int(p, 'threshold') ?? 1 }
          : { kind: policyKind };
  const target = o['target-owner']
    ? { kind: 'lowered_owner', owner_key: parseOwnerKey(o['target-owner']) }
    : o['target-session']
      ? { kind: 'session', session_id: o['target-session'] }
      : undefined;
  if (!target) throw new UsageError('goal-create needs --target-session <id> or --target-owner <kind:id>');
  const input: Record<string, unknown> = { title: o.title, completion_policy: policy, target };
  for (const [k, v] of [
    ['namespace', o.namespace],
    ['description', o.description],
    ['priority', o.priority],
    ['mode', o.mode],
    ['delegated_authority', o.authority],
  ] as const) {
    if (v !== undefined) input[k] = v;
  }
  if (p.multi.label) input.labels = p.multi.label;
  if (!checkGoal.Check(input)) {
    const e = [...checkGoal.Errors(input)][0];
    throw new UsageError(`invalid goal: ${e ? `${e.instancePath || '/'} ${e.message}` : 'does not match the schema'}`);
  }
  return input as GoalCreateInput;
}

/** Runs a command on a host over the directly opened realm. */
async function direct(host: WorkGraphHost, p: ParsedWorkGraph): Promise<unknown> {
  const ns = p.opts.namespace;
  const nsPart = ns ? { namespace: ns } : {};
  switch (p.command) {
    case 'list':
      return { items: await host.list(listInput(p)) };
    case 'show':
      return host.get({ item_id: one(p, 'item_id'), ...nsPart });
    case 'ready':
      return {
        items: await host.ready({
          ...nsPart,
          ...(p.multi.label ? { labels: p.multi.label } : {}),
          ...(int(p, 'limit') !== undefined ? { limit: int(p, 'limit') } : {}),
        }),
      };
    case 'snapshot':
      return host.snapshot(listInput(p));
    case 'events':
      return host.events({
        ...nsPart,
        after_seq: Math.max(0, int(p, 'after-seq') ?? 0),
        ...(int(p, 'limit') !== undefined ? { limit: int(p, 'limit') } : {}),
      });
    case 'goal-create':
      return createGoal(host, goalInput(p));
    case 'goal-status':
      return goalStatus(host, one(p, 'binding_id'), ns);
    case 'goal-confirm': {
      const principal = p.opts.principal;
      return confirmGoal(host, {
        binding_id: one(p, 'binding_id'),
        ...nsPart,
        kind: principal ? 'principal' : 'host',
        ...(principal ? { principal_id: principal } : {}),
        ...(p.opts.summary ? { summary: p.opts.summary } : {}),
      });
    }
    case 'goal-close': {
      const status = (p.opts.status ?? p.multi.status?.[0] ?? 'completed') as 'completed';
      if (!['completed', 'cancelled', 'failed'].includes(status))
        throw new UsageError(`--status must be completed, cancelled or failed (got '${status}')`);
      return closeGoal(host, { binding_id: one(p, 'binding_id'), ...nsPart, status });
    }
    case 'attention-list':
      return { attention: await listAttention(host, attentionQuery(p)) };
    case 'attention-pause':
      return pauseAttention(host, one(p, 'binding_id'), p.opts.until, ns);
    case 'attention-resume':
      return resumeAttention(host, one(p, 'binding_id'), ns);
    default:
      throw new UsageError(`unknown command ${p.command}`);
  }
}

function attentionQuery(p: ParsedWorkGraph): AttentionListRequest {
  const q: Record<string, unknown> = {};
  if (p.opts.namespace) q.namespace = p.opts.namespace;
  if (p.multi.status) q.status = p.multi.status[0];
  if (p.opts['target-session']) q.target = { kind: 'session', session_id: p.opts['target-session'] };
  return q as AttentionListRequest;
}

/** Runs a read command against a running server's REST reads. */
async function remote(base: string, p: ParsedWorkGraph): Promise<unknown> {
  int(p, 'limit');
  int(p, 'after-seq');
  const qs = new URLSearchParams();
  if (p.opts.namespace) qs.set('namespace', p.opts.namespace);
  const add = (k: string, v: string | undefined) => v !== undefined && qs.append(k, v);
  if (p.flags.has('all-namespaces')) qs.set('all_namespaces', 'true');
  if (p.flags.has('include-terminal')) qs.set('include_terminal', 'true');
  for (const s of p.multi.status ?? []) if (p.command !== 'attention-list') qs.append('statuses', s);
  for (const l of p.multi.label ?? []) qs.append('labels', l);
  add('limit', p.opts.limit);
  add('after_seq', p.opts['after-seq']);
  const get = (path: string) => request(`${base}${path}?${qs}`, 'GET');
  switch (p.command) {
    case 'list':
      return get('/workgraph/items');
    case 'show':
      return get(`/workgraph/items/${encodeURIComponent(one(p, 'item_id'))}`);
    case 'ready':
      return get('/workgraph/ready');
    case 'snapshot':
      return get('/workgraph/snapshot');
    case 'events':
      return get('/workgraph/events');
    case 'goal-status':
      return request(`${base}/workgraph/goal/status`, 'POST', {
        binding_id: one(p, 'binding_id'),
        ...(p.opts.namespace ? { namespace: p.opts.namespace } : {}),
      });
    case 'attention-list':
      return request(`${base}/workgraph/attention/list`, 'POST', attentionQuery(p));
    default:
      throw new UsageError(`${p.command} needs host authority: open the realm directly with --realm (not --url)`);
  }
}

class RemoteError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

async function request(url: string, method: string, body?: unknown): Promise<unknown> {
  const res = await fetch(url, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  const parsed = (await res.json().catch(() => ({}))) as { error?: string; code?: string };
  if (!res.ok) throw new RemoteError(parsed.error ?? `HTTP ${res.status}`, parsed.code ?? 'INTERNAL_ERROR');
  return parsed;
}

/** Runs `warren workgraph <argv...>`. Never throws. */
export async function runWorkGraphCli(argv: string[]): Promise<CliResult> {
  try {
    const p = parseWorkGraphArgs(argv);
    if (p.command === 'help') return { code: 0, stdout: WORKGRAPH_HELP, stderr: '' };
    if (p.opts.url) {
      if (MUTATING.has(p.command))
        throw new UsageError(`${p.command} needs host authority: open the realm directly with --realm (not --url)`);
      return json(await remote(p.opts.url.replace(/\/+$/, ''), p));
    }
    const realm = p.opts.realm;
    if (!realm) throw new UsageError('give --realm <id> (the realm to open) or --url <base> (a running server)');
    const stateRoot = p.opts['state-root'] === undefined ? undefined : resolve(p.opts['state-root']);
    const root = realmsRoot(stateRoot === undefined ? {} : { stateRoot });
    if (!existsSync(join(root, realm, MANIFEST_FILE))) return fail(`realm not found: ${realm} (under ${root})`, 'NOT_FOUND');
    const logger = pino({ level: 'silent' });
    const info = await openRealm({ realm, ...(stateRoot === undefined ? {} : { stateRoot }), isolated: false, logger });
    const store = await openStore(info.backend, info.storeDir);
    // This process hosts the realm's WorkGraph actors itself: trusted in-process host authority.
    const registry = new ActorRegistry({ now: Date.now, log: logger });
    const host = new WorkGraphHost({ store, realmId: info.realmId, now: Date.now, log: logger }, registry);
    try {
      host.checkRealm(info.realmId);
      return json(await direct(host, p));
    } finally {
      await registry.close();
      await store.close();
    }
  } catch (err) {
    if (err instanceof UsageError) return fail(err.message);
    if (err instanceof RemoteError) return fail(err.message, err.code);
    if (isServiceError(err)) return fail(err.message, err.code);
    return fail(err instanceof Error ? err.message : String(err), 'INTERNAL_ERROR');
  }
}
