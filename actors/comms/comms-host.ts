// actors/comms/comms-host.ts: the comms runtime of one Warren process. Admits ingress (external events,
// terminal peer responses) and peer envelopes (from sessions here or from trusted Warren processes over
// TCP) into session inboxes through each session's mailbox (SessionHost.deliver), feeds every turn the
// inputs waiting for it (SessionExtension), wakes keep-alive sessions, keeps the comms directory
// (namespace `comms.agents`) and lists peers. Sending lives in comms-send.ts.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { Type } from 'typebox';
import { Compile } from 'typebox/compile';
import {
  type CommsAgent as CommsAgentRecord,
  type ExternalEventEnvelope,
  type InboxEntry,
  type InboundRequest,
  type Peer,
  PeerEnvelope,
  type PeerResponseTerminal,
  type RemoteAgent,
  type TcpRequestFrame,
} from '../../contracts/comms.ts';
import type { Config } from '../../contracts/config.ts';
import { isServiceError, ServiceError, sessionNotFound } from '../../contracts/errors.ts';
import { COMMS_AGENT_KIND, readValidRecords } from '../../storage/record-kinds.ts';
import type { StoreOp } from '../../storage/store.ts';
import type { KindTable } from '../actor-registry.ts';
import type { SessionHost } from '../session/session-host.ts';
import type { SessionExtension, SessionSettings, TurnInputClaim } from '../session/session-types.ts';
import { checksumToken, CommsSendError, type CommsFailure } from './comms-errors.ts';
import { AGENTS_NS, inboundNs, PEER_KINDS, peerIdParts } from './comms-ids.ts';
import { sendComms } from './comms-send.ts';
import { Inboxes, InboxFullError } from './inbox.ts';
import { CommsAgent, registerAgents } from './keep-alive.ts';
import { renderEnvelope, renderExternalEvent, renderPeerResponseTerminal } from './render.ts';
import { CommsListener, PeerClient, type ReplyBody } from './tcp-transport.ts';

/** Where a peer id points: a session here, or a session in the Warren process at `address`. */
export type PeerTarget = { local: true; sessionId: string } | { local: false; sessionId: string; address: string };

export interface CommsHostOptions {
  sessions: SessionHost;
  config(): Config;
  log: Logger;
  now(): number;
}

export class CommsHost implements SessionExtension {
  readonly sessions: SessionHost;
  readonly inboxes: Inboxes;
  readonly agents: KindTable<CommsAgent>;
  readonly client: PeerClient;
  readonly log: Logger;
  private listener: CommsListener | null = null;
  /** `host:port` other processes reach this one at (null: no TCP comms). */
  advertise: string | null = null;

  constructor(private readonly opts: CommsHostOptions) {
    this.sessions = opts.sessions;
    this.log = opts.log;
    this.inboxes = new Inboxes(opts.sessions.deps.store, {
      capacity: () => opts.config().comms.inbox_capacity,
      now: opts.now,
      writerEpoch: opts.sessions.deps.cluster ? (id) => opts.sessions.deps.cluster?.leaseRev?.('session', id) : () => 0,
      onSettled: (id) => void this.wake(id).catch((err) => this.log.error({ err, sessionId: id }, 'keep-alive wake failed')),
    });
    this.agents = registerAgents({ sessions: opts.sessions, inboxes: this.inboxes, now: opts.now, log: opts.log });
    this.client = new PeerClient({ timeoutMs: () => opts.config().comms.peer_timeout_ms, log: opts.log });
    opts.sessions.extension = this;
  }

  config(): Config {
    return this.opts.config();
  }

  get durable(): boolean {
    return this.sessions.deps.store.persistent;
  }

  /** Starts the TCP listener (when configured) and wakes keep-alive sessions with inputs waiting. */
  async start(): Promise<void> {
    const cfg = this.config().comms;
    if (cfg.listen) {
      this.listener = await CommsListener.start(cfg.listen, (frame) => this.serveFrame(frame), this.log);
      this.advertise = cfg.advertise_address ?? this.listener.address;
      this.log.info({ address: this.listener.address, advertise: this.advertise }, 'comms listening');
    }
    for (const agent of await this.localAgents()) {
      if (agent.keep_alive) await this.wake(agent.session_id);
    }
  }

  async close(): Promise<void> {
    this.client.close();
    await this.listener?.close();
  }

  // ---- SessionExtension ----------------------------------------------------------------------------

