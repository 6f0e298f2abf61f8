// actors/mcp-live.ts: live MCP on hosted sessions. Owns one McpClientSet (tools/mcp/) per session that
// uses MCP: built from `[tools] mcp_servers` plus the session's persisted changes, staged by the
// /sessions/{id}/mcp/add|remove|reload commands and applied when a turn builds its tool set (the
// boundary). http/handlers/mcp.ts sends the commands; http/modules/mcp-module.ts contributes
// `toolsFor` as the MCP module's session tools.
import type { RealmCipher } from './auth/realm-key.ts';
import { hasPlaintextSecrets, openMcpRecord, sealMcpRecord } from './mcp-sealing.ts';
import type { Logger } from 'pino';
import type { SessionEventPayload } from '../contracts/session-events.ts';
import { isServiceError, ServiceError } from '../contracts/errors.ts';
import type { Config } from '../contracts/config.ts';
import type {
  McpAddRequest,
  McpLiveResponse,
  McpOperation,
  McpPersistedRecord,
  McpReloadRequest,
  McpRemoveRequest,
  McpServerConfig,
  McpSessionStatus,
} from '../contracts/mcp.ts';
import type { Store, StoreOp } from '../storage/store.ts';
import { McpClientSet, type McpSource } from '../tools/mcp/mcp-client-set.ts';
import { configProblem } from '../tools/mcp/mcp-connection.ts';
import { serverNameProblem } from '../tools/mcp/mcp-names.ts';
import type { Tool } from '../tools/tool.ts';
import type { SessionActor } from './session/session-actor.ts';
import type { SessionHost } from './session/session-host.ts';
import { MCP_PERSISTED_KIND, readRecord } from '../storage/record-kinds.ts';

/** Store record namespace of the persisted per-session changes (key: session id). */
const MCP_RECORD_NS = 'mcp';

export interface McpLiveDeps {
  sessions: SessionHost;
  store: Store;
  log: Logger;
  config(): Config;
  contextRoot: string;
  clientInfo: { name: string; version: string };
  /** fetch of url servers (the outbound guard's: [network] rules after DNS). */
  fetch?: typeof fetch;
  /** Seals persisted servers' headers/env (the realm key); absent: stored as given. */
  cipher?: () => Promise<RealmCipher>;
  /**
   * Whether this process hosts the session's live runtime (multi-node placement plugs in here).
   * Default: every session this process can hydrate.
   */
  hosts?(sessionId: string): boolean;
  /** How many sessions without MCP servers are remembered as such (default NONE_KEPT_MAX). */
  noneKeptMax?: number;
}

/** Sessions remembered as having no MCP servers, at most (each is one map entry). */
const NONE_KEPT_MAX = 10_000;

function emptyRecord(): McpPersistedRecord {
  return { v: 1, added: [], removed: [] };
}

/** What a replay or a fork needs of a session's MCP servers (RuntimeDeps.sessionMcp). */
export interface SessionMcpPort {
  /** Loads the session's servers (config and persisted) and waits until none is still connecting. */
  prepare(sessionId: string): Promise<void>;
  /** The ops that give session `to` the persisted MCP changes of `from` (re-sealed for `to`); [] if none. */
  copyOps(from: string, to: string): Promise<StoreOp[]>;
}

export class McpLive implements SessionMcpPort {
  /** Client sets by session; null = the session has no MCP servers (nothing configured or added). */
  private readonly sets = new Map<string, McpClientSet | null>();
  /**
   * null entries made since the last sweep: every session that ever ran a turn gets one, so past the
   * bound they are dropped (a dropped one only costs one store read at that session's next turn).
   */
  private noneEntries = 0;
  private readonly loading = new Map<string, Promise<McpClientSet | null>>();
  /** Per-session chain of record writes (read-modify-write must not interleave). */
  private readonly writes = new Map<string, Promise<void>>();
  private closed = false;

  constructor(private readonly deps: McpLiveDeps) {}

