// actors/turn-features/help.ts: POST /help. A question runs a real session (tools off, keep_alive off)
// whose system prompt is built from Warren's own documentation: the README and the route catalog.
import { readFileSync } from 'node:fs';
import type { CreateSessionRequest } from '../../contracts/session.ts';
import type { HelpRequest } from '../../contracts/turn-features.ts';
import { packageFile } from '../../contracts/package-root.ts';

/** The README beyond this many bytes is cut (a help call should not cost a whole manual of tokens). */
const MAX_DOC_BYTES = 64 * 1024;

let readme: string | undefined;

function readmeText(): string {
  if (readme === undefined) {
    try {
      readme = readFileSync(packageFile('README.md'), 'utf8');
    } catch {
      readme = '(README.md is not available on this server)';
    }
    if (Buffer.byteLength(readme) > MAX_DOC_BYTES)
      readme = `${Buffer.from(readme).subarray(0, MAX_DOC_BYTES).toString('utf8')}\n[...README truncated]`;
  }
  return readme;
}

export interface RouteLine {
  method: string;
  path: string;
  summary: string;
}

/** The fixed help system prompt for `mode`. */
function helpSystemPrompt(routes: readonly RouteLine[], mode: 'explain_only' | 'plan_execution'): string {
  const catalog = routes.map((r) => `${r.method} ${r.path} - ${r.summary}`).join('\n');
  const task =
    mode === 'plan_execution'
      ? 'Answer with a short explanation followed by a numbered plan of concrete steps (HTTP requests with their bodies, config keys to set, commands to run) that the user can carry out. You cannot run anything yourself.'
      : "Explain the answer clearly and concisely. Do not propose to run anything on the user's behalf.";
  return [
    'You are the help assistant of Warren, an HTTP server that runs and manages LLM agent sessions.',
    'Answer questions about using and operating Warren only from the documentation below; when it does not cover something, say so.',
    task,
    '## Route catalog of this server',
    catalog,
    '## README',
    readmeText(),
  ].join('\n\n');
}

/** The create request a help question becomes: every tool category off. */
export function helpSessionRequest(body: HelpRequest, routes: readonly RouteLine[]): CreateSessionRequest {
  const mode = body.execution_mode ?? 'explain_only';
  const prompt = body.prompt ? `${body.question}\n\nContext from the caller:\n${body.prompt}` : body.question;
  return {
    prompt,
    system_prompt: helpSystemPrompt(routes, mode),
    ...(body.model != null ? { model: body.model } : {}),
    ...(body.provider != null ? { provider: body.provider } : {}),
    ...(body.max_tokens != null ? { max_tokens: body.max_tokens } : {}),
    keep_alive: false,
    enable_builtins: false,
    enable_shell: false,
    enable_memory: false,
    enable_schedule: false,
    enable_workgraph: false,
  };
}
