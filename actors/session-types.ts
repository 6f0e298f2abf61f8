// actors/session-types.ts: the persisted session state (SessionRecord.state) and the dependencies a
// session actor is built with. Shared by the session files (session-host.ts, -core, -actor, -commands).
import type { ContentInput } from '../contracts/transcript.ts';
import type { AuthBinding } from '../contracts/auth.ts';
import type { ProviderName } from '../providers/provider.ts';
import type { RuntimeDeps } from './supervisor.ts';
import type { TurnToolset } from './turn-runner.ts';

export interface SessionSettings {
  model: string;
  provider: ProviderName;
  max_tokens: number;
  system_prompt_disabled: boolean;
  builtins: boolean;
  shell: boolean;
  keep_alive: boolean;
  comms_name?: string;
  structured_output_retries?: number;
  /** The credential selector (actors/auth): picks the binding's credential and base URL at each turn. */
  auth_binding?: AuthBinding;
}

/** The input of a turn that was accepted but not yet committed (kept for crash diagnosis only). */
export interface PendingInput {
  request_id: string;
  started_at_ms: number;
  prompt: ContentInput;
  transient_turn_context?: string;
}

export interface PersistedState {
  v: 1;
  machine: unknown;
  settings: SessionSettings;
  pending?: PendingInput;
  /** system_context idempotency keys → content fingerprint. */
  sysctx: Record<string, string>;
  /** Keyed system prompt versions. */
  prompts: Record<string, { version: number; message_index: number; content: string }>;
  /** Transcript revision counter (bumped on every transcript write). */
  revision: number;
}

/** What a session actor is built with: the runtime's dependencies plus its tool set factory. */
export interface SessionDeps extends RuntimeDeps {
  buildToolset(sessionId: string, settings: SessionSettings): TurnToolset | null;
}
