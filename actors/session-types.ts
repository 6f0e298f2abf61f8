// actors/session-types.ts: the persisted session state (SessionRecord.state) and the dependencies a
// session actor is built with. Shared by supervisor.ts, session-actor.ts and session-commands.ts.
import type { Logger } from 'pino';
import type { ContentInput } from '../contracts/transcript.ts';
import type { Config } from '../contracts/config.ts';
import type { Provider, ProviderName } from '../providers/provider.ts';
import type { Store } from '../storage/store.ts';
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

export interface ProviderResolver {
  resolve(model?: string | null, provider?: string | null): { provider: Provider; name: ProviderName; model: string };
}

export interface SessionDeps {
  store: Store;
  log: Logger;
  realmId: string;
  contextRoot: string;
  providers: ProviderResolver;
  config(): Config;
  buildToolset(sessionId: string, flags: { builtins: boolean; shell: boolean }): TurnToolset | null;
  now(): number;
}
