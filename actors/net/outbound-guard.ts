// actors/net/outbound-guard.ts: where Warren may connect on a request's behalf (webhooks, MCP `url`
// servers, OAuth endpoints, provider `base_url`). The check runs at connect time on the address actually
// connected to, after DNS resolution (an undici connector whose lookup filters every resolved address, and
// which re-checks the socket's remote address), so a name that resolves, or later re-resolves, to a
// metadata address is refused (no check-then-use gap). Built-in deny list: link-local and cloud metadata
// addresses and names; `[network] deny_cidrs` adds ranges (e.g. loopback), `[network] allow_cidrs` opens
// ranges (also the built-in ones). A refusal is an OutboundRefused whose message is the reason only.
// Callers on node:http (the OTLP trace exporter) get an http(s).Agent with the same checks (nodeAgent).
import { Agent as HttpAgent, type AgentOptions, type ClientRequestArgs } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { BlockList, connect as netConnect, isIP, type LookupFunction, type NetConnectOpts, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import type { Duplex } from 'node:stream';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import type { Config } from '../../contracts/config.ts';

/** Link-local ranges and the metadata addresses of the major clouds (AWS, GCP, Azure, Alibaba, Oracle). */
const DEFAULT_DENY_CIDRS: readonly string[] = ['169.254.0.0/16', 'fe80::/10', 'fd00:ec2::254/128', '100.100.100.200/32', '192.0.0.192/32'];
/** Metadata host names refused before any resolution. */
const DENY_HOST_NAMES: readonly string[] = [
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
];

/** A connection Warren refused to open: `message` names the address and the rule, never a response. */
class OutboundRefused extends Error {
  readonly code = 'OUTBOUND_REFUSED';
  constructor(message: string) {
    super(message);
    this.name = 'OutboundRefused';
  }
}

/** Resolves a name to its addresses (tests inject a hosts mapping; default: the system resolver). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addrs) => (err ? reject(err) : resolve(addrs))),
  );

interface ParsedRange {
  text: string;
  family: 'ipv4' | 'ipv6';
  list: BlockList;
}

/** Parses `a.b.c.d/n`, `x::/n` or a bare address (a /32 or /128); null when malformed. */
function parseCidr(text: string): ParsedRange | null {
  const [addr, bits, extra] = text.trim().split('/');
  if (extra !== undefined) return null;
  const v = isIP(addr);
  if (v === 0) return null;
  const max = v === 4 ? 32 : 128;
  const prefix = bits === undefined ? max : Number(bits);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max || (bits !== undefined && !/^\d+$/.test(bits))) return null;
  const family = v === 4 ? 'ipv4' : 'ipv6';
  const list = new BlockList();
  list.addSubnet(addr, prefix, family);
  return { text: text.trim(), family, list };
}

/** The malformed entries of a CIDR list (config validation). */
function badCidrs(list: readonly string[] | undefined): string[] {
  return (list ?? []).filter((c) => parseCidr(c) === null);
}

/** `::ffff:1.2.3.4` → `1.2.3.4`; other addresses as they are. */
function normalise(address: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return m ? m[1] : address;
}

function matches(ranges: readonly ParsedRange[], address: string): ParsedRange | undefined {
  const family = isIP(address) === 4 ? 'ipv4' : 'ipv6';
  return ranges.find((r) => r.family === family && r.list.check(address, family));
}

/** The network rules in force, from `[network]`. */
export class OutboundPolicy {
  private readonly deny: ParsedRange[];
  private readonly allow: ParsedRange[];
  private readonly userDeny: ReadonlySet<string>;

  constructor(network: { deny_cidrs?: readonly string[]; allow_cidrs?: readonly string[] } = {}) {
    const parse = (list: readonly string[]): ParsedRange[] => list.map(parseCidr).filter((r): r is ParsedRange => r !== null);
    this.userDeny = new Set(network.deny_cidrs ?? []);
    this.deny = parse([...DEFAULT_DENY_CIDRS, ...(network.deny_cidrs ?? [])]);
    this.allow = parse(network.allow_cidrs ?? []);
  }

  static fromConfig(config: Config): OutboundPolicy {
    return new OutboundPolicy(config.network ?? {});
  }

