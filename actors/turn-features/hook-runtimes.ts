// actors/turn-features/hook-runtimes.ts: how one hook is executed. `command` spawns a child process
// (payload JSON on stdin, answer JSON on stdout, killed at its timeout), `http` POSTs the payload, and
// `in_process` runs one of Warren's built-in hooks. Each resolves with the hook's parsed answer or
// rejects with a HookRunFailure (timeout, execution_failed, config_invalid); hook-engine.ts interprets.
import { spawn } from 'node:child_process';
import type { HookRuntime } from '../../contracts/turn-features.ts';

export class HookRunFailure extends Error {
  constructor(
    readonly reason: 'timeout' | 'execution_failed' | 'config_invalid',
    message: string,
  ) {
    super(message);
    this.name = 'HookRunFailure';
  }
}

/** Largest answer read from a hook (stdout or HTTP body). */
const MAX_ANSWER_BYTES = 1 << 20;
/** Environment a command hook inherits from the server; everything else (API keys) stays out. */
const INHERITED_ENV = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR', 'TEMP', 'TMP', 'SYSTEMROOT'];

/** A built-in hook: given its entry config and the payload, returns the answer object. */
type BuiltinHook = (config: unknown, payload: HookPayload) => unknown;

export interface HookPayload {
  hook_id: string;
  point: string;
  session_id: string;
  request_id: string;
  data: Record<string, unknown>;
}

/** Warren's own hooks (`{"type": "in_process", "name": ...}`). */
const BUILTIN_HOOKS: Record<string, BuiltinHook> = {
  /** Allows everything (a placeholder that makes a point observable). */
  allow: () => ({}),
  /** Denies tools by name: `config = {"tools": ["shell", ...]}` (pre_tool_execution). */
  deny_tools: (config, payload) => {
    const names = (config as { tools?: unknown } | undefined)?.tools;
    const call = payload.data.tool_call as { name?: string } | undefined;
    if (!Array.isArray(names) || !call?.name || !names.includes(call.name)) return {};
    return {
      decision: {
        decision: 'deny',
        hook_id: payload.hook_id,
        reason_code: 'policy_violation',
        message: `tool '${call.name}' is not allowed`,
      },
    };
  },
};

function parseAnswer(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new HookRunFailure('execution_failed', `${source} did not answer with JSON`);
  }
}

function runCommand(
  rt: Extract<HookRuntime, { type: 'command' }>,
  body: string,
  timeoutMs: number,
  serverEnv: NodeJS.ProcessEnv,
  stop?: AbortSignal,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = {};
    for (const k of INHERITED_ENV) if (serverEnv[k] !== undefined) env[k] = serverEnv[k];
    Object.assign(env, rt.env ?? {});
    const child = spawn(rt.command, rt.args ?? [], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let outBytes = 0;
    let errTail = '';
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      stop?.removeEventListener('abort', onStop);
      fn();
    };
    // The run was stopped (interrupt, time budget): the hook is killed at once.
    const onStop = () => {
      child.kill('SIGKILL');
      finish(() => reject(new HookRunFailure('execution_failed', 'the run was stopped')));
    };
    stop?.addEventListener('abort', onStop, { once: true });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish(() => reject(new HookRunFailure('timeout', `no answer within ${timeoutMs} ms`)));
    }, timeoutMs);
    child.stdout.on('data', (c: Buffer) => {
      outBytes += c.length;
      if (outBytes > MAX_ANSWER_BYTES) {
        child.kill('SIGKILL');
        finish(() => reject(new HookRunFailure('execution_failed', `answer larger than ${MAX_ANSWER_BYTES} bytes`)));
      } else out.push(c);
    });
    child.stderr.on('data', (c: Buffer) => {
      errTail = (errTail + c.toString('utf8')).slice(-500);
    });
    child.on('error', (err) => finish(() => reject(new HookRunFailure('execution_failed', `cannot run ${rt.command}: ${err.message}`))));
    child.on('close', (code, signal) => {
      finish(() => {
        if (code !== 0) {
          reject(new HookRunFailure('execution_failed', `exited with ${code ?? signal}${errTail ? `: ${errTail.trim()}` : ''}`));
          return;
        }
        try {
          resolve(parseAnswer(Buffer.concat(out).toString('utf8'), 'the command'));
        } catch (err) {
          reject(err);
        }
      });
    });
    // A hook that exits without reading stdin makes the write fail with EPIPE; its exit code decides.
    child.stdin.on('error', () => {});
    child.stdin.end(body);
  });
}

async function runHttp(rt: Extract<HookRuntime, { type: 'http' }>, body: string, timeoutMs: number, stop?: AbortSignal): Promise<unknown> {
  let url: URL;
  try {
    url = new URL(rt.url);
  } catch {
    // The URL itself is not echoed: it may carry a token (the message lands in the ledger).
    throw new HookRunFailure('config_invalid', 'the runtime url is not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new HookRunFailure('config_invalid', `unsupported URL scheme ${url.protocol}`);
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      body,
      signal: stop ? AbortSignal.any([AbortSignal.timeout(timeoutMs), stop]) : AbortSignal.timeout(timeoutMs),
      headers: { ...(rt.headers ?? {}), 'content-type': 'application/json' },
    });
  } catch (err) {
    if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError'))
      throw new HookRunFailure('timeout', `no answer within ${timeoutMs} ms`);
    throw new HookRunFailure('execution_failed', `request failed: ${err instanceof Error ? err.message : String(err)}`);
  }
  let text: string;
  try {
    text = await res.text();
  } catch (err) {
    if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError'))
      throw new HookRunFailure('timeout', `no answer within ${timeoutMs} ms`);
    throw new HookRunFailure('execution_failed', 'the answer could not be read');
  }
  if (!res.ok) throw new HookRunFailure('execution_failed', `answered HTTP ${res.status}`);
  if (Buffer.byteLength(text) > MAX_ANSWER_BYTES)
    throw new HookRunFailure('execution_failed', `answer larger than ${MAX_ANSWER_BYTES} bytes`);
  return parseAnswer(text, 'the hook server');
}

/**
 * Executes one hook with its serialized payload. `serverEnv` is the server's environment (commands
 * inherit a few keys); `stop` ends the hook early when the run is stopped.
 */
export async function executeHook(
  runtime: HookRuntime,
  payload: HookPayload,
  body: string,
  timeoutMs: number,
  serverEnv: NodeJS.ProcessEnv,
  stop?: AbortSignal,
): Promise<unknown> {
  switch (runtime.type) {
    case 'command':
      return runCommand(runtime, body, timeoutMs, serverEnv, stop);
    case 'http':
      return runHttp(runtime, body, timeoutMs, stop);
    case 'in_process': {
      const hook = BUILTIN_HOOKS[runtime.name];
      if (!hook)
        throw new HookRunFailure(
          'config_invalid',
          `unknown in_process hook '${runtime.name}' (known: ${Object.keys(BUILTIN_HOOKS).join(', ')})`,
        );
      try {
        return hook(runtime.config, payload);
      } catch (err) {
        throw new HookRunFailure('execution_failed', err instanceof Error ? err.message : String(err));
      }
    }
  }
}