  /** Config servers with valid names (an invalid entry is logged and skipped). */
  private configServers(): McpServerConfig[] {
    const out: McpServerConfig[] = [];
    for (const s of this.deps.config().tools.mcp_servers ?? []) {
      const problem = serverNameProblem(s.name);
      if (problem) this.deps.log.error({ server: s.name, problem }, 'skipping [tools] mcp_servers entry');
      else out.push(s);
    }
    return out;
  }

  private newSet(sessionId: string, initial: Array<{ config: McpServerConfig; source: McpSource }>): McpClientSet {
    return new McpClientSet(initial, {
      clientInfo: this.deps.clientInfo,
      cwd: this.deps.contextRoot,
      ...(this.deps.fetch ? { fetch: this.deps.fetch } : {}),
      callTimeoutMs: () => this.deps.config().tools.default_timeout_secs * 1000,
      emit: (kind, payload) => this.publish(sessionId, kind, payload),
    });
  }

  private publish(sessionId: string, kind: string, payload: Record<string, unknown>): void {
    if (kind === 'mcp_server_status' && payload.state === 'failed') {
      this.deps.log.warn({ sessionId, server: payload.server_name, error: payload.error }, 'MCP server failed');
    }
    // Events go to resident sessions only; a session that was evicted has nobody listening live.
    const hub = this.deps.sessions.peek(sessionId)?.hub;
    if (!hub) return;
    // The client set reports untyped payloads; their schemas are in contracts/session-events.ts.
    if (kind === 'mcp_server_status' || kind === 'mcp_changes_applied') {
      hub.publish(kind, { session_id: sessionId, ...payload } as SessionEventPayload<typeof kind>);
    } else this.deps.log.error({ sessionId, kind }, 'MCP event kind without a schema dropped');
  }

  /** The session's set, built on first use from config and its persisted record; `create` makes an empty one. */
  private async load(sessionId: string, create: boolean): Promise<McpClientSet | null> {
    if (this.closed) throw new ServiceError('SERVICE_UNAVAILABLE', 'server is shutting down');
    const known = this.sets.get(sessionId);
    if (known !== undefined && (known !== null || !create)) return known;
    let pending = this.loading.get(sessionId);
    if (!pending) {
      pending = (async () => {
        const stored = await readRecord<McpPersistedRecord>(this.deps.store, MCP_PERSISTED_KIND, sessionId);
        const record = stored ? await this.openRecord(sessionId, stored) : emptyRecord();
        // A record written before sealing is re-written sealed (migration on read).
        if (stored && hasPlaintextSecrets(stored) && this.deps.cipher) await this.persist(sessionId, () => {});
        const existing = this.sets.get(sessionId);
        if (existing) return existing;
        const initial = new Map<string, { config: McpServerConfig; source: McpSource }>();
        for (const c of this.configServers()) if (!record.removed.includes(c.name)) initial.set(c.name, { config: c, source: 'config' });
        for (const c of record.added) initial.set(c.name, { config: c, source: 'session' });
        const set = initial.size || create ? this.newSet(sessionId, [...initial.values()]) : null;
        if (set === null) this.noteNone();
        this.sets.set(sessionId, set);
        return set;
      })().finally(() => this.loading.delete(sessionId));
      this.loading.set(sessionId, pending);
    }
    const set = await pending;
    return set ?? (create ? this.load(sessionId, true) : null);
  }

  /** Counts a null entry about to be made; past the bound, drops every null entry first. */
  private noteNone(): void {
    if (++this.noneEntries <= (this.deps.noneKeptMax ?? NONE_KEPT_MAX)) return;
    for (const [id, set] of this.sets) if (set === null) this.sets.delete(id);
    this.noneEntries = 1;
  }

  /** How many sessions are remembered as having no MCP servers (for tests and diagnostics). */
  get knownWithoutServers(): number {
    let n = 0;
    for (const set of this.sets.values()) if (set === null) n++;
    return n;
  }

