// providers/catalog.ts: the compiled-in model catalog (wire-notes section 3) served by
// GET /models/catalog, plus model → provider inference and per-model call timeouts.
// Callers: the catalog handler, providers/registry.ts and providers/wire-call.ts.
import type { ProviderName } from '../contracts/session.ts';

/** Version of the catalog body; a string per SPEC.md (wire-notes section 10, item 3). */
export const CATALOG_CONTRACT_VERSION = '0.1.0';

export type CatalogProviderName = 'anthropic' | 'gemini' | 'openai';

interface ModelProfile {
  model_family: string;
  supports_temperature: boolean;
  supports_thinking: boolean;
  supports_reasoning: boolean;
  supports_web_search: boolean;
  vision: boolean;
  image_tool_results: boolean;
  inline_video: boolean;
  realtime: boolean;
  /** JSON Schema of the model's `provider_params`. */
  params_schema: Record<string, unknown>;
}

export interface CatalogModel {
  id: string;
  display_name: string;
  tier: 'recommended' | 'supported';
  context_window: number;
  max_output_tokens: number;
  profile: ModelProfile;
}

interface CatalogProvider {
  provider: CatalogProviderName;
  default_model_id: string;
  models: CatalogModel[];
}

export interface ModelCatalog {
  contract_version: string;
  providers: CatalogProvider[];
}

type Thinking = 'adaptive' | 'adaptive+enabled' | 'enabled' | 'reasoning' | 'realtime' | 'level';

interface Row {
  id: string;
  name: string;
  tier: 'recommended' | 'supported';
  ctx: number;
  out: number;
  family: string;
  thinking: Thinking;
  timeoutSecs: number;
}

