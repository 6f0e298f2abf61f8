// cli/start-banner.ts: what `warren serve` says once it listens: which realm, its backend, where its
// files are, the listening and viewer URLs, and a first turn that needs no provider key (the scripted
// provider echoes). main.ts prints the text form on stderr when the log is readable, and the fields as one
// structured 'ready' log line when the log is JSON lines. Pure: no IO.

export interface BannerInfo {
  version: string;
  url: string;
  realmId: string;
  realmDir: string;
  backend: string;
  /** True for a new opaque realm (a bare `warren serve`): nothing brings it back on the next start. */
  isolated: boolean;
  inboundAuth: 'off' | 'required';
}

/** What the realm's backend keeps, in a few words. */
function backendNote(backend: string): string {
  if (backend === 'memory') return 'in memory: nothing survives a restart';
  if (backend === 'postgres') return 'PostgreSQL: the database of WARREN_DATABASE_URL or [storage] postgres_url';
  return `files under ${backend === 'sqlite' ? 'store/warren.sqlite' : 'store/'}`;
}

/** A shell-quoted argument (single quotes; a quote inside becomes '\''). */
const shellQuote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

/**
 * A first turn as one copy-pasteable curl command: POST /sessions on the scripted provider (it echoes the
 * prompt, no key needed). With inbound API keys on, it sends $WARREN_API_KEY as the bearer token.
 */
function firstTurnCommand(url: string, inboundAuth: BannerInfo['inboundAuth']): string {
  const auth = inboundAuth === 'required' ? ` -H "authorization: Bearer $WARREN_API_KEY"` : '';
  const body = JSON.stringify({ prompt: 'hello', provider: 'scripted' });
  return `curl -s ${url}/sessions -H 'content-type: application/json'${auth} -d ${shellQuote(body)}`;
}

/** The banner's facts as log fields (the 'ready' line of a JSON log). */
export function bannerFields(info: BannerInfo): Record<string, unknown> {
  return {
    url: info.url,
    viewer: `${info.url}/ui`,
    realm: info.realmId,
    realm_kind: info.isolated ? 'isolated' : 'named',
    backend: info.backend,
    realm_dir: info.realmDir,
    inbound_auth: info.inboundAuth,
    first_turn: firstTurnCommand(info.url, info.inboundAuth),
  };
}

/** The banner as a few readable lines (ending in a newline). */
export function bannerText(info: BannerInfo): string {
  const realmLine = info.isolated
    ? `${info.realmId} (a new isolated realm: a restart opens another; pass --realm <name> to keep sessions)`
    : `${info.realmId} (named: the next start with this name opens it again)`;
  const lines = [
    `Warren ${info.version} listening on ${info.url}`,
    `  realm     ${realmLine}`,
    `  backend   ${info.backend} (${backendNote(info.backend)})`,
    `  files     ${info.realmDir}`,
    `  viewer    ${info.url}/ui`,
    `  first turn, no provider key needed:`,
    `    ${firstTurnCommand(info.url, info.inboundAuth)}`,
  ];
  if (info.inboundAuth === 'required') {
    lines.push(
      `  inbound API keys are on: every request but /health needs 'authorization: Bearer <key>';`,
      `  create one with 'warren keys create --realm ${info.realmId} --name me --scopes sessions' and export it`,
      `  as WARREN_API_KEY for the curl above`,
    );
  }
  return `${lines.join('\n')}\n`;
}