  async claim(sessionId: string, opts: { wakeKey?: string }): Promise<TurnInputClaim> {
    const c = await this.inboxes.claim(sessionId, opts.wakeKey);
    return {
      context: c.context.map((e) => e.text),
      pullSteer: () => c.pullSteer().map((e) => e.text),
      commitOps: () => c.deleteOps(),
      settle: (committed) => c.settle(committed),
    };
  }

  settingsOps(sessionId: string, settings: SessionSettings): StoreOp[] {
    if (!settings.comms_name) return [{ op: 'deleteRecord', ns: AGENTS_NS, key: sessionId }];
    const value: CommsAgentRecord = {
      v: 1,
      session_id: sessionId,
      name: settings.comms_name,
      keep_alive: settings.keep_alive,
      meta: settings.peer_meta ?? {},
    };
    return [{ op: 'putRecord', ns: AGENTS_NS, key: sessionId, value }];
  }

  // ---- keep-alive ---------------------------------------------------------------------------------

  /** After an admission or a settled turn: a keep-alive session with a waking input runs a turn for it. */
  async wake(sessionId: string): Promise<void> {
    const actor = this.sessions.peek(sessionId);
    const agent = this.agents.peek(sessionId);
    if (actor && !actor.settings.keep_alive) {
      agent?.send({ type: 'keepalive.disabled' });
      return;
    }
    if (!(await this.inboxes.nextWaking(sessionId))) return;
    const live = agent ?? (await this.agents.get(sessionId).catch(() => undefined));
    if (!live) return;
    if (live.state() === 'passive') live.send({ type: 'keepalive.enabled' });
    live.send({ type: 'inbox.woken' });
  }

  // ---- ingress ------------------------------------------------------------------------------------

  private entry(kind: InboxEntry['kind'], wake: boolean, text: string, extra: Partial<InboxEntry> = {}): InboxEntry {
    return { v: 1, id: randomUUID(), kind, wake, handling_mode: 'queue', text, admitted_at_ms: this.opts.now(), ...extra };
  }

  /**
   * Admits one entry into a session's inbox through the session's mailbox. Resolves once the entry is
   * durable (persistent realms); unknown or archived sessions → 404; full → InboxFullError.
   */
  async admit(sessionId: string, entry: InboxEntry, extraOps: StoreOp[] = []): Promise<void> {
    await this.sessions.deliver(sessionId, async (actor) => {
      if (actor.snapshotRecord.archived) throw sessionNotFound(sessionId);
      await this.inboxes.admit(sessionId, entry, this.inboxes.nextKey(), extraOps);
    });
    if (entry.wake) void this.wake(sessionId).catch((err) => this.log.error({ err, sessionId }, 'keep-alive wake failed'));
  }

  /** POST /sessions/{id}/external-events: queued, never wakes the session. */
  async externalEvent(sessionId: string, env: ExternalEventEnvelope): Promise<void> {
    await this.admit(sessionId, this.entry('external_event', false, renderExternalEvent(env)));
  }

  /** POST /sessions/{id}/peer-response-terminal: queued, wakes a keep-alive session. */
  async peerResponseTerminal(sessionId: string, body: PeerResponseTerminal): Promise<void> {
    await this.admit(sessionId, this.entry('peer_response_terminal', true, renderPeerResponseTerminal(body), { from: body.peer_id }));
  }

  // ---- peer ids -----------------------------------------------------------------------------------

  /** This session's peer id as a peer at `remote` (null: in this process) sees it. */
  peerIdOf(sessionId: string, remote: boolean): string {
    return remote && this.advertise ? `${sessionId}@${this.advertise}` : sessionId;
  }

  isTrusted(address: string): boolean {
    return this.config().comms.trusted_peers.some((p) => p.address === address);
  }

  /** Resolves a canonical peer id; display names are not accepted. */
  resolvePeer(peerId: string): PeerTarget {
    const parts = peerIdParts(peerId);
    if (!parts) throw new CommsSendError('peer_not_found_or_not_trusted', `unknown peer: ${peerId}`);
    const { sessionId, address } = parts;
    if (address === undefined) return { local: true, sessionId };
    if (address === this.advertise) return { local: true, sessionId };
    if (!this.isTrusted(address)) throw new CommsSendError('peer_not_found_or_not_trusted', `peer ${peerId} is not at a trusted address`);
    return { local: false, sessionId, address };
  }

  // ---- the recipient side -------------------------------------------------------------------------

