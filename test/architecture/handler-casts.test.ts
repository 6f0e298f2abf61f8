// test/architecture/handler-casts.test.ts: handlers take their request body and query typed from their
// catalog route (`on(X_ROUTE.name, ...)` in http/handler.ts), never by casting the handler context. A
// cast such as `ctx.body as SomeRequest` compiles whatever the route validated, so it is refused here
// for every file under http/ (a body for another route's schema is typed with BodyOf / RouteContext).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * A cast of a handler context's body or query, or of one of their members: `ctx.body as T`,
 * `hctx.body as T`, `(ctx.body) as T`, `ctx.query as T`, `ctx.query.phase as T`, `ctx.body['x'] as T`.
 */
const CONTEXT_CAST = /\b\w*ctx\.(?:body|query)(?:\.\w+|\[[^\]\n]*\])?\)?\s+as\s/i;

function tsFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) tsFiles(full, out);
    else if (/\.[cm]?ts$/.test(entry.name)) out.push(relative(ROOT, full).split(sep).join('/'));
  }
  return out;
}

/** `file:line: text` of each context cast in a source text. */
function contextCasts(file: string, source: string): string[] {
  return source.split('\n').flatMap((line, i) => (CONTEXT_CAST.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : []));
}

describe('handler context casts', () => {
  it('the matcher sees body and query casts of a handler context, and nothing else', () => {
    const casts = [
      'const body = ctx.body as GoalStatusRequest;',
      "'x': async (ctx) => run(ctx.body as McpAddRequest),",
      'const body = hctx.body as HelpRequest;',
      'const q = (ctx: HandlerContext): RealmQuery => ctx.query as RealmQuery;',
      'phase: ctx.query.phase as OccurrencePhase | undefined,',
      'const v = (ctx.body) as Thing;',
      "const v = ctx.body['x'] as Thing;",
    ];
    const fine = [
      'const body = ctx.body;',
      'return { ...reply, body: { ...(reply.body as object) } };',
      'const json = JSON.parse(raw) as { session_id?: unknown };',
      'const status = ctx.query.status;',
      '// the body is as sent',
    ];
    for (const line of casts) assert.equal(contextCasts('f.ts', line).length, 1, line);
    for (const line of fine) assert.deepEqual(contextCasts('f.ts', line), [], line);
  });

  it('no file under http/ casts a handler context body or query', () => {
    const files = tsFiles(join(ROOT, 'http'));
    assert.ok(files.length > 20, 'walked the http layer');
    const found = files.flatMap((file) => contextCasts(file, readFileSync(join(ROOT, file), 'utf8')));
    assert.deepEqual(found, [], 'bind the handler with on(X_ROUTE.name, ...) (http/handler.ts) instead of casting');
  });
});
