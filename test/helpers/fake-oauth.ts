// test/helpers/fake-oauth.ts: a loopback OAuth 2.0 provider for the auth tests. GET /authorize redirects
// to the redirect_uri with a code (remembering the PKCE S256 challenge), POST /token serves the
// authorization_code (verifying the challenge), refresh_token and device_code grants, POST /device starts
// RFC 8628 device authorization. Replies are scripted per grant; every token request is recorded.
import { createHash } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A scripted token-endpoint reply: success (with optional lifetime) or an OAuth error. */
export type TokenScript = { ok: true; expiresIn?: number; noRefreshToken?: boolean } | { ok: false; status: number; error: string };

export interface FakeOAuth {
  url: string;
  /** `[auth.oauth.<provider>]` pointing at this server. */
  config(scopes?: string[]): Record<string, unknown>;
  /** Every token-endpoint form, in order. */
  tokenRequests: Array<Record<string, string>>;
  /** Access tokens issued, in order. */
  issued: string[];
  /** Replies for refresh grants, used in order (default: success). */
  refreshScript: TokenScript[];
  /** Replies for device_code grants, used in order (default: success). */
  deviceScript: Array<TokenScript | 'authorization_pending' | 'slow_down' | 'access_denied' | 'expired_token'>;
  /** Lifetime (seconds) of tokens issued by the code and device grants. */
  expiresIn: number;
  /** Interval the device endpoint announces. */
  deviceInterval: number;
  /** Resolves when the next token request with this grant_type arrives. */
  nextGrant(grantType: string): Promise<Record<string, string>>;
  close(): Promise<void>;
}

const b64url = (b: Buffer) => b.toString('base64url');

export async function startFakeOAuth(): Promise<FakeOAuth> {
  const codes = new Map<string, { challenge: string; method: string; redirect: string }>();
  const waiters: Array<{ grant: string; resolve: (f: Record<string, string>) => void }> = [];
  let n = 0;
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const issue = (res: ServerResponse, script: TokenScript | undefined, fallbackExpires: number) => {
    if (script && !script.ok) return json(res, script.status, { error: script.error });
    n++;
    const access = `fake-access-${n}-${b64url(Buffer.from(String(Math.random())))}`;
    fake.issued.push(access);
    const body: Record<string, unknown> = {
      access_token: access,
      token_type: 'Bearer',
      expires_in: script?.expiresIn ?? fallbackExpires,
      scope: 'inference profile',
      account_id: 'acct-1',
    };
    if (!script?.noRefreshToken) body.refresh_token = `fake-refresh-${n}`;
    json(res, 200, body);
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method === 'GET' && url.pathname === '/authorize') {
      const code = `code-${++n}`;
      codes.set(code, {
        challenge: url.searchParams.get('code_challenge') ?? '',
        method: url.searchParams.get('code_challenge_method') ?? '',
        redirect: url.searchParams.get('redirect_uri') ?? '',
      });
      const back = new URL(url.searchParams.get('redirect_uri') ?? 'http://127.0.0.1/');
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      res.writeHead(302, { location: back.toString() });
      return res.end();
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      if (url.pathname === '/device') {
        return json(res, 200, {
          device_code: `dev-${++n}`,
          user_code: 'ABCD-EFGH',
          verification_uri: `${fake.url}/activate`,
          verification_uri_complete: `${fake.url}/activate?code=ABCD-EFGH`,
          expires_in: 600,
          interval: fake.deviceInterval,
        });
      }
      if (url.pathname !== '/token') return json(res, 404, { error: 'not_found' });
      fake.tokenRequests.push(form);
      for (let i = waiters.length - 1; i >= 0; i--) if (waiters[i].grant === form.grant_type) waiters.splice(i, 1)[0].resolve(form);
      if (form.grant_type === 'authorization_code') {
        const c = codes.get(form.code);
        codes.delete(form.code);
        const verified =
          c &&
          c.method === 'S256' &&
          c.challenge ===
            b64url(
              createHash('sha256')
                .update(form.code_verifier ?? '')
                .digest(),
            ) &&
          c.redirect === form.redirect_uri;
        if (!verified) return json(res, 400, { error: 'invalid_grant' });
        return issue(res, undefined, fake.expiresIn);
      }
      if (form.grant_type === 'refresh_token') return issue(res, fake.refreshScript.shift(), 3600);
      if (form.grant_type === 'urn:ietf:params:oauth:grant-type:device_code') {
        const next = fake.deviceScript.shift();
        if (typeof next === 'string') return json(res, 400, { error: next });
        return issue(res, next, fake.expiresIn);
      }
      json(res, 400, { error: 'unsupported_grant_type' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const fake: FakeOAuth = {
    url: `http://127.0.0.1:${port}`,
    config: (scopes = ['inference']) => ({
      client_id: 'warren-test',
      authorization_endpoint: `${fake.url}/authorize`,
      token_endpoint: `${fake.url}/token`,
      device_authorization_endpoint: `${fake.url}/device`,
      scopes,
    }),
    tokenRequests: [],
    issued: [],
    refreshScript: [],
    deviceScript: [],
    expiresIn: 3600,
    deviceInterval: 0,
    nextGrant: (grant) => new Promise((resolve) => waiters.push({ grant, resolve })),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return fake;
}

/** Follows an authorize_url as a browser would and returns the code and state from the loopback redirect. */
export async function authorize(authorizeUrl: string): Promise<{ code: string; state: string }> {
  const res = await fetch(authorizeUrl, { redirect: 'manual' });
  const location = new URL(res.headers.get('location') ?? '');
  return { code: location.searchParams.get('code') ?? '', state: location.searchParams.get('state') ?? '' };
}