  /**
   * Admits a peer envelope addressed to a session here; `from` is the sender's peer id as seen from
   * here. A `checksum_token` request is answered by this runtime (the subject's SHA-256) instead of
   * being queued for the model.
   */
  async accept(from: string, env: PeerEnvelope): Promise<{ outcome: 'accepted'; durable: boolean }> {
    const sessionId = env.to_session.toLowerCase();
    const actor = await this.sessions.getActive(sessionId).catch(unlessUnavailable);
    if (!actor?.settings.comms_name) throw new CommsSendError('peer_not_found_or_not_trusted', `no comms agent ${sessionId} here`);
    const mode = env.handling_mode ?? 'queue';
    const extraOps: StoreOp[] = [];
    if (env.kind === 'peer_request') {
      const record: InboundRequest = {
        v: 1,
        request_id: env.request_id ?? env.envelope_id,
        from,
        intent: env.intent ?? 'supervisor.bridge',
        params: env.params ?? {},
        handling_mode: mode,
        state: env.intent === 'checksum_token' ? 'answered' : 'open',
      };
      extraOps.push({ op: 'putRecord', ns: inboundNs(sessionId), key: record.request_id, value: record });
      if (env.intent === 'checksum_token') {
        await this.sessions.deps.store.commit(extraOps);
        this.answerChecksum(sessionId, from, record);
        return { outcome: 'accepted', durable: this.durable };
      }
    }
    // Lifecycle notices and progress (accepted) responses are context for the next turn; the rest wake.
    const wake = env.kind !== 'peer_lifecycle' && !(env.kind === 'peer_response' && env.status === 'accepted');
    const entry = this.entry(env.kind, wake, renderEnvelope(env, from), { from, handling_mode: mode, id: env.envelope_id });
    try {
      await this.admit(sessionId, entry, extraOps);
    } catch (err) {
      if (err instanceof InboxFullError) throw new CommsSendError('peer_admission_dropped', err.message);
      throw err;
    }
    return { outcome: 'accepted', durable: this.durable };
  }

  /**
   * Admits a peer envelope addressed to a session of this realm on the node serving that session: here,
   * or (cluster) the node holding its lease, through an internal call (ACCEPT_CALL, served by acceptCall).
   */
  async acceptInRealm(from: string, env: PeerEnvelope): Promise<{ outcome: 'accepted'; durable: boolean }> {
    const calls = this.sessions.deps.ownerCalls;
    if (!calls) return this.accept(from, env);
    const reply = await calls.call<ReplyBody>(env.to_session.toLowerCase(), ACCEPT_CALL, { from, envelope: env });
    if (!reply.ok)
      throw new CommsSendError(FAILURE_CODES.has(reply.code) ? (reply.code as CommsFailure) : 'peer_input_rejected', reply.message);
    return { outcome: 'accepted', durable: reply.durable === true };
  }

  /** ACCEPT_CALL on the recipient's node: accept() with its failures as a reply body. */
  async acceptCall(body: unknown): Promise<ReplyBody> {
    if (!checkAcceptCall.Check(body)) throw new ServiceError('BAD_REQUEST', `${ACCEPT_CALL} wants {from, envelope}`);
    try {
      const r = await this.accept(body.from, body.envelope);
      return { ok: true, outcome: r.outcome, durable: r.durable };
    } catch (err) {
      if (err instanceof CommsSendError) return { ok: false, code: err.code, message: err.message };
      throw err;
    }
  }

  /** Sends the completed `checksum_token` response back to the requester (detached; failures are logged). */
  private answerChecksum(sessionId: string, requester: string, req: InboundRequest): void {
    const subject = String((req.params as { subject?: unknown }).subject ?? '');
    sendComms(
      this,
      {
        kind: 'peer_response',
        session_id: sessionId,
        to: requester,
        in_reply_to: req.request_id,
        status: 'completed',
        result: { request_intent: 'checksum_token', request_subject: subject, token: checksumToken(subject) },
      },
      { automatic: true },
    ).catch((err: unknown) => this.log.warn({ err, sessionId, requester }, 'checksum_token answer not delivered'));
  }

