// actors/protocols/a2a/a2a-wire.ts: the two A2A JSON-RPC wires Warren speaks over one fold
// (a2a-map.ts). The fold's objects are the protocol 0.3 JSON shapes (a `kind` discriminator, lower-case
// states and roles); the 0.3 wire sends them as they are, the 1.0 wire re-encodes them as proto-JSON:
//   Task / Message / Artifact     → the same fields, no `kind`; roles ROLE_USER / ROLE_AGENT
//   status.state 'completed'      → 'TASK_STATE_COMPLETED' (each state likewise)
//   part {kind: 'text', text}     → {text};  {kind: 'data', data} → {data}
//   SendMessage result            → {task: Task}
//   stream events                 → {task} / {statusUpdate: {taskId, contextId, status}} (no `final`: the
//                                   stream ends after a terminal state) / {artifactUpdate: {...}}
// Each wire also reads its own request shapes (the user message, the send configuration). The same
// encoders and readers serve the remote-agent tools (a2a-remotes.ts), which talk to other agents.
import type { A2aArtifact, A2aMessage, A2aPart, A2aState, A2aStatus, A2aStreamEvent, A2aTask } from './a2a-map.ts';

/** A2A / JSON-RPC error codes (the same numbers in 0.3 and 1.0). */
export const A2A_ERR = {
  parse: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  taskNotFound: -32001,
  taskNotCancelable: -32002,
  pushNotSupported: -32003,
  unsupported: -32004,
  contentType: -32005,
  versionNotSupported: -32009,
} as const;

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

const MAX_TEXT_BYTES = 1_000_000;

/** What a user message of either wire says, once read. */
interface UserMessage {
  prompt: string;
  messageId: string;
  contextId?: string;
  taskId?: string;
}

interface SendConfig {
  historyLength?: number;
  /** Answer at once with the task still working (0.3 `blocking: false`, 1.0 `returnImmediately: true`). */
  returnImmediately: boolean;
}

export interface A2aWire {
  readonly version: '0.3' | '1.0';
  readMessage(raw: unknown): UserMessage;
  readConfig(raw: unknown): SendConfig;
  task(t: A2aTask): unknown;
  /** The result of message/send / SendMessage. */
  sendResult(t: A2aTask): unknown;
  /** One stream event as the `result` of a JSON-RPC stream frame. */
  event(ev: A2aStreamEvent): unknown;
  /** A user message in this wire's shape (what the remote-agent tool sends). */
  userMessage(m: { messageId: string; text: string; contextId?: string }): unknown;
}

export function obj(v: unknown, where: string): Record<string, unknown> {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new RpcError(A2A_ERR.invalidParams, `${where} must be an object`);
  return v as Record<string, unknown>;
}

export function str(v: unknown, where: string, optional = false): string | undefined {
  if (v === undefined || v === null || (optional && v === '')) {
    if (optional) return undefined;
    throw new RpcError(A2A_ERR.invalidParams, `${where} is required`);
  }
  if (typeof v !== 'string' || v.length === 0 || v.length > 200)
    throw new RpcError(A2A_ERR.invalidParams, `${where} must be a non-empty string`);
  return v;
}

export function historyLengthOf(v: unknown): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0)
    throw new RpcError(A2A_ERR.invalidParams, 'historyLength must be a non-negative integer');
  return v;
}

/** Reads a user message: `partText` turns one part into prompt text (or throws). */
function readMessage(raw: unknown, userRole: unknown, partText: (part: Record<string, unknown>, where: string) => string): UserMessage {
  const message = obj(raw, 'params.message');
  if (message.role !== userRole) throw new RpcError(A2A_ERR.invalidParams, `message.role must be '${String(userRole)}'`);
  const parts = message.parts;
  if (!Array.isArray(parts) || parts.length === 0) throw new RpcError(A2A_ERR.invalidParams, 'message.parts must be a non-empty array');
  const prompt = parts.map((p, i) => partText(obj(p, `message.parts[${i}]`), `message.parts[${i}]`)).join('\n\n');
  if (!prompt.trim()) throw new RpcError(A2A_ERR.invalidParams, 'message has no text');
  if (Buffer.byteLength(prompt) > MAX_TEXT_BYTES) throw new RpcError(A2A_ERR.invalidParams, `message text exceeds ${MAX_TEXT_BYTES} bytes`);
  const contextId = str(message.contextId, 'message.contextId', true);
  const taskId = str(message.taskId, 'message.taskId', true);
  return {
    prompt,
    messageId: str(message.messageId, 'message.messageId')!,
    ...(contextId ? { contextId } : {}),
    ...(taskId ? { taskId } : {}),
  };
}