  /**
   * Turn boundary of `sessionId` (called as its tool set is built, once the turn was accepted): applies
   * the staged changes and returns the MCP tools of the turn. A session whose servers were never loaded
   * in this process starts loading them in the background (they appear from a later turn on).
   */
  toolsFor(sessionId: string): Tool[] {
    const set = this.sets.get(sessionId);
    if (set === undefined) {
      if (!this.closed)
        this.load(sessionId, false).catch((err) => this.deps.log.error({ err, sessionId }, 'MCP servers of a session could not be loaded'));
      return [];
    }
    if (set === null) return [];
    // The turn that is starting was accepted already, so the machine's count is its number.
    const turn = this.deps.sessions.peek(sessionId)?.machine.getSnapshot().context.turnCount ?? 0;
    set.applyAtBoundary(turn);
    return set.tools();
  }

  /** wire-notes §2.6 check order: id mismatch 400 → empty name 400 → unknown/archived 404 → not hosted 409. */
  private async admit(pathId: string, bodyId: string, name: string | undefined): Promise<void> {
    if (bodyId !== pathId) throw new ServiceError('BAD_REQUEST', `Session ID mismatch: path=${pathId} body=${bodyId}`);
    if (name !== undefined) {
      const problem = serverNameProblem(name);
      if (problem) throw new ServiceError('BAD_REQUEST', problem);
    }
    const actor = await this.activeSession(pathId);
    const hosted = (this.deps.hosts?.(pathId) ?? true) && actor.status().state !== 'held';
    if (!hosted) throw new ServiceError('CONFLICT', `session ${pathId} has no live runtime in this process`, { session_id: pathId });
  }

  /** The live session; an archived (or vanished) one also drops its MCP connections. */
  private async activeSession(sessionId: string): Promise<SessionActor> {
    try {
      return await this.deps.sessions.getActive(sessionId);
    } catch (err) {
      const set = this.sets.get(sessionId);
      if (isServiceError(err) && err.code === 'SESSION_NOT_FOUND' && set !== undefined) {
        this.sets.delete(sessionId);
        await set?.close();
      }
      throw err;
    }
  }

  /** A stored record with its sealed headers/env opened. */
  private async openRecord(sessionId: string, stored: McpPersistedRecord): Promise<McpPersistedRecord> {
    const cipher = await this.deps.cipher?.();
    return cipher ? openMcpRecord(cipher, sessionId, stored) : stored;
  }

  /** Read-modify-write of the persisted record, chained per session. A failure is 500 SESSION_STORE_ERROR. */
  private persist(sessionId: string, change: (r: McpPersistedRecord) => void): Promise<void> {
    const prev = this.writes.get(sessionId) ?? Promise.resolve();
    const next = prev
      .catch(() => {})
      .then(async () => {
        const stored = await readRecord<McpPersistedRecord>(this.deps.store, MCP_PERSISTED_KIND, sessionId);
        const record = stored ? await this.openRecord(sessionId, stored) : emptyRecord();
        change(record);
        const cipher = await this.deps.cipher?.();
        const value = cipher ? sealMcpRecord(cipher, sessionId, record) : record;
        await this.deps.store.commit([{ op: 'putRecord', ns: MCP_RECORD_NS, key: sessionId, value }]);
      });
    this.writes.set(sessionId, next);
    void next
      .finally(() => {
        if (this.writes.get(sessionId) === next) this.writes.delete(sessionId);
      })
      .catch(() => {});
    return next.catch((err: unknown) => {
      throw new ServiceError('SESSION_STORE_ERROR', 'the MCP change could not be persisted', { session_id: sessionId }, { cause: err });
    });
  }

  private reply(sessionId: string, operation: McpOperation, serverName: string | undefined, persisted: boolean): McpLiveResponse {
    return {
      session_id: sessionId,
      operation,
      ...(serverName !== undefined ? { server_name: serverName } : {}),
      status: 'staged',
      persisted,
    };
  }

