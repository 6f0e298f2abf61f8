// http/json-depth.ts: the nesting depth of a JSON text, measured before it is parsed (http/router.ts), so
// that no recursive walk after the parser (validation, copying, hashing, the store's encoder) ever sees a
// value deeper than the configured `[limits] max_json_depth`. parseJsonText is the one parse of request
// JSON: the router's bodies, JSON-RPC over POST /rpc and WebSocket frames all go through it.
import { ServiceError } from '../contracts/errors.ts';

/**
 * True when `text` opens more than `max` nested arrays/objects at some point. A linear scan that skips
 * string contents (with escapes); malformed JSON is left to JSON.parse.
 */
function jsonDeeperThan(text: string, max: number): boolean {
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

/** The limits every JSON the server parses goes through (`[limits] max_json_depth` and `max_body_bytes`). */
export interface JsonLimits {
  maxDepth: number;
  maxBytes: number;
}

/**
 * The one JSON parse of request input (HTTP bodies, JSON-RPC messages over POST /rpc, WebSocket frames):
 * refuses a text over `maxBytes` (413 PAYLOAD_TOO_LARGE) or nested deeper than `maxDepth` (400, checked
 * before parsing, so nothing recursive ever sees it), and malformed JSON (400).
 */
export function parseJsonText(text: string, limits: JsonLimits, what = 'JSON text'): unknown {
  if (text.length > limits.maxBytes && Buffer.byteLength(text) > limits.maxBytes) {
    throw new ServiceError('PAYLOAD_TOO_LARGE', `${what} exceeds ${limits.maxBytes} bytes (limits.max_body_bytes)`, {
      max_bytes: limits.maxBytes,
    });
  }
  if (jsonDeeperThan(text, limits.maxDepth)) {
    throw new ServiceError('BAD_REQUEST', `${what} is nested deeper than ${limits.maxDepth} levels (limits.max_json_depth)`, {
      max_json_depth: limits.maxDepth,
    });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new ServiceError('BAD_REQUEST', `malformed JSON: ${(err as Error).message}`);
  }
}
