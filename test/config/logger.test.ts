// test/config/logger.test.ts: the root logger's shape and credential redaction (config/logger.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger, type LogLevel } from '../../config/logger.ts';

function capture(level: LogLevel = 'info') {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({
    level,
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  });
  return { logger, lines };
}

describe('createLogger', () => {
  it('writes JSON lines with service warren at the chosen level', () => {
    const { logger, lines } = capture('warn');
    logger.info('hidden');
    logger.warn({ n: 1 }, 'shown');
    assert.equal(lines.length, 1);
    assert.equal(lines[0]?.service, 'warren');
    assert.equal(lines[0]?.msg, 'shown');
    assert.equal(lines[0]?.n, 1);
  });

  it('redacts credentials in headers and key fields', () => {
    const { logger, lines } = capture();
    logger.info(
      {
        req: { headers: { authorization: 'Bearer s3cret', 'x-api-key': 'key-1', accept: 'json' } },
        headers: { 'x-goog-api-key': 'key-2', 'x-webhook-secret': 'key-3', authorization: 'b' },
        provider: { api_key: 'key-4', name: 'openai' },
        auth: { token: 'key-5', secret: 'key-6', refresh_token: 'key-7' },
        api_key: 'key-8',
        storage: { postgres_url: 'postgres://u:key-9@db/w' },
        database_url: 'postgres://u:key-10@db/w',
      },
      'request',
    );
    const text = JSON.stringify(lines[0]);
    for (const secret of ['s3cret', 'key-1', 'key-2', 'key-3', 'key-4', 'key-5', 'key-6', 'key-7', 'key-8', 'key-9', 'key-10']) {
      assert.ok(!text.includes(secret), `${secret} leaked`);
    }
    assert.ok(text.includes('[redacted]'));
    assert.ok(text.includes('"accept":"json"'));
    assert.ok(text.includes('"name":"openai"'));
  });

  it('redacts auth credential material: stored secrets, OAuth tokens, PKCE verifiers and Azure keys, two levels deep', () => {
    const { logger, lines } = capture('trace');
    logger.debug(
      {
        body: { realm_id: 'r', secret: 'auth-1' },
        credential: { material: { access_token: 'auth-2', refresh_token: 'auth-3' }, profile: 'p' },
        login: { code_verifier: 'auth-4', verifier: 'auth-5' },
        headers: { 'api-key': 'auth-6' },
        oauth: { client_secret: 'auth-7' },
      },
      'auth',
    );
    const text = JSON.stringify(lines[0]);
    for (const secret of ['auth-1', 'auth-2', 'auth-3', 'auth-4', 'auth-5', 'auth-6', 'auth-7'])
      assert.ok(!text.includes(secret), `${secret} leaked`);
    assert.ok(text.includes('"profile":"p"'));
    assert.ok(text.includes('"realm_id":"r"'));
  });
});