  /** One TCP frame from another Warren process. */
  private async serveFrame(frame: TcpRequestFrame): Promise<ReplyBody> {
    if (!this.isTrusted(frame.from_address)) {
      return { ok: false, code: 'peer_not_found_or_not_trusted', message: `address ${frame.from_address} is not a trusted peer` };
    }
    if (frame.op === 'peers') {
      const agents: RemoteAgent[] = (await this.localAgents()).map((a) => ({
        session_id: a.session_id,
        name: a.name,
        meta: wireMeta(a.meta),
      }));
      return { ok: true, agents };
    }
    try {
      // On a cluster node the recipient may be hosted by another node: admitted there.
      const r = await this.acceptInRealm(`${frame.envelope.from_session}@${frame.from_address}`, frame.envelope);
      return { ok: true, outcome: r.outcome, durable: r.durable };
    } catch (err) {
      if (err instanceof CommsSendError) return { ok: false, code: err.code, message: err.message };
      throw err;
    }
  }

  // ---- directory ----------------------------------------------------------------------------------

  /** Comms agents of this process (sessions with a comms name, not archived). */
  async localAgents(): Promise<CommsAgentRecord[]> {
    const { store } = this.sessions.deps;
    const out: CommsAgentRecord[] = [];
    // A corrupt agent record is logged as refused and left out of the directory.
    for (const { value } of await readValidRecords<CommsAgentRecord>(store, COMMS_AGENT_KIND)) {
      const live = this.sessions.peek(value.session_id);
      const record = live ? live.snapshotRecord : await store.getSession(value.session_id);
      if (record && !record.archived) out.push(value);
    }
    return out;
  }

  /** GET /comms/peers: every session here with a comms name, and the agents of each trusted process. */
  async peers(sessionId: string): Promise<Peer[]> {
    await this.requireCommsSession(sessionId);
    const capabilities = { version: 1, extensions: {} };
    const peers: Peer[] = [];
    for (const a of await this.localAgents()) {
      if (a.session_id === sessionId) continue;
      peers.push({
        peer_id: a.session_id,
        name: a.name,
        address: { transport: 'inproc', endpoint: `inproc://${a.session_id}` },
        source: 'inproc',
        sendable_kinds: PEER_KINDS,
        capabilities,
        meta: wireMeta(a.meta),
      });
    }
    if (this.advertise) {
      const remote = await Promise.all(
        this.config().comms.trusted_peers.map(async (p) => {
          try {
            const reply = await this.client.call(p.address, { op: 'peers', from_address: this.advertise! });
            return reply.ok ? (reply.agents ?? []).map((a) => ({ a, address: p.address })) : [];
          } catch (err) {
            this.log.warn({ err, peer: p.name, address: p.address }, 'trusted peer did not answer the peer list');
            return [];
          }
        }),
      );
      for (const { a, address } of remote.flat()) {
        peers.push({
          peer_id: `${a.session_id}@${address}`,
          name: a.name,
          address: { transport: 'tcp', endpoint: `tcp://${address}` },
          source: 'trusted',
          sendable_kinds: PEER_KINDS,
          capabilities,
          meta: a.meta,
        });
      }
    }
    return peers;
  }

  /** The session, which must exist and have comms enabled (a comms name); else 404. */
  async requireCommsSession(sessionId: string): Promise<{ name: string }> {
    const actor = await this.sessions.getActive(sessionId).catch(unlessUnavailable);
    const name = actor?.settings.comms_name;
    if (!name)
      throw new ServiceError('SESSION_NOT_FOUND', `Session not found or comms not enabled: ${sessionId}`, { session_id: sessionId });
    return { name };
  }
}

/** A session lookup failure that means "not here" (undefined); a node that cannot serve it now rethrows. */
function unlessUnavailable(err: unknown): undefined {
  // SERVICE_UNAVAILABLE: another node won the session's lease; the cluster layer routes the call there.
  if (isServiceError(err) && err.code === 'SERVICE_UNAVAILABLE') throw err;
  return undefined;
}

/** The internal call that admits a peer envelope on the recipient's node (cluster realms). */
export const ACCEPT_CALL = 'comms.accept';
const checkAcceptCall = Compile(Type.Object({ from: Type.String({ minLength: 1 }), envelope: PeerEnvelope }));
const FAILURE_CODES = new Set<string>([
  'peer_not_found_or_not_trusted',
  'peer_unreachable',
  'peer_admission_dropped',
  'peer_input_rejected',
]);

function wireMeta(meta: CommsAgentRecord['meta']): Peer['meta'] {
  return { ...(meta.description !== undefined ? { description: meta.description } : {}), ...(meta.labels ? { labels: meta.labels } : {}) };
}
