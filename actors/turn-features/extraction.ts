// actors/turn-features/extraction.ts: structured-output extraction, run after a turn's text is
// committed. Each attempt pushes an instruction as a user row, calls the model with no tools and the
// schema in the vendor's native slot (prompt-only where there is none), strips fences, parses and
// validates; a failed attempt is retried with the validation error fed back, up to retries + 1 attempts.
import type { ValidateFunction } from 'ajv';
import { isServiceError } from '../../contracts/errors.ts';
import type { AssistantBlock, Message } from '../../contracts/transcript.ts';
import type { ProviderUsage } from '../../contracts/transcript.ts';
import type { Provider, ProviderRequest } from '../../providers/provider.ts';
import { validationMessage } from './output-schema.ts';

const DEFAULT_EXTRACTION_PROMPT =
  'Provide the final output as valid JSON matching the required schema. Output ONLY the JSON, no additional text or markdown formatting.';

export interface ExtractionRequest {
  provider: Provider;
  model: string;
  maxTokens: number;
  system?: string;
  /** The conversation so far (committed turn included), as the provider sees it. */
  messages: Message[];
  /** The caller's full schema (prompt-only instructions show it) and its validator. */
  schema: Record<string, unknown>;
  validate: ValidateFunction;
  name: string;
  /** The schema as the vendor slot takes it; undefined means prompt-only extraction. */
  slot?: { schema: Record<string, unknown>; strict: boolean };
  retries: number;
  instruction?: string;
  /** The committed assistant text extraction transforms (reported as `last_output` on failure). */
  committedText: string;
  signal: AbortSignal;
  now(): string;
}

export interface ExtractionOutcome {
  /** Instruction and reply rows, in order, to commit after the turn's rows. */
  rows: Message[];
  /** Model calls made (each attempt is one). */
  turns: number;
  usage: ProviderUsage;
  value?: { structured_output: unknown };
  error?: { last_output: string; attempts: number; reason: string };
}

/** Removes one surrounding markdown code fence (```json ... ```), if any. */
export function stripFences(text: string): string {
  const t = text.trim();
  const m = /^```[A-Za-z0-9_-]*[ \t]*\r?\n([\s\S]*?)\r?\n?```$/.exec(t);
  return m ? m[1].trim() : t;
}

function textOf(blocks: AssistantBlock[]): string {
  let s = '';
  for (const b of blocks) if (b.block_type === 'text') s += b.data.text;
  return s;
}

/** Parses and validates one reply; a value wrapped in `{ <name>: value }` is unwrapped when only that fits. */
function check(text: string, validate: ValidateFunction, name: string): { ok: true; value: unknown } | { ok: false; reason: string } {
  let value: unknown;
  try {
    value = JSON.parse(stripFences(text));
  } catch (err) {
    return { ok: false, reason: `the output is not valid JSON (${err instanceof Error ? err.message : String(err)})` };
  }
  if (validate(value)) return { ok: true, value };
  const reason = `the output does not match the schema: ${validationMessage(validate)}`;
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const keys = Object.keys(value);
    const inner = (value as Record<string, unknown>)[name];
    if (keys.length === 1 && keys[0] === name && validate(inner)) return { ok: true, value: inner };
  }
  return { ok: false, reason };
}

/** Runs the extraction attempts. Provider failures end it as an extraction error, never as a thrown error. */
export async function extract(req: ExtractionRequest): Promise<ExtractionOutcome> {
  const rows: Message[] = [];
  const usage: ProviderUsage = { input_tokens: 0, output_tokens: 0 };
  const attempts = req.retries + 1;
  let instruction = req.instruction ?? DEFAULT_EXTRACTION_PROMPT;
  if (!req.slot) instruction += `\n\nThe JSON must match this JSON Schema:\n${JSON.stringify(req.schema)}`;
  let reason = 'no attempt was made';
  for (let attempt = 1; attempt <= attempts; attempt++) {
    rows.push({ role: 'user', content: instruction, created_at: req.now() });
    const call: ProviderRequest = {
      model: req.model,
      system: req.system,
      messages: req.messages.concat(rows),
      tools: [],
      max_tokens: req.maxTokens,
      signal: req.signal,
      ...(req.slot ? { json_schema: { name: req.name, schema: req.slot.schema, strict: req.slot.strict } } : {}),
    };
    let text: string;
    try {
      const reply = await req.provider.call(call, () => {});
      usage.input_tokens += reply.usage.input_tokens;
      usage.output_tokens += reply.usage.output_tokens;
      rows.push({ role: 'block_assistant', blocks: reply.blocks, stop_reason: reply.stop_reason, created_at: req.now() });
      text = textOf(reply.blocks);
    } catch (err) {
      // The instruction row without its reply is not kept; what was committed stays the answer.
      rows.pop();
      const what = req.signal.aborted ? 'the run was interrupted' : isServiceError(err) ? `${err.code}: ${err.message}` : String(err);
      return {
        rows,
        turns: attempt,
        usage,
        error: { last_output: req.committedText, attempts: attempt, reason: `extraction call failed: ${what}` },
      };
    }
    const result = check(text, req.validate, req.name);
    if (result.ok) return { rows, turns: attempt, usage, value: { structured_output: result.value } };
    reason = result.reason;
    instruction = `The previous output was invalid: ${reason}. Please provide valid JSON matching the schema. Output ONLY the JSON, no additional text.`;
  }
  return { rows, turns: attempts, usage, error: { last_output: req.committedText, attempts, reason } };
}
