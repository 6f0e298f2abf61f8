// http/validation-issues.ts: turns a compiled schema's raw errors into readable issues, one per field:
// a union's branch errors fold into "must be one of ..." naming the allowed values, a missing property is
// reported at its own path ("is required"), and each issue says what was sent. Used by http/validate.ts.

/** One reported schema error: a JSON pointer into the value and a human message. */
export interface ValidationIssue {
  path: string;
  message: string;
}

/** The fields of a typebox (ajv-style) validation error that matter here. */
export interface RawError {
  keyword: string;
  schemaPath: string;
  instancePath: string;
  params: Record<string, unknown>;
  message: string;
}

const MAX_SHOWN_CHARS = 60;

/** The value at a JSON pointer (RFC 6901), or undefined. */
function at(value: unknown, pointer: string): unknown {
  if (pointer === '') return value;
  let cur: unknown = value;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (cur === null || typeof cur !== 'object' || !Object.prototype.hasOwnProperty.call(cur, key)) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/** A short rendering of what was sent. */
function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > MAX_SHOWN_CHARS ? `${text.slice(0, MAX_SHOWN_CHARS)}...` : text;
}

const label = (pointer: string): string => (pointer === '' ? '/' : pointer);

/** Folds the branch errors of the unions at one path into a single sentence. */
function unionMessage(branches: RawError[]): string {
  const consts = branches.filter((b) => b.keyword === 'const').map((b) => JSON.stringify(b.params.allowedValue));
  const types = branches.filter((b) => b.keyword === 'type').map((b) => String(b.params.type));
  const leaves = branches.filter((b) => b.keyword !== 'anyOf' && b.keyword !== 'oneOf');
  if (consts.length > 0 && consts.length + types.length === leaves.length)
    return `must be one of ${[...consts, ...types.map((t) => (t === 'null' ? 'null' : `a ${t}`))].join(', ')}`;
  if (types.length > 0 && types.length === leaves.length) return `must be ${[...new Set(types)].join(' or ')}`;
  const other = leaves.find((b) => b.keyword !== 'type' && b.keyword !== 'const');
  return other ? `${other.message} (or another allowed form)` : 'must match one of the allowed forms';
}

const inUnion = (e: RawError): boolean => e.keyword === 'anyOf' || e.keyword === 'oneOf' || /\/(anyOf|oneOf)\/\d+/.test(e.schemaPath);

/**
 * Readable issues for `value` from the raw errors of one failed check, in the order the fields appear,
 * at most `limit` of them. The errors of the unions at one path (typebox reports each branch, nested
 * unions included) become one issue.
 */
export function readableIssues(value: unknown, raw: Iterable<RawError>, limit: number): ValidationIssue[] {
  const errors = [...raw];
  const unionsAt = new Map<string, RawError[]>();
  for (const e of errors) if (inUnion(e)) unionsAt.set(e.instancePath, [...(unionsAt.get(e.instancePath) ?? []), e]);
  const out: ValidationIssue[] = [];
  const seen = new Set<string>();
  const push = (path: string, message: string): void => {
    const key = `${path} ${message}`;
    if (seen.has(key) || out.length >= limit) return;
    seen.add(key);
    out.push({ path, message });
  };
  const sent = (pointer: string): string => `(got ${shown(at(value, pointer))})`;
  for (const e of errors) {
    if (e.keyword === 'required') {
      const missing = Array.isArray(e.params.requiredProperties) ? e.params.requiredProperties : [];
      for (const name of missing) push(`${e.instancePath}/${String(name)}`, 'is required');
    } else if (e.keyword === 'additionalProperties' && typeof e.params.additionalProperty === 'string') {
      push(`${e.instancePath}/${e.params.additionalProperty}`, 'is not an allowed field');
    } else if (inUnion(e)) {
      push(label(e.instancePath), `${unionMessage(unionsAt.get(e.instancePath) ?? [e])} ${sent(e.instancePath)}`);
    } else {
      push(label(e.instancePath), `${e.message} ${sent(e.instancePath)}`);
    }
  }
  return out;
}

/** One sentence for an error message: every issue as "<path> <message>", joined. */
export function issuesSentence(issues: ValidationIssue[]): string {
  return issues.map((i) => `${i.path} ${i.message}`).join('; ');
}
