// http/json-depth.ts: the nesting depth of a JSON text, measured before it is parsed (http/router.ts), so
// that no recursive walk after the parser (validation, copying, hashing, the store's encoder) ever sees a
// value deeper than the configured `[limits] max_json_depth`.

/**
 * True when `text` opens more than `max` nested arrays/objects at some point. A linear scan that skips
 * string contents (with escapes); malformed JSON is left to JSON.parse.
 */
export function jsonDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > max) return true;
    } else if (c === 93 /* ] */ || c === 125 /* } */) depth--;
  }
  return false;
}