  /** Why connecting to `address` (an IP) is refused, or null when allowed. */
  addressProblem(address: string): string | null {
    const a = normalise(address);
    if (matches(this.allow, a)) return null;
    const hit = matches(this.deny, a);
    if (!hit) return null;
    const where = this.userDeny.has(hit.text)
      ? '[network] deny_cidrs'
      : 'the built-in deny list (link-local and cloud metadata; open with [network] allow_cidrs)';
    return `address ${a} is in ${hit.text} of ${where}`;
  }

  /** Why connecting to `hostname` is refused before resolution (metadata names, denied literals), or null. */
  hostProblem(hostname: string): string | null {
    const h = hostname
      .replace(/^\[|\]$/g, '')
      .toLowerCase()
      .replace(/\.$/, '');
    if (isIP(h)) return this.addressProblem(h);
    if (DENY_HOST_NAMES.includes(h)) return `host ${h} is a cloud metadata name (refused)`;
    return null;
  }
}

type ConnectOptions = Parameters<buildConnector.connector>[0];
type ConnectCallback = Parameters<buildConnector.connector>[1];
/** An undici connector (the `connect` option of an Agent). */
export type GuardedConnector = buildConnector.connector;

/**
 * The outbound guard of one app: `connector` for undici Agents (providers), `dispatcher` and `fetch` for
 * callers that use fetch (webhooks, OAuth, MCP transports). The policy is read per connection.
 */
export class OutboundGuard {
  readonly connector: GuardedConnector;
  /** Replaced when the rules change (policyChanged), so no pooled connection outlives them. */
  dispatcher: Agent;
  /** fetch through the guarded dispatcher; refusals reject with a TypeError whose `cause` is an OutboundRefused. */
  readonly fetch: typeof globalThis.fetch;
  /** Resolution filtered by the policy (every connection opened by this guard resolves through it). */
  private readonly lookup: LookupFunction;
  /** node:http agents handed out (nodeAgent): their pooled sockets end when the rules change. */
  private readonly nodeAgents = new Set<HttpAgent>();

  constructor(
    private readonly policy: () => OutboundPolicy,
    private readonly resolver: Resolver = systemResolver,
  ) {
    const lookup: LookupFunction = (hostname, options, callback) => {
      const all = (options as { all?: boolean }).all === true;
      resolver(hostname).then(
        (addrs) => {
          const p = this.policy();
          const problems = addrs.map((a) => p.addressProblem(a.address));
          const ok = addrs.filter((_, i) => problems[i] === null);
          if (ok.length === 0) {
            const reason = problems.find((x) => x !== null) ?? `host ${hostname} has no address`;
            callback(new OutboundRefused(`connection to ${hostname} refused: ${reason}`), all ? [] : '', 4);
            return;
          }
          if (all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, ok);
          else callback(null, ok[0].address, ok[0].family);
        },
        (err: unknown) => callback(err as NodeJS.ErrnoException, all ? [] : '', 4),
      );
    };
    this.lookup = lookup;
    const inner = buildConnector({ lookup } as buildConnector.BuildOptions);
    this.connector = (opts: ConnectOptions, cb: ConnectCallback) => {
      const early = this.policy().hostProblem(opts.hostname);
      if (early !== null) {
        queueMicrotask(() => cb(new OutboundRefused(`connection to ${opts.hostname} refused: ${early}`), null));
        return undefined as unknown as ReturnType<GuardedConnector>;
      }
      return inner(opts, (err, socket) => {
        if (err || !socket) return cb(err, null);
        // The address actually connected to (whatever resolved it): checked once more.
        const remote = (socket as Socket).remoteAddress;
        const late = remote ? this.policy().addressProblem(remote) : null;
        if (late !== null) {
          socket.destroy();
          return cb(new OutboundRefused(`connection to ${opts.hostname} refused: ${late}`), null);
        }
        cb(null, socket);
      });
    };
    this.dispatcher = new Agent({ connect: this.connector });
    this.fetch = ((input: Parameters<typeof globalThis.fetch>[0], init?: RequestInit) =>
      undiciFetch(input as Parameters<typeof undiciFetch>[0], {
        ...(init as Parameters<typeof undiciFetch>[1]),
        dispatcher: this.dispatcher,
      }) as unknown as Promise<Response>) as typeof globalThis.fetch;
  }

