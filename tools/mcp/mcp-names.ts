// tools/mcp/mcp-names.ts: the tool namespace of MCP servers. Every MCP tool is offered to the model as
// `mcp__<server>__<tool>`; server names never contain `__` (contracts/mcp.ts MCP_SERVER_NAME), so two
// servers can never produce the same name, and none collides with a builtin (no builtin has `__`).
import { createHash } from 'node:crypto';
import { MCP_SERVER_NAME } from '../../contracts/mcp.ts';

const MCP_TOOL_PREFIX = 'mcp__';
/** Provider tool-name limit (Anthropic and OpenAI both accept [A-Za-z0-9_-]{1,64}). */
const MAX_TOOL_NAME = 64;
/** Longest server name, so that the prefix, separator and some of the tool name always fit. */
const MAX_SERVER_NAME = 32;

/** Why a server name is unusable, or null when it is fine. */
export function serverNameProblem(name: string): string | null {
  if (name.trim() === '') return 'server name must not be empty';
  if (name.length > MAX_SERVER_NAME) return `server name '${name}' is longer than ${MAX_SERVER_NAME} characters`;
  if (!MCP_SERVER_NAME.test(name)) return `server name '${name}' may hold only letters, digits, '-' and single '_'`;
  return null;
}

/**
 * The model-facing name of `tool` on `server`. A tool name that is not already provider-safe, or that
 * would overflow the limit, is rewritten and suffixed with a hash of the original, so two tools of one
 * server stay distinct after rewriting.
 */
export function namespacedToolName(server: string, tool: string): string {
  const base = `${MCP_TOOL_PREFIX}${server}__`;
  const safe = tool.replace(/[^A-Za-z0-9_-]/g, '_');
  if (safe === tool && base.length + tool.length <= MAX_TOOL_NAME && tool.length > 0) return base + tool;
  const hash = createHash('sha256').update(tool).digest('hex').slice(0, 8);
  const room = MAX_TOOL_NAME - base.length - hash.length - 1;
  return `${base}${safe.slice(0, Math.max(0, room))}_${hash}`;
}
