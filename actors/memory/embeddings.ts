// actors/memory/embeddings.ts: vector embeddings from the configured endpoint (`[memory.embeddings]`):
// OpenAI-compatible `POST {base_url}/v1/embeddings`, or Gemini `POST {base_url}/v1beta/models/{model}:embedContent`.
// Used by memory-store.ts when indexing and searching; absent config means full-text only. Calls go through
// the app's outbound guard when given (the `[network]` rules: no metadata or denied addresses).
import { isApiKeyEnvName } from '../../contracts/config.ts';

export interface EmbeddingsConfig {
  api: 'openai' | 'gemini';
  base_url: string;
  model: string;
  api_key_env?: string;
}

export type Embedder = (texts: string[], signal?: AbortSignal) => Promise<number[][]>;

const TIMEOUT_MS = 30_000;

async function post(
  fetchImpl: typeof fetch,
  url: string,
  headers: Record<string, string>,
  body: unknown,
  signal?: AbortSignal,
): Promise<unknown> {
  const timeout = AbortSignal.timeout(TIMEOUT_MS);
  const res = await fetchImpl(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
  });
  if (!res.ok) throw new Error(`embeddings endpoint answered ${res.status}`);
  return res.json();
}

function vector(v: unknown): number[] {
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'number')) throw new Error('embeddings endpoint returned no vector');
  return v as number[];
}

/** An embedder for the config, reading the key from the environment at call time. */
export function createEmbedder(cfg: EmbeddingsConfig, env: NodeJS.ProcessEnv, fetchImpl: typeof fetch = fetch): Embedder {
  const base = cfg.base_url.replace(/\/+$/, '');
  const key = () => (cfg.api_key_env && isApiKeyEnvName(cfg.api_key_env) ? env[cfg.api_key_env] : undefined);
  if (cfg.api === 'openai') {
    return async (texts, signal) => {
      const k = key();
      const body = (await post(
        fetchImpl,
        `${base}/v1/embeddings`,
        k ? { authorization: `Bearer ${k}` } : {},
        { model: cfg.model, input: texts },
        signal,
      )) as { data?: Array<{ index?: number; embedding?: unknown }> };
      const data = [...(body.data ?? [])].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
      if (data.length !== texts.length) throw new Error('embeddings endpoint returned the wrong number of vectors');
      return data.map((d) => vector(d.embedding));
    };
  }
  return async (texts, signal) => {
    const k = key();
    const out: number[][] = [];
    for (const text of texts) {
      const body = (await post(
        fetchImpl,
        `${base}/v1beta/models/${encodeURIComponent(cfg.model)}:embedContent`,
        k ? { 'x-goog-api-key': k } : {},
        { content: { parts: [{ text }] } },
        signal,
      )) as { embedding?: { values?: unknown } };
      out.push(vector(body.embedding?.values));
    }
    return out;
  };
}

export function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}
