// tools/comms-tools.ts: the comms tools a session with a comms name offers its model: `peers`,
// `send_message`, `send_request`, `send_response` and `reply_to_peer`. They act through a CommsPort
// (the comms module hands in one bound to the session), so tools/ stays below actors/.
import { Type } from 'typebox';
import { compileArgs, invalidArgs, jsonResult } from './tool-args.ts';
import type { Tool, ToolOutcome } from './tool.ts';

/** What the comms tools need: the session's peer list and a send on its behalf (POST /comms/send bodies without session_id). */
export interface CommsPort {
  peers(): Promise<unknown>;
  send(command: Record<string, unknown>): Promise<unknown>;
  /** A completed (or, with ok false, failed) text answer to a request this session received. */
  reply(args: { to: string; in_reply_to: string; body: string; ok?: boolean }): Promise<unknown>;
}

const Peers = Type.Object({}, { additionalProperties: false });
const SendMessage = Type.Object(
  { to: Type.String({ description: 'peer_id from the peers tool' }), body: Type.String() },
  { additionalProperties: false },
);
const SendRequest = Type.Object(
  {
    to: Type.String(),
    intent: Type.Union([Type.Literal('supervisor.bridge'), Type.Literal('checksum_token')]),
    params: Type.Record(Type.String(), Type.Unknown(), {
      description: '{subject} for checksum_token; {command, args?} for supervisor.bridge',
    }),
  },
  { additionalProperties: false },
);
const SendResponse = Type.Object(
  {
    to: Type.String(),
    in_reply_to: Type.String({ description: 'the request id being answered' }),
    status: Type.Union([Type.Literal('accepted'), Type.Literal('completed'), Type.Literal('failed')]),
    result: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);
const ReplyToPeer = Type.Object(
  {
    to: Type.String(),
    in_reply_to: Type.String(),
    body: Type.String({ description: 'the answer, as text' }),
    ok: Type.Optional(Type.Boolean({ description: 'false reports failure' })),
  },
  { additionalProperties: false },
);

async function run(tool: string, fn: () => Promise<unknown>): Promise<ToolOutcome> {
  try {
    return jsonResult(await fn());
  } catch (err) {
    return { content: `${tool} failed: ${err instanceof Error ? err.message : String(err)}`, is_error: true };
  }
}

function tool<T>(name: string, description: string, schema: Parameters<typeof compileArgs>[0], act: (args: T) => Promise<unknown>): Tool {
  const args = compileArgs(schema);
  return {
    name,
    description,
    input_schema: args.jsonSchema,
    async execute(raw) {
      const parsed = args.parse(raw);
      if (!parsed.ok) return invalidArgs(name, parsed.message);
      return run(name, () => act(parsed.value as T));
    },
  };
}

/** The five comms tools, acting for one session through `port`. */
export function createCommsTools(port: CommsPort): Tool[] {
  return [
    tool('peers', 'List the peers this session can reach (peer_id, name, transport, metadata).', Peers, () => port.peers()),
    tool<{ to: string; body: string }>('send_message', 'Send a one-way message to a peer.', SendMessage, (a) =>
      port.send({ kind: 'peer_message', to: a.to, body: a.body }),
    ),
    tool<{ to: string; intent: string; params: Record<string, unknown> }>(
      'send_request',
      'Send a request to a peer; its response arrives later as input.',
      SendRequest,
      (a) => port.send({ kind: 'peer_request', to: a.to, intent: a.intent, params: a.params }),
    ),
    tool<{ to: string; in_reply_to: string; status: string; result?: Record<string, unknown> }>(
      'send_response',
      'Answer a request you received (accepted = progress; completed or failed = final).',
      SendResponse,
      (a) =>
        port.send({
          kind: 'peer_response',
          to: a.to,
          in_reply_to: a.in_reply_to,
          status: a.status,
          ...(a.result ? { result: a.result } : {}),
        }),
    ),
    tool<{ to: string; in_reply_to: string; body: string; ok?: boolean }>(
      'reply_to_peer',
      'Answer a request you received with text (completed, or failed with ok false).',
      ReplyToPeer,
      (a) => port.reply(a),
    ),
  ];
}