  /** Why a URL may not be used at all (scheme, metadata names, denied literal addresses), or null. */
  urlProblem(url: string): string | null {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return 'invalid url';
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'url must be http or https';
    return this.policy().hostProblem(u.hostname);
  }

  /**
   * Why a URL is refused now (its host, or any address its name resolves to), or null. An early answer for
   * requests that register a URL (a clear 400); the connect-time check stays the authoritative one.
   */
  async checkUrl(url: string): Promise<string | null> {
    const early = this.urlProblem(url);
    if (early !== null) return early;
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) return null;
    let addrs: LookupAddress[];
    try {
      addrs = await this.resolver(host);
    } catch {
      return null; // not resolvable now: the delivery reports it when it happens
    }
    const p = this.policy();
    for (const a of addrs) {
      const problem = p.addressProblem(a.address);
      if (problem !== null) return `host ${host} resolves to a refused address: ${problem}`;
    }
    return null;
  }

  /**
   * A node:http(s) Agent (for clients built on node:http, such as the OTLP exporter) that opens each
   * connection under the same rules: refused hosts before resolution, resolved addresses filtered, and
   * the connected address checked once more. A refusal fails the request with an OutboundRefused.
   */
  nodeAgent(protocol: 'http:' | 'https:', options: AgentOptions = {}): HttpAgent {
    const policy = () => this.policy();
    const lookup = this.lookup;
    const open = (opts: ClientRequestArgs, cb: (err: Error | null, socket: Duplex) => void): Duplex | undefined => {
      const host = opts.hostname ?? opts.host ?? 'localhost';
      const early = policy().hostProblem(host);
      if (early !== null) {
        queueMicrotask(() => cb(new OutboundRefused(`connection to ${host} refused: ${early}`), undefined as unknown as Duplex));
        return undefined;
      }
      const o = { ...(opts as NetConnectOpts), host, lookup };
      const socket =
        protocol === 'https:' ? tlsConnect({ servername: isIP(host) ? undefined : host, ...(o as ConnectionOptions) }) : netConnect(o);
      socket.once('connect', () => {
        const late = socket.remoteAddress ? policy().addressProblem(socket.remoteAddress) : null;
        if (late !== null) socket.destroy(new OutboundRefused(`connection to ${host} refused: ${late}`));
      });
      return socket;
    };
    const Base = protocol === 'https:' ? HttpsAgent : HttpAgent;
    const agent = new (class extends Base {
      override createConnection(opts: ClientRequestArgs, cb: (err: Error | null, socket: Duplex) => void): Duplex | undefined {
        return open(opts, cb);
      }
    })({ keepAlive: true, ...options });
    this.nodeAgents.add(agent);
    return agent;
  }

  /** The rules changed: new connections only (kept-alive ones were checked under the old rules). */
  policyChanged(): void {
    const old = this.dispatcher;
    this.dispatcher = new Agent({ connect: this.connector });
    void old.close().catch(() => undefined);
    for (const a of this.nodeAgents) a.destroy();
  }

  close(): Promise<void> {
    for (const a of this.nodeAgents) a.destroy();
    this.nodeAgents.clear();
    return this.dispatcher.close();
  }
}

/** The refusal reason inside a failed fetch/undici call (its cause chain), or null. */
function refusalReason(err: unknown): string | null {
  for (let e: unknown = err, i = 0; e instanceof Error && i < 5; e = (e as { cause?: unknown }).cause, i++) {
    if (e instanceof OutboundRefused || (e as { code?: unknown }).code === 'OUTBOUND_REFUSED') return e.message;
  }
  return null;
}

/** A short reason for a failed outbound call: the refusal, or the error's code/message (never a response body). */
export function failureReason(err: unknown): string {
  const refused = refusalReason(err);
  if (refused) return refused;
  const cause = err instanceof Error ? ((err as { cause?: unknown }).cause ?? err) : err;
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    return typeof code === 'string' ? `${code}: ${cause.message}` : cause.message;
  }
  return String(cause);
}
