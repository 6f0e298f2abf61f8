// providers/provider.ts: the Provider interface and the normalised stream events every wire adapter
// (anthropic, openai, gemini, openai-compatible, scripted) produces. The turn runner is the caller.
import type { ProviderName } from '../contracts/session.ts';
import type { RetryNotice } from '../contracts/session-events.ts';
import type { AssistantBlock, Message, ProviderUsage, StopReason } from '../contracts/transcript.ts';
import type { ToolSpec } from '../contracts/tool.ts';

export interface ProviderRequest {
  model: string;
  /** Joined system prompt, or undefined for none. */
  system?: string;
  /** Conversation rows (system rows already folded into `system` by the caller are excluded). */
  messages: Message[];
  tools: ToolSpec[];
  max_tokens: number;
  /** When set, ask the vendor for JSON matching this schema (structured-output extraction). */
  json_schema?: { name: string; schema: Record<string, unknown>; strict: boolean };
  signal: AbortSignal;
}

/** Normalised streaming events, delivered in order while the call runs. */
export type StreamEvent = { type: 'text_delta'; delta: string } | { type: 'reasoning_delta'; delta: string };

export interface ProviderResponse {
  blocks: AssistantBlock[];
  stop_reason: StopReason;
  usage: ProviderUsage;
  /** The model the vendor says answered (it may differ from the one requested), when it says. */
  model?: string;
  /** The vendor's id of this reply (message, response or completion id), when it gives one. */
  id?: string;
}

/** `model` and `id` of a reply when known (the optional fields of ProviderResponse, set only when present). */
export function servedBy(model: string, id: string): Pick<ProviderResponse, 'model' | 'id'> {
  return { ...(model ? { model } : {}), ...(id ? { id } : {}) };
}

/** Retry notice emitted before a backoff sleep (payload of the `retrying` event). */
/** The retry notice schema lives with the `retrying` event (contracts/session-events.ts). */
export type { RetryNotice };

/**
 * A per-session credential chosen by an auth binding (actors/auth): it replaces the environment key and,
 * when the binding's backend profile sets one, the base URL. Never logged.
 */
export interface ProviderCredential {
  secret: string;
  /** native: the vendor's own key header; bearer: `Authorization: Bearer`; azure: the `api-key` header. */
  style: 'native' | 'bearer' | 'azure';
  baseUrl?: string;
}

export interface Provider {
  readonly name: ProviderName;
  /**
   * Runs one model call, streaming events through `onEvent`, and resolves with the full reply.
   * Failures reject with a ServiceError (PROVIDER_ERROR for credentials/auth, AGENT_ERROR otherwise)
   * whose details.error.kind is 'llm_failure' or 'retry_exhausted'.
   */
  call(req: ProviderRequest, onEvent: (e: StreamEvent) => void, onRetry?: (n: RetryNotice) => void): Promise<ProviderResponse>;
  /**
   * The credential or configuration problem a call would fail with (e.g. a missing API key), checked
   * without any network IO, so a create can answer 502 PROVIDER_ERROR before it creates a session.
   */
  preflight?(model: string): Error | undefined;
  close?(): Promise<void>;
}