const fileRefused = (where: string) => new RpcError(A2A_ERR.contentType, `${where}: file parts are not supported (text and data only)`);

function configOf(raw: unknown): Record<string, unknown> {
  return raw === undefined || raw === null ? {} : obj(raw, 'params.configuration');
}

/** Protocol 0.3: the fold's own shapes. */
export const A2A_V03: A2aWire = {
  version: '0.3',
  readMessage: (raw) =>
    readMessage(raw, 'user', (part, where) => {
      if (part.kind === 'text' && typeof part.text === 'string') return part.text;
      if (part.kind === 'data' && part.data && typeof part.data === 'object') return JSON.stringify(part.data);
      if (part.kind === 'file') throw fileRefused(where);
      throw new RpcError(A2A_ERR.invalidParams, `${where}: unknown part kind '${String(part.kind)}'`);
    }),
  readConfig: (raw) => {
    const c = configOf(raw);
    return { historyLength: historyLengthOf(c.historyLength), returnImmediately: c.blocking === false };
  },
  task: (t) => t,
  sendResult: (t) => t,
  event: (ev) => ev,
  userMessage: (m) => ({
    kind: 'message',
    messageId: m.messageId,
    role: 'user',
    parts: [{ kind: 'text', text: m.text }],
    ...(m.contextId ? { contextId: m.contextId } : {}),
  }),
};

const V1_STATE: Record<A2aState, string> = {
  submitted: 'TASK_STATE_SUBMITTED',
  working: 'TASK_STATE_WORKING',
  'input-required': 'TASK_STATE_INPUT_REQUIRED',
  completed: 'TASK_STATE_COMPLETED',
  canceled: 'TASK_STATE_CANCELED',
  failed: 'TASK_STATE_FAILED',
  rejected: 'TASK_STATE_REJECTED',
  unknown: 'TASK_STATE_UNSPECIFIED',
};

const v1Part = (p: A2aPart) => ({
  ...(p.kind === 'text' ? { text: p.text } : { data: p.data }),
  ...(p.metadata ? { metadata: p.metadata } : {}),
});
const v1Message = (m: A2aMessage) => ({
  messageId: m.messageId,
  contextId: m.contextId,
  taskId: m.taskId,
  role: m.role === 'user' ? 'ROLE_USER' : 'ROLE_AGENT',
  parts: m.parts.map(v1Part),
});
const v1Status = (s: A2aStatus) => ({
  state: V1_STATE[s.state],
  ...(s.message ? { message: v1Message(s.message) } : {}),
  timestamp: s.timestamp,
});
const v1Artifact = (a: A2aArtifact) => ({ artifactId: a.artifactId, name: a.name, parts: a.parts.map(v1Part) });
const v1Task = (t: A2aTask) => ({
  id: t.id,
  contextId: t.contextId,
  status: v1Status(t.status),
  artifacts: t.artifacts.map(v1Artifact),
  history: t.history.map(v1Message),
  metadata: t.metadata,
});

/** Protocol 1.0 (proto-JSON, the method names SendMessage, SubscribeToTask, ...). */
export const A2A_V1: A2aWire = {
  version: '1.0',
  readMessage: (raw) =>
    readMessage(raw, 'ROLE_USER', (part, where) => {
      if (typeof part.text === 'string') return part.text;
      if (part.data !== undefined && part.data !== null) return JSON.stringify(part.data);
      if (part.url !== undefined || part.raw !== undefined) throw fileRefused(where);
      throw new RpcError(A2A_ERR.invalidParams, `${where}: a part needs text, data, url or raw`);
    }),
  readConfig: (raw) => {
    const c = configOf(raw);
    return { historyLength: historyLengthOf(c.historyLength), returnImmediately: c.returnImmediately === true };
  },
  task: v1Task,
  sendResult: (t) => ({ task: v1Task(t) }),
  event: (ev) => {
    if (ev.kind === 'task') return { task: v1Task(ev) };
    if (ev.kind === 'status-update') return { statusUpdate: { taskId: ev.taskId, contextId: ev.contextId, status: v1Status(ev.status) } };
    return {
      artifactUpdate: {
        taskId: ev.taskId,
        contextId: ev.contextId,
        artifact: v1Artifact(ev.artifact),
        append: ev.append,
        lastChunk: ev.lastChunk,
      },
    };
  },
  userMessage: (m) => ({
    messageId: m.messageId,
    role: 'ROLE_USER',
    parts: [{ text: m.text }],
    ...(m.contextId ? { contextId: m.contextId } : {}),
  }),
};
