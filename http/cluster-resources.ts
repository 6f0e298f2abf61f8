// http/cluster-resources.ts: which leased resource (besides a session, which http/cluster-forward.ts finds
// in `/sessions/{id}`) a request is about, so that a cluster node forwards it to the node holding that
// resource's lease: a mob, named in `/mob/{id}/...` or in the `mob_id` param of a JSON-RPC call (on
// `POST /rpc`, or read from the `/rpc` WebSocket) that acts on one mob. Everything else is served where it
// lands: listings and WorkGraph, schedule and ledger reads come from the database, and their writes are
// compare-and-set on what they read.
import { MOB_KIND } from '../actors/mob/mob-actor.ts';
import type { HttpRequest } from './transport.ts';

export interface ResourceRef {
  kind: string;
  id: string;
}

const MOB_PATH = /^\/mob\/([^/]+)(?:\/|$)/;
/** JSON-RPC methods that take no `mob_id` or create one (served here: a new mob's lease is claimed here). */
const UNROUTED_RPC = new Set(['mob/create', 'mob/list', 'mob/grants/set', 'mob/grants/revoke', 'mob/grants/list', 'mob/runtime_status']);

function segment(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

/** The mob (or other leased resource) `req` acts on, if it acts on one. Malformed input: undefined (served here, which answers it). */
export function leasedResourceOf(req: HttpRequest): ResourceRef | undefined {
  const mob = MOB_PATH.exec(req.path);
  if (mob) {
    const id = segment(mob[1]);
    return id === undefined ? undefined : { kind: MOB_KIND, id };
  }
  if (req.method !== 'POST' || req.path !== '/rpc' || req.body.length === 0 || req.bodyTooLarge) return undefined;
  let call: unknown;
  try {
    call = JSON.parse(req.body.toString('utf8'));
  } catch {
    return undefined;
  }
  return rpcResourceOf(call);
}

/** The mob one parsed JSON-RPC call (not a batch) acts on, if it acts on one (also used for calls read from a WebSocket). */
export function rpcResourceOf(call: unknown): ResourceRef | undefined {
  if (!call || typeof call !== 'object' || Array.isArray(call)) return undefined;
  const { method, params } = call as { method?: unknown; params?: unknown };
  if (typeof method !== 'string' || !method.startsWith('mob/') || UNROUTED_RPC.has(method)) return undefined;
  const mobId = params && typeof params === 'object' ? (params as { mob_id?: unknown }).mob_id : undefined;
  return typeof mobId === 'string' && mobId.length > 0 ? { kind: MOB_KIND, id: mobId } : undefined;
}
