// contracts/config.ts: the realm Config object (wire-notes §2.8) and the GET/PUT/PATCH /config bodies.
// Every known section is always present after defaults; unknown keys (top level and inside sections)
// are kept so user data is never dropped, but known keys are checked strictly (types and ranges).
// config/toml.ts applies the defaults and validates; config/realm-config.ts serves the envelope.
import { Type, type Static } from 'typebox';
import { AuthSection } from './auth.ts';
import { ClusterSection, StorageSection } from './cluster.ts';
import { McpPolicySection, RestAuthMode } from './inbound-auth.ts';
import { McpServerConfig } from './mcp.ts';
import { MobSection } from './mob.ts';
import { BudgetSection, DurationValue, HooksSection } from './turn-features.ts';
import { ExtensionsSection, WebhookConfigEntry } from './webhooks.ts';

/**
 * The names `api_key_env` may take (docs/providers.md "Provider keys"): `<ANYTHING>_API_KEY` or `WARREN_<ANYTHING>`.
 * A config writer picks which variable is sent to a provider's host, so `HOME`, `PATH`,
 * `AWS_SECRET_ACCESS_KEY` and other non-key variables are refused at write, at load and at use.
 */
export const API_KEY_ENV_PATTERN = '^(?:[A-Z][A-Z0-9_]*_API_KEY|WARREN_[A-Z0-9_]+)$';
const apiKeyEnvRe = new RegExp(API_KEY_ENV_PATTERN);
/** True when `name` may be read as a provider key. */
export function isApiKeyEnvName(name: string): boolean {
  return apiKeyEnvRe.test(name);
}
const ApiKeyEnv = Type.String({ minLength: 1, pattern: API_KEY_ENV_PATTERN });

/** A section: an object with defaults for its known keys that keeps any extra keys the user wrote. */
const sectionOptions = { default: {}, additionalProperties: true } as const;
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

const RestSection = Type.Object(
  {
    host: Type.String({ minLength: 1, default: '127.0.0.1' }),
    port: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
    /** `Host` names accepted besides loopback (`name` any port, or `name:port`); docs/browser-and-outbound.md. */
    allowed_hosts: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
    /** Origins (`https://name[:port]`) whose pages may call Warren besides its own. */
    allowed_origins: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
    /** Inbound API keys: "off" or "required"; unset means off on a loopback host, required elsewhere (SECURITY.md). */
    auth: Type.Optional(RestAuthMode),
  },
  sectionOptions,
);

const AgentSection = Type.Object(
  {
    /** '' selects the model catalog's default model. */
    model: Type.String({ default: '' }),
    max_tokens_per_turn: Type.Integer({ minimum: 1, default: 16384 }),
    system_prompt: Type.Optional(Type.String()),
    structured_output_retries: Type.Integer({ minimum: 0, maximum: 100, default: 2 }),
    budget_warning_threshold: Type.Number({ minimum: 0, maximum: 1, default: 0.8 }),
    /** Replaces the built-in extraction instruction of structured output. */
    extraction_prompt: Type.Optional(Type.String({ minLength: 1 })),
  },
  sectionOptions,
);

const ToolsSection = Type.Object(
  {
    builtins_enabled: Type.Boolean({ default: false }),
    shell_enabled: Type.Boolean({ default: false }),
    schedule_enabled: Type.Boolean({ default: true }),
    workgraph_enabled: Type.Boolean({ default: false }),
    comms_enabled: Type.Boolean({ default: false }),
    mob_enabled: Type.Boolean({ default: false }),
    default_timeout_secs: Type.Number({ exclusiveMinimum: 0, default: 600 }),
    max_concurrent: Type.Integer({ minimum: 1, default: 10 }),
    /** MCP tool servers every session connects to (contracts/mcp.ts). */
    mcp_servers: Type.Array(McpServerConfig, { default: [] }),
  },
  sectionOptions,
);

const ShellSection = Type.Object(
  {
    program: Type.String({ minLength: 1, default: 'bash' }),
    timeout_secs: Type.Number({ exclusiveMinimum: 0, default: 30 }),
    max_output_chars: Type.Integer({ minimum: 1, default: 100000 }),
  },
  sectionOptions,
);

