// actors/comms/comms-send.ts: POST /comms/send (and the comms tools). Checks each kind's rules (SPEC.md
// "Comms send"), builds the peer envelope, hands it to the recipient (in this process, or over TCP to a
// trusted Warren process) and reports the strongest delivery fact proven: `durably_resolved` only once
// the recipient's inbox commit is durable, `volatile_handed_off` / `acked` when the recipient's store is
// not persistent.
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { Compile } from 'typebox/compile';
import {
  BridgeCommand,
  BridgeReply,
  ChecksumParams,
  type InboundRequest,
  type CommsSendRequest,
  type CommsSendResult,
  type Delivery,
  type PeerEnvelope,
  type SendPeerResponse,
} from '../../contracts/comms.ts';
import { ServiceError } from '../../contracts/errors.ts';
import { COMMS_INBOUND_KIND, readRecord } from '../../storage/record-kinds.ts';
import type { CommsHost, PeerTarget } from './comms-host.ts';
import { inboundNs } from './comms-ids.ts';
import { checksumToken, CommsSendError, type CommsFailure } from './comms-errors.ts';
import { InboxFullError } from './inbox.ts';
import { renderInput } from './render.ts';
import { PeerUnreachableError } from './tcp-transport.ts';

const checkChecksumParams = Compile(ChecksumParams);
const checkBridge = Compile(BridgeCommand);
const checkBridgeReply = Compile(BridgeReply);
const FAILURES = new Set<string>(['peer_not_found_or_not_trusted', 'peer_unreachable', 'peer_admission_dropped', 'peer_input_rejected']);

/** Responses being sent right now, by `<session>/<request>`: one terminal reply per request. */
const replying = new Set<string>();

function badRequest(message: string): ServiceError {
  return new ServiceError('BAD_REQUEST', message);
}

/** Sends one comms command from `req.session_id` (which must have comms enabled). */
export async function sendComms(host: CommsHost, req: CommsSendRequest, opts: { automatic?: boolean } = {}): Promise<CommsSendResult> {
  const sender = req.session_id.toLowerCase();
  const { name } = await host.requireCommsSession(sender);
  if (req.kind === 'input') {
    // SPEC: input targets the sending session's own inbox, a self-loop that must be opted into.
    if (req.allow_self_session !== true) throw badRequest('self-session input rejected: set allow_self_session=true to override');
    const interactionId = randomUUID();
    try {
      await host.admit(sender, {
        v: 1,
        id: interactionId,
        kind: 'input',
        wake: true,
        handling_mode: req.handling_mode ?? 'queue',
        text: renderInput(req.body, req.source ?? 'rpc', req.blocks),
        admitted_at_ms: Date.now(),
      });
    } catch (err) {
      if (err instanceof InboxFullError) throw new ServiceError('SERVICE_UNAVAILABLE', err.message);
      throw err;
    }
    return { kind: 'input_accepted', interaction_id: interactionId, stream_reserved: req.stream === 'reserve_interaction' };
  }
  const target = host.resolvePeer(req.to);
  if (target.local && target.sessionId === sender)
    throw new CommsSendError('peer_not_found_or_not_trusted', 'a session is not its own peer');
  const cfgTaint = host.config().comms.outbound_taint;
  const taintOf = (t: { declare: 'clean' | 'tainted' } | 'undeclared' | undefined) =>
    t === undefined ? cfgTaint : t === 'undeclared' ? 'undeclared' : t.declare;
  const base = { envelope_id: randomUUID(), to_session: target.sessionId, from_session: sender, from_name: name };
  switch (req.kind) {
    case 'peer_message': {
      const env: PeerEnvelope = {
        ...base,
        kind: 'peer_message',
        handling_mode: req.handling_mode ?? 'queue',
        taint: taintOf(req.content_taint),
        body: req.body,
        ...(req.blocks ? { blocks: req.blocks } : {}),
      };
      return { kind: 'peer_message_sent', envelope_id: env.envelope_id, delivery: await deliver(host, target, env) };
    }
    case 'peer_lifecycle': {
      // Accepting mob.dismiss grants no dismissal authority: it is a notice like the others.
      const env: PeerEnvelope = {
        ...base,
        kind: 'peer_lifecycle',
        handling_mode: null,
        taint: cfgTaint,
        lifecycle_kind: req.lifecycle_kind,
        params: req.params,
      };
      return { kind: 'peer_lifecycle_sent', envelope_id: env.envelope_id, delivery: await deliver(host, target, env) };
    }
    case 'peer_request': {
      if (req.intent === 'checksum_token' && !checkChecksumParams.Check(req.params))
        throw badRequest('checksum_token params must be {subject: string}');
      if (req.intent === 'supervisor.bridge' && !checkBridge.Check(req.params))
        throw badRequest('supervisor.bridge params must be a bridge command {command, args?}');
      const requestId = randomUUID();
      const env: PeerEnvelope = {
        ...base,
        kind: 'peer_request',
        handling_mode: req.handling_mode ?? 'queue',
        taint: taintOf(req.content_taint),
        intent: req.intent,
        params: req.params,
        request_id: requestId,
        ...(req.blocks ? { blocks: req.blocks } : {}),
      };
      const delivery = await deliver(host, target, env);
      return {
        kind: 'peer_request_sent',
        envelope_id: env.envelope_id,
        interaction_id: requestId,
        request_id: requestId,
        delivery,
        stream_reserved: req.stream === 'reserve_interaction',
      };
    }
    case 'peer_response':
      return sendResponse(host, sender, target, req, base, taintOf(req.content_taint), opts.automatic === true);
  }
}