const M = 1_000_000;
const ANTHROPIC: Row[] = [
  {
    id: 'claude-fable-5',
    name: 'Claude Fable 5',
    tier: 'recommended',
    ctx: M,
    out: 128_000,
    family: 'claude-fable-5',
    thinking: 'adaptive',
    timeoutSecs: 300,
  },
  {
    id: 'claude-opus-5',
    name: 'Claude Opus 5',
    tier: 'recommended',
    ctx: M,
    out: 128_000,
    family: 'claude-opus-5',
    thinking: 'adaptive',
    timeoutSecs: 300,
  },
  {
    id: 'claude-opus-4-8',
    name: 'Claude Opus 4.8',
    tier: 'recommended',
    ctx: M,
    out: 128_000,
    family: 'claude-opus-4',
    thinking: 'adaptive',
    timeoutSecs: 300,
  },
  {
    id: 'claude-opus-4-7',
    name: 'Claude Opus 4.7',
    tier: 'supported',
    ctx: M,
    out: 128_000,
    family: 'claude-opus-4',
    thinking: 'adaptive',
    timeoutSecs: 300,
  },
  {
    id: 'claude-sonnet-4-6',
    name: 'Claude Sonnet 4.6',
    tier: 'recommended',
    ctx: M,
    out: 64_000,
    family: 'claude-sonnet-4',
    thinking: 'adaptive+enabled',
    timeoutSecs: 120,
  },
  {
    id: 'claude-sonnet-4-5',
    name: 'Claude Sonnet 4.5',
    tier: 'supported',
    ctx: 200_000,
    out: 64_000,
    family: 'claude-sonnet-4',
    thinking: 'enabled',
    timeoutSecs: 120,
  },
  {
    id: 'claude-haiku-4-5-20251001',
    name: 'Claude Haiku 4.5',
    tier: 'recommended',
    ctx: 200_000,
    out: 64_000,
    family: 'claude-haiku-4',
    thinking: 'enabled',
    timeoutSecs: 60,
  },
  {
    id: 'claude-haiku-4-5',
    name: 'Claude Haiku 4.5',
    tier: 'recommended',
    ctx: 200_000,
    out: 64_000,
    family: 'claude-haiku-4',
    thinking: 'enabled',
    timeoutSecs: 60,
  },
  {
    id: 'claude-opus-4-5',
    name: 'Claude Opus 4.5',
    tier: 'supported',
    ctx: 200_000,
    out: 64_000,
    family: 'claude-opus-4',
    thinking: 'enabled',
    timeoutSecs: 300,
  },
];
const GEMINI: Row[] = [
  {
    id: 'gemini-3.5-flash',
    name: 'Gemini 3.5 Flash',
    tier: 'recommended',
    ctx: 1_048_576,
    out: 65_536,
    family: 'gemini-3',
    thinking: 'level',
    timeoutSecs: 120,
  },
  {
    id: 'gemini-3.1-pro-preview',
    name: 'Gemini 3.1 Pro Preview',
    tier: 'supported',
    ctx: 1_048_576,
    out: 65_536,
    family: 'gemini-3',
    thinking: 'level',
    timeoutSecs: 600,
  },
  {
    id: 'gemini-3.1-flash-lite-preview',
    name: 'Gemini 3.1 Flash Lite Preview',
    tier: 'supported',
    ctx: 1_048_576,
    out: 65_536,
    family: 'gemini-3',
    thinking: 'level',
    timeoutSecs: 120,
  },
];
const GPT = 1_050_000;
const OPENAI: Row[] = [
  {
    id: 'gpt-5.6-sol',
    name: 'GPT-5.6 Sol',
    tier: 'supported',
    ctx: GPT,
    out: 128_000,
    family: 'gpt-5',
    thinking: 'reasoning',
    timeoutSecs: 600,
  },
  {
    id: 'gpt-5.6-terra',
    name: 'GPT-5.6 Terra',
    tier: 'supported',
    ctx: GPT,
    out: 128_000,
    family: 'gpt-5',
    thinking: 'reasoning',
    timeoutSecs: 600,
  },
  {
    id: 'gpt-5.6-luna',
    name: 'GPT-5.6 Luna',
    tier: 'supported',
    ctx: GPT,
    out: 128_000,
    family: 'gpt-5',
    thinking: 'reasoning',
    timeoutSecs: 600,
  },
  // An alias of gpt-5.6-sol, listed under its own id.
  {
    id: 'gpt-5.6',
    name: 'GPT-5.6 Sol',
    tier: 'supported',
    ctx: GPT,
    out: 128_000,
    family: 'gpt-5',
    thinking: 'reasoning',
    timeoutSecs: 600,
  },
  { id: 'gpt-5.5', name: 'GPT-5.5', tier: 'recommended', ctx: GPT, out: 128_000, family: 'gpt-5', thinking: 'reasoning', timeoutSecs: 600 },
  {
    id: 'gpt-5.5-pro',
    name: 'GPT-5.5 Pro',
    tier: 'recommended',
    ctx: GPT,
    out: 128_000,
    family: 'gpt-5',
    thinking: 'reasoning',
    timeoutSecs: 7200,
  },
  { id: 'gpt-5.4', name: 'GPT-5.4', tier: 'supported', ctx: GPT, out: 128_000, family: 'gpt-5', thinking: 'reasoning', timeoutSecs: 600 },
  {
    id: 'gpt-5.4-mini',
    name: 'GPT-5.4 Mini',
    tier: 'supported',
    ctx: 128_000,
    out: 16_384,
    family: 'gpt-5',
    thinking: 'reasoning',
    timeoutSecs: 600,
  },
  {
    id: 'gpt-5.3-codex',
    name: 'GPT-5.3 Codex',
    tier: 'supported',
    ctx: 400_000,
    out: 128_000,
    family: 'codex',
    thinking: 'reasoning',
    timeoutSecs: 600,
  },
  {
    id: 'gpt-realtime-2',
    name: 'GPT Realtime 2',
    tier: 'recommended',
    ctx: 128_000,
    out: 32_000,
    family: 'gpt-realtime',
    thinking: 'realtime',
    timeoutSecs: 600,
  },
];

const DEFAULTS: Record<CatalogProviderName, string> = {
  anthropic: 'claude-opus-5',
  gemini: 'gemini-3.5-flash',
  openai: 'gpt-5.6-sol',
};
const ORDER: Array<[CatalogProviderName, Row[]]> = [
  ['anthropic', ANTHROPIC],
  ['gemini', GEMINI],
  ['openai', OPENAI],
];
const DEFAULT_CALL_TIMEOUT_MS = 600_000;