const RetrySection = Type.Object(
  {
    max_retries: Type.Integer({ minimum: 0, default: 3 }),
    initial_delay_ms: Type.Integer({ minimum: 0, default: 500 }),
    max_delay_ms: Type.Integer({ minimum: 0, default: 30000 }),
    multiplier: Type.Number({ minimum: 1, default: 2 }),
  },
  sectionOptions,
);

/** One git repository of skills: cloned into the realm with the system git (actors/skills/git-source.ts). */
const SkillRepository = Type.Object(
  {
    url: Type.String({ minLength: 1 }),
    /** Branch or tag to check out; default: the remote's default branch. */
    ref: Type.Optional(Type.String({ minLength: 1 })),
    /** Display name of the source; default: the URL. */
    name: Type.Optional(Type.String({ minLength: 1 })),
  },
  { additionalProperties: false },
);

const SkillsSection = Type.Object(
  {
    enabled: Type.Boolean({ default: true }),
    /** Upper bound of the skill text one turn injects (skill_context blocks). */
    max_injection_bytes: Type.Integer({ minimum: 1, default: 32768 }),
    repositories: Type.Array(Type.Union([Type.String({ minLength: 1 }), SkillRepository]), { default: [] }),
  },
  sectionOptions,
);

/** Context compaction (actors/compaction*.ts). Unset thresholds are model-aware. */
const CompactionSection = Type.Object(
  {
    enabled: Type.Boolean({ default: true }),
    /** Tokens; unset = 4/5 of the model's catalog context window (fallback 100,000). */
    auto_compact_threshold: Type.Optional(Type.Integer({ minimum: 1 })),
    /** Provider request byte capacity; a request at 4/5 of it compacts (bypassing the turn guard). */
    max_request_bytes: Type.Optional(Type.Integer({ minimum: 1 })),
    recent_turn_budget: Type.Integer({ minimum: 0, default: 4 }),
    max_summary_tokens: Type.Integer({ minimum: 1, default: 4096 }),
    min_turns_between_compactions: Type.Integer({ minimum: 0, default: 3 }),
  },
  sectionOptions,
);

/** Semantic memory (actors/memory/*): optional embeddings endpoint for vector search. */
const MemorySection = Type.Object(
  {
    /** Default of `enable_memory` when a create request leaves it null. */
    enabled_by_default: Type.Boolean({ default: false }),
    embeddings: Type.Optional(
      Type.Object(
        {
          /** `openai`: POST {base_url}/v1/embeddings; `gemini`: POST {base_url}/v1beta/models/{model}:embedContent. */
          api: Type.Union([Type.Literal('openai'), Type.Literal('gemini')]),
          base_url: Type.String({ minLength: 1 }),
          model: Type.String({ minLength: 1 }),
          /** Environment variable holding the key (sent as Bearer / x-goog-api-key); none = no key. */
          api_key_env: Type.Optional(ApiKeyEnv),
        },
        { additionalProperties: false },
      ),
    ),
  },
  sectionOptions,
);

const LimitsSection = Type.Object(
  {
    max_sessions: Type.Integer({ minimum: 1, default: 100000 }),
    max_body_bytes: Type.Integer({ minimum: 1, default: 4194304 }),
    /** Longest one model call of a run may take (unset: unlimited). */
    max_turn_duration: Type.Optional(DurationValue),
    /** Deepest nesting of arrays/objects a JSON request body may have (storage refuses beyond 1,000). */
    max_json_depth: Type.Integer({ minimum: 1, maximum: 512, default: 64 }),
  },
  sectionOptions,
);

/**
 * `[ledger]`: how much of each session's event ledger is kept (docs/http-api.md "Event ledger retention"). A
 * committed turn's text deltas are dropped (its text_complete carries the text) unless keep_text_deltas; the
 * oldest entries go once a session has more than max_entries_per_session seqs or they are older than
 * max_age_days (0 disables either bound).
 */
const LedgerSection = Type.Object(
  {
    max_entries_per_session: Type.Integer({ minimum: 0, default: 10000 }),
    max_age_days: Type.Number({ minimum: 0, default: 30 }),
    /** Keep a committed turn's text deltas (a lossless delta-by-delta replay, at ~10x the bytes). */
    keep_text_deltas: Type.Boolean({ default: false }),
  },
  sectionOptions,
);

