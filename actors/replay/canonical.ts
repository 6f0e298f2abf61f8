// actors/replay/canonical.ts: canonical JSON (sorted keys), content hashes and the first-difference
// walk that names a replay divergence's field path.
import { createHash } from 'node:crypto';
import type { Message } from '../../contracts/transcript.ts';
import type { ProviderRequest } from '../../providers/provider.ts';
import type { RecordedRequest } from '../../contracts/replay.ts';

/** JSON with object keys sorted at every level (undefined members dropped), so equal values hash equal. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      const x = (v as Record<string, unknown>)[k];
      if (x !== undefined) out[k] = sortKeys(x);
    }
    return out;
  }
  return v;
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A message as the model sees it: the row without its wall-clock timestamp. */
function modelView(m: Message): unknown {
  const { created_at: _t, ...rest } = m as Message & { created_at?: string };
  return rest;
}

/**
 * Each row's canonical model view, remembered per row: a committed row is never changed (the provider
 * adapters' wire caches rely on the same), so a turn hashes its history without re-sorting it.
 */
const canonicalOfRow = new WeakMap<Message, string>();

/**
 * sha256 of `canonicalJson(messages.map(modelView))`, the same bytes fed piecewise: `[`, each row's
 * remembered canonical JSON joined by `,`, then `]`.
 */
function messagesHash(messages: readonly Message[]): string {
  const h = createHash('sha256').update('[');
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    let json = canonicalOfRow.get(m);
    if (json === undefined) {
      json = canonicalJson(modelView(m));
      canonicalOfRow.set(m, json);
    }
    if (i > 0) h.update(',');
    h.update(json);
  }
  return h.update(']').digest('hex');
}

/** A tool list's hash and canonical form (sorted keys), remembered per list: a tool set's specs are built once and shared by its turns. */
const toolsDigests = new WeakMap<readonly unknown[], { hash: string; canonical: unknown }>();

export function toolsDigest(tools: readonly unknown[]): { hash: string; canonical: unknown } {
  let d = toolsDigests.get(tools);
  if (!d) {
    const json = canonicalJson(tools);
    d = { hash: sha256(json), canonical: JSON.parse(json) };
    toolsDigests.set(tools, d);
  }
  return d;
}

/** The recorded form of a request: everything but the messages, which are referenced by hash. */
export function recordRequest(req: Omit<ProviderRequest, 'signal'>, provider: string, hooksHash?: string): RecordedRequest {
  const out: RecordedRequest = {
    provider,
    model: req.model,
    tools_hash: toolsDigest(req.tools).hash,
    tools_count: req.tools.length,
    max_tokens: req.max_tokens,
    messages_hash: messagesHash(req.messages),
    messages_count: req.messages.length,
  };
  if (req.system !== undefined) out.system = req.system;
  if (req.json_schema !== undefined) out.json_schema = JSON.parse(canonicalJson(req.json_schema));
  if (hooksHash !== undefined) out.hooks_hash = hooksHash;
  return out;
}

/** The first path where two JSON values differ (`tools[1].input_schema.properties.x.type`), or undefined. */
export function firstDiff(a: unknown, b: unknown, path = ''): { path: string; a: unknown; b: unknown } | undefined {
  if (a === b) return undefined;
  if (Array.isArray(a) && Array.isArray(b)) {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) {
      const d = firstDiff(a[i], b[i], `${path}[${i}]`);
      if (d) return d;
    }
    return a.length === b.length ? undefined : { path: `${path}.length`, a: a.length, b: b.length };
  }
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const k of keys) {
      const d = firstDiff((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], path ? `${path}.${k}` : k);
      if (d) return d;
    }
    return undefined;
  }
  return { path: path || '$', a, b };
}