/** A response needs the inbound request it answers, still repliable and from the peer it goes to. */
async function sendResponse(
  host: CommsHost,
  sender: string,
  target: PeerTarget,
  req: SendPeerResponse,
  base: Pick<PeerEnvelope, 'envelope_id' | 'to_session' | 'from_session' | 'from_name'>,
  taint: PeerEnvelope['taint'],
  automatic: boolean,
): Promise<CommsSendResult> {
  const { store } = host.sessions.deps;
  const record = await readRecord<InboundRequest>(store, COMMS_INBOUND_KIND, req.in_reply_to, sender);
  if (!record) throw badRequest(`no inbound request ${req.in_reply_to} to reply to`);
  if (record.from !== req.to && host.resolvePeer(record.from).sessionId !== target.sessionId) {
    throw badRequest(`request ${req.in_reply_to} came from ${record.from}, not ${req.to}`);
  }
  const terminal = req.status !== 'accepted';
  if (!terminal && req.handling_mode != null) throw badRequest('handling_mode is forbidden on a progress (accepted) response');
  const lock = `${sender}/${req.in_reply_to}`;
  if (!automatic && (record.state === 'answered' || replying.has(lock)))
    throw badRequest(`request ${req.in_reply_to} is no longer repliable`);
  let result = req.result;
  if (record.intent === 'checksum_token' && req.status === 'completed') {
    const subject = String((record.params as { subject?: unknown }).subject ?? '');
    const expected = { request_intent: 'checksum_token', request_subject: subject, token: checksumToken(subject) };
    if (result === undefined) result = expected;
    else if (!isDeepStrictEqual(result, expected))
      throw badRequest('checksum_token result must carry the SHA-256 (hex) of the request subject');
  }
  if (record.intent === 'supervisor.bridge' && req.status === 'completed' && result !== undefined && !checkBridgeReply.Check(result)) {
    throw badRequest('a supervisor.bridge reply must be {command, ok, output?}');
  }
  const env: PeerEnvelope = {
    ...base,
    kind: 'peer_response',
    taint,
    in_reply_to: req.in_reply_to,
    status: req.status,
    // A terminal response may set its mode or inherit the recorded request's.
    handling_mode: terminal ? (req.handling_mode ?? record.handling_mode) : null,
    ...(result !== undefined ? { result } : {}),
    ...(req.blocks ? { blocks: req.blocks } : {}),
  };
  replying.add(lock);
  try {
    const delivery = await deliver(host, target, env);
    if (!automatic) {
      const next: InboundRequest = { ...record, state: terminal ? 'answered' : 'accepted' };
      await store.commit([{ op: 'putRecord', ns: inboundNs(sender), key: record.request_id, value: next }]);
    }
    return { kind: 'peer_response_sent', envelope_id: env.envelope_id, in_reply_to: req.in_reply_to, delivery };
  } finally {
    replying.delete(lock);
  }
}

/** Hands the envelope to its recipient and returns the strongest delivery fact proven. */
async function deliver(host: CommsHost, target: PeerTarget, env: PeerEnvelope): Promise<Delivery> {
  if (target.local) {
    const r = await host.acceptInRealm(env.from_session, env);
    return r.durable ? { durably_resolved: { outcome: r.outcome } } : 'volatile_handed_off';
  }
  if (!host.advertise)
    throw new CommsSendError('peer_unreachable', 'this process has no comms listener ([comms] listen) to exchange with other processes');
  let reply;
  try {
    reply = await host.client.call(target.address, { op: 'deliver', from_address: host.advertise, envelope: env });
  } catch (err) {
    if (err instanceof PeerUnreachableError) throw new CommsSendError('peer_unreachable', err.message);
    throw err;
  }
  if (!reply.ok) throw new CommsSendError(FAILURES.has(reply.code) ? (reply.code as CommsFailure) : 'peer_input_rejected', reply.message);
  return reply.durable ? { durably_resolved: { outcome: reply.outcome ?? 'accepted' } } : 'acked';
}

/**
 * A text answer to a request this session received (the `reply_to_peer` tool): a completed response
 * whose result is a bridge reply carrying the text as output.
 */
export async function replyToPeer(
  host: CommsHost,
  sessionId: string,
  args: { to: string; in_reply_to: string; body: string; ok?: boolean },
): Promise<CommsSendResult> {
  const raw = await readRecord<InboundRequest>(host.sessions.deps.store, COMMS_INBOUND_KIND, args.in_reply_to, sessionId);
  const command = raw !== undefined && checkBridge.Check(raw.params) ? raw.params.command : 'reply';
  return sendComms(host, {
    kind: 'peer_response',
    session_id: sessionId,
    to: args.to,
    in_reply_to: args.in_reply_to,
    status: args.ok === false ? 'failed' : 'completed',
    result: { command, ok: args.ok !== false, output: args.body },
  });
}