/** `[comms]`: inbox bound, the TCP comms listener and the Warren processes trusted as peers. */
const CommsSection = Type.Object(
  {
    /** Admitted inputs a session's inbox holds before admissions answer 503 (webhooks) or fail (sends). */
    inbox_capacity: Type.Integer({ minimum: 1, default: 1024 }),
    /** `host:port` of the TCP comms listener (port 0 picks one); omitted: no listener. */
    listen: Type.Optional(Type.String({ minLength: 1 })),
    /** `host:port` other processes reach this one at (default: the listener's bound address). */
    advertise_address: Type.Optional(Type.String({ minLength: 1 })),
    /** Other Warren processes this one exchanges comms with (both directions), by listener address. */
    trusted_peers: Type.Array(Type.Object({ name: Type.String({ minLength: 1 }), address: Type.String({ minLength: 1 }) }), {
      default: [],
    }),
    /** Taint declared on outbound content when a send does not override it. */
    outbound_taint: Type.Union([Type.Literal('undeclared'), Type.Literal('clean'), Type.Literal('tainted')], { default: 'undeclared' }),
    /** Connect and reply timeout of a TCP peer call (ms). */
    peer_timeout_ms: Type.Integer({ minimum: 1, default: 5000 }),
  },
  sectionOptions,
);

/**
 * `[network]`: outbound connections Warren makes for requests (webhooks, MCP url servers, OAuth endpoints,
 * provider base_url), checked on the resolved address (actors/net/outbound-guard.ts). Link-local and cloud
 * metadata ranges are always denied unless `allow_cidrs` opens them; `deny_cidrs` adds ranges (e.g. loopback).
 */
/** An address range: `a.b.c.d/n`, `x::/n`, or one address. */
const Cidr = Type.String({
  minLength: 2,
  pattern: '^(?:[0-9]{1,3}(?:\\.[0-9]{1,3}){3}(?:/[0-9]{1,2})?|[0-9a-fA-F:]*:[0-9a-fA-F:.]*(?:/[0-9]{1,3})?)$',
});

const NetworkSection = Type.Object(
  {
    deny_cidrs: Type.Array(Cidr, { default: [] }),
    allow_cidrs: Type.Array(Cidr, { default: [] }),
  },
  sectionOptions,
);

/** Remote A2A agent names are the tool namespace (`a2a__<name>`): letters, digits, `-` and single `_`. */
const A2A_REMOTE_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_)){0,47}$/;

/**
 * One `[a2a.remotes.<name>]`: a remote A2A agent sessions may call as the tool `a2a__<name>`
 * (actors/protocols/a2a/a2a-remotes.ts). `url`: the agent's base URL (its card at
 * /.well-known/agent-card.json) or the card's own URL (ending in .json). `auth_env`: the variable the
 * secret is read from at each call (never stored), sent as `Authorization: Bearer <secret>`, or raw in
 * `auth_header` when that names another header.
 */
const A2aRemote = Type.Object(
  {
    url: Type.String({ minLength: 8, maxLength: 2048, pattern: '^https?://' }),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    auth_env: Type.Optional(ApiKeyEnv),
    auth_header: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9-]+$' })),
    timeout_secs: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 3600 })),
  },
  { additionalProperties: false },
);
export type A2aRemote = Static<typeof A2aRemote>;

const A2aSection = Type.Object(
  { remotes: Type.Optional(Type.Record(Type.String({ pattern: A2A_REMOTE_NAME.source }), A2aRemote)) },
  { additionalProperties: true },
);