  /** POST /sessions/{id}/mcp/add. */
  async add(sessionId: string, body: McpAddRequest): Promise<McpLiveResponse> {
    const config = body.server_config;
    await this.admit(sessionId, body.session_id, config.name);
    const problem = configProblem(config);
    if (problem) throw new ServiceError('BAD_REQUEST', problem);
    const persisted = body.persisted === true;
    if (persisted) {
      await this.persist(sessionId, (r) => {
        r.added = r.added.filter((c) => c.name !== config.name).concat([config]);
        r.removed = r.removed.filter((n) => n !== config.name);
      });
    }
    const set = (await this.load(sessionId, true))!;
    set.stageAdd(config, persisted);
    return this.reply(sessionId, 'add', config.name, persisted);
  }

  /** POST /sessions/{id}/mcp/remove. An unknown server name is 404 NOT_FOUND. */
  async remove(sessionId: string, body: McpRemoveRequest): Promise<McpLiveResponse> {
    await this.admit(sessionId, body.session_id, body.server_name);
    const set = await this.load(sessionId, false);
    if (!set?.knows(body.server_name))
      throw new ServiceError('NOT_FOUND', `MCP server not found: ${body.server_name}`, {
        session_id: sessionId,
        server_name: body.server_name,
      });
    const persisted = body.persisted === true;
    if (persisted) {
      const fromConfig = this.configServers().some((c) => c.name === body.server_name);
      await this.persist(sessionId, (r) => {
        r.added = r.added.filter((c) => c.name !== body.server_name);
        if (fromConfig && !r.removed.includes(body.server_name)) r.removed.push(body.server_name);
      });
    }
    set.stageRemove(body.server_name, persisted);
    return this.reply(sessionId, 'remove', body.server_name, persisted);
  }

  /** POST /sessions/{id}/mcp/reload: one server, or all when `server_name` is null or absent. */
  async reload(sessionId: string, body: McpReloadRequest): Promise<McpLiveResponse> {
    const name = body.server_name ?? undefined;
    await this.admit(sessionId, body.session_id, name);
    const set = await this.load(sessionId, name === undefined);
    if (name !== undefined && !set?.knows(name))
      throw new ServiceError('NOT_FOUND', `MCP server not found: ${name}`, { session_id: sessionId, server_name: name });
    // A reload changes no configuration, so there is nothing more to persist; `persisted` is echoed.
    set!.stageReload(name, body.persisted === true);
    return this.reply(sessionId, 'reload', name, body.persisted === true);
  }

  /** GET /sessions/{id}/mcp; `wait` resolves only once no connection is still handshaking. */
  async status(sessionId: string, wait: boolean): Promise<McpSessionStatus> {
    await this.activeSession(sessionId);
    const set = await this.load(sessionId, false);
    if (set && wait) await set.settled();
    return { session_id: sessionId, ...(set ? set.status() : { servers: [], staged: [] }) };
  }

  async prepare(sessionId: string): Promise<void> {
    const set = await this.load(sessionId, false);
    if (set) await set.settled();
  }

  async copyOps(from: string, to: string): Promise<StoreOp[]> {
    const stored = await readRecord<McpPersistedRecord>(this.deps.store, MCP_PERSISTED_KIND, from);
    if (!stored) return [];
    const record = await this.openRecord(from, stored);
    const cipher = await this.deps.cipher?.();
    const value = cipher ? sealMcpRecord(cipher, to, record) : record;
    return [{ op: 'putRecord', ns: MCP_RECORD_NS, key: to, value }];
  }

  /** Closes every connection (app shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.loading.values()]);
    await Promise.allSettled([...this.writes.values()]);
    const sets = [...this.sets.values()].filter((s): s is McpClientSet => s !== null);
    this.sets.clear();
    await Promise.all(sets.map((s) => s.close()));
  }
}