function paramsSchema(thinking: Thinking): Record<string, unknown> {
  const props: Record<string, unknown> = { temperature: { type: 'number', minimum: 0, maximum: 2 } };
  if (thinking === 'adaptive' || thinking === 'adaptive+enabled' || thinking === 'enabled') {
    const types = thinking === 'adaptive' ? ['adaptive'] : thinking === 'enabled' ? ['enabled'] : ['adaptive', 'enabled'];
    props.thinking = {
      type: 'object',
      properties: { type: { enum: types }, budget_tokens: { type: 'integer', minimum: 1024 } },
      required: ['type'],
    };
  } else if (thinking === 'reasoning') {
    props.reasoning_effort = { enum: ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'] };
  } else if (thinking === 'level') {
    props.thinking_level = { enum: ['minimal', 'low', 'medium', 'high'] };
  }
  return { type: 'object', properties: props, additionalProperties: false };
}

function profile(provider: CatalogProviderName, r: Row): ModelProfile {
  const openaiText = provider === 'openai' && r.thinking !== 'realtime';
  const opusLike = r.family.startsWith('claude-opus') || r.family.startsWith('claude-fable');
  return {
    model_family: r.family,
    supports_temperature: !(opusLike || openaiText),
    supports_thinking: provider !== 'openai',
    supports_reasoning: openaiText,
    supports_web_search: r.family !== 'codex' && r.thinking !== 'realtime',
    vision: true,
    image_tool_results: r.thinking !== 'realtime',
    inline_video: provider === 'gemini',
    realtime: r.thinking === 'realtime',
    params_schema: paramsSchema(r.thinking),
  };
}

const CATALOG: ModelCatalog = {
  contract_version: CATALOG_CONTRACT_VERSION,
  providers: ORDER.map(([provider, rows]) => ({
    provider,
    default_model_id: DEFAULTS[provider],
    models: rows.map((r) => ({
      id: r.id,
      display_name: r.name,
      tier: r.tier,
      context_window: r.ctx,
      max_output_tokens: r.out,
      profile: profile(provider, r),
    })),
  })),
};

const BY_ID = new Map<string, { provider: CatalogProviderName; model: CatalogModel; timeoutMs: number }>();
for (const [provider, rows] of ORDER) {
  const entry = CATALOG.providers.find((p) => p.provider === provider);
  rows.forEach((r, i) => BY_ID.set(r.id, { provider, model: entry!.models[i], timeoutMs: r.timeoutSecs * 1000 }));
}

/** The catalog body of GET /models/catalog (a fresh copy each call). */
export function modelCatalog(): ModelCatalog {
  return structuredClone(CATALOG);
}

/** The global default model (wire-notes section 3). */
export function defaultModel(): string {
  return 'gpt-5.6-sol';
}

/** The default model of a catalogued provider. */
export function defaultModelFor(provider: CatalogProviderName): string {
  return DEFAULTS[provider];
}

/** A catalogued model with its provider, or undefined. */
export function findModel(id: string): (CatalogModel & { provider: CatalogProviderName }) | undefined {
  const hit = BY_ID.get(id);
  return hit ? { ...structuredClone(hit.model), provider: hit.provider } : undefined;
}

/** The provider of `model`: catalog first, then the prefixes claude-, gpt-/o1/o3/o4-, gemini-. */
export function inferProvider(model: string): ProviderName | undefined {
  const hit = BY_ID.get(model);
  if (hit) return hit.provider;
  if (model.startsWith('claude-')) return 'anthropic';
  if (model.startsWith('gemini-')) return 'gemini';
  if (model.startsWith('gpt-') || /^o[134](?:$|-)/.test(model)) return 'openai';
  return undefined;
}

/** Per-model call deadline from the catalog (600 s for models it does not list). */
export function modelCallTimeoutMs(model: string): number {
  return BY_ID.get(model)?.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
}