/** Per-provider settings; free-form apart from the keys Warren reads. */
const ProviderSettings = Type.Object(
  {
    base_url: Type.Optional(Type.String({ minLength: 1 })),
    api_key_env: Type.Optional(ApiKeyEnv),
    timeout_secs: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
    /** false: structured output asks this provider by prompt only (a server without a JSON-schema slot). */
    native_json_schema: Type.Optional(Type.Boolean()),
    /** Context window (tokens) of this provider's models when the catalog does not know them (compaction threshold). */
    context_window: Type.Optional(Type.Integer({ minimum: 1 })),
    /** Scripted provider only: the replies it plays back. */
    replies: Type.Optional(Type.Array(Type.Unknown())),
    mode: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);
type ProviderSettings = Static<typeof ProviderSettings>;

export const Config = Type.Object(
  {
    rest: RestSection,
    agent: AgentSection,
    tools: ToolsSection,
    shell: ShellSection,
    retry: RetrySection,
    skills: SkillsSection,
    compaction: CompactionSection,
    memory: MemorySection,
    limits: LimitsSection,
    /** Per-run budgets and hooks (contracts/turn-features.ts). */
    budget: BudgetSection,
    hooks: HooksSection,
    ledger: LedgerSection,
    comms: CommsSection,
    providers: Type.Record(Type.String(), ProviderSettings, { default: {} }),
    /** Outbound URL rules (docs/browser-and-outbound.md). */
    network: NetworkSection,
    /** Outbound credentials (contracts/auth.ts): refresh window, login lifetime, OAuth providers. */
    auth: Type.Optional(AuthSection),
    /** Signed outbound webhooks (contracts/webhooks.ts; a Warren extension). */
    webhooks: Type.Optional(Type.Array(WebhookConfigEntry)),
    /** Tuning of Warren's extensions: webhook delivery, detached turns (contracts/webhooks.ts). */
    extensions: Type.Optional(ExtensionsSection),
    /** The postgres backend's database and multi-node ownership (contracts/cluster.ts). */
    storage: Type.Optional(StorageSection),
    cluster: Type.Optional(ClusterSection),
    /** Mobs: structural event ledger retention (contracts/mob.ts). */
    mob: Type.Optional(MobSection),
    /** Which stdio MCP commands requests may start when API keys are on (contracts/inbound-auth.ts). */
    mcp: Type.Optional(McpPolicySection),
    /** Remote A2A agents as tools (docs/protocols.md). */
    a2a: Type.Optional(A2aSection),
    /** Top-level output cap kept for compatibility with the reference config (omitted when unset). */
    max_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { $id: 'Config', additionalProperties: true },
);
export type Config = Static<typeof Config>;

/** Filesystem locations of a realm, shown in the envelope only with `--expose-paths`. */
const ResolvedPaths = Type.Object({
  root: Type.String(),
  manifest_path: Type.String(),
  config_path: Type.String(),
  config_state_path: Type.String(),
  store_dir: Type.String(),
});
type ResolvedPaths = Static<typeof ResolvedPaths>;

/** GET /config, and the reply of PUT/PATCH /config. realm_id/instance_id/backend are present even when null. */
export const ConfigEnvelope = Type.Object(
  {
    config: Config,
    generation: Type.Integer({ minimum: 0 }),
    realm_id: Nullable(Type.String()),
    instance_id: Nullable(Type.String()),
    backend: Nullable(Type.String()),
    resolved_paths: Type.Optional(ResolvedPaths),
  },
  { $id: 'ConfigEnvelope' },
);
export type ConfigEnvelope = Static<typeof ConfigEnvelope>;

/** Compare-and-set guard: omitted or null means "no check". */
const ExpectedGeneration = Type.Optional(Nullable(Type.Integer({ minimum: 0 })));

/** Any JSON object; the full check (defaults, types, ranges) happens in config/realm-config.ts. */
const AnyObject = Type.Object({}, { additionalProperties: true });

/**
 * PUT /config body: a direct Config object, or `{config, expected_generation?}`. A body with a `config`
 * member is the wrapped form (wire-notes §11 item 18); other members of it are ignored (SPEC.md "Versioning").
 */
export const ConfigPutBody = Type.Union(
  [Type.Object({ config: AnyObject, expected_generation: ExpectedGeneration }, { additionalProperties: false }), AnyObject],
  { $id: 'ConfigPutBody' },
);
export type ConfigPutBody = Static<typeof ConfigPutBody>;

/** PATCH /config body: a direct RFC 7396 merge patch, or `{patch, expected_generation?}` (same rule). */
export const ConfigPatchBody = Type.Union(
  [Type.Object({ patch: AnyObject, expected_generation: ExpectedGeneration }, { additionalProperties: false }), AnyObject],
  { $id: 'ConfigPatchBody' },
);
export type ConfigPatchBody = Static<typeof ConfigPatchBody>;
