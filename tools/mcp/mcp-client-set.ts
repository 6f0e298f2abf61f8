// tools/mcp/mcp-client-set.ts: the MCP servers of one session. Servers connect in parallel in the
// background; add/remove/reload are staged and applied only at a turn boundary (`applyAtBoundary`, called
// when a turn builds its tool set, then `tools()`), never in the middle of a turn. A staged add or reload starts its new
// connection at once, so it is usually ready by the boundary that swaps it in. actors/mcp-live.ts owns one
// set per hosted session.
import type { McpOperation, McpServerConfig, McpServerStatus, McpStagedOp } from '../../contracts/mcp.ts';
import type { Tool } from '../tool.ts';
import { McpConnection } from './mcp-connection.ts';
import { namespacedToolName } from './mcp-names.ts';

export type McpSource = 'config' | 'session';

export interface McpClientSetOptions {
  clientInfo: { name: string; version: string };
  /** Working directory of stdio servers. */
  cwd?: string;
  /** fetch of url servers (the outbound guard's); default: the global one. */
  fetch?: typeof fetch;
  /** Time limit of one tool call (ms), read per call so config changes apply. */
  callTimeoutMs(): number;
  /** Publishes a session event (`mcp_server_status`, `mcp_changes_applied`). */
  emit(kind: string, payload: Record<string, unknown>): void;
}

interface Member {
  conn: McpConnection;
  source: McpSource;
  appliedAtTurn?: number;
}

type Staged =
  | { operation: 'add'; name: string; conn: McpConnection; source: McpSource; persisted: boolean }
  | { operation: 'remove'; name: string; persisted: boolean }
  | { operation: 'reload'; name?: string; conns: McpConnection[]; persisted: boolean };

export class McpClientSet {
  private readonly active = new Map<string, Member>();
  private staged: Staged[] = [];
  private closed = false;

  constructor(
    initial: ReadonlyArray<{ config: McpServerConfig; source: McpSource }>,
    private readonly opts: McpClientSetOptions,
  ) {
    for (const { config, source } of initial) this.active.set(config.name, { conn: this.open(config, false), source });
  }

  private open(config: McpServerConfig, staged: boolean): McpConnection {
    return new McpConnection(config, {
      clientInfo: this.opts.clientInfo,
      ...(this.opts.cwd ? { cwd: this.opts.cwd } : {}),
      ...(this.opts.fetch ? { fetch: this.opts.fetch } : {}),
      onChange: (conn) => {
        if (this.closed) return;
        this.opts.emit('mcp_server_status', {
          server_name: conn.name,
          state: conn.state,
          staged,
          tool_count: conn.tools.length,
          ...(conn.failure ? { error: conn.failure } : {}),
        });
      },
    });
  }

  /** Server configs as they will be after the staged operations are applied. */
  private pendingView(): Map<string, { config: McpServerConfig; source: McpSource }> {
    const view = new Map<string, { config: McpServerConfig; source: McpSource }>();
    for (const [name, m] of this.active) view.set(name, { config: m.conn.config, source: m.source });
    for (const op of this.staged) {
      if (op.operation === 'add') view.set(op.name, { config: op.conn.config, source: op.source });
      else if (op.operation === 'remove') view.delete(op.name);
    }
    return view;
  }

  /** Whether `name` is (or will be, after the staged operations) a server of this session. */
  knows(name: string): boolean {
    return this.pendingView().has(name);
  }

  stageAdd(config: McpServerConfig, persisted: boolean, source: McpSource = 'session'): void {
    this.staged.push({ operation: 'add', name: config.name, conn: this.open(config, true), source, persisted });
  }

  /** False when no such server is (or will be) on the session. */
  stageRemove(name: string, persisted: boolean): boolean {
    if (!this.knows(name)) return false;
    this.staged.push({ operation: 'remove', name, persisted });
    return true;
  }

  /** Reconnects one server, or every server when `name` is undefined. False for an unknown name. */
  stageReload(name: string | undefined, persisted: boolean): boolean {
    const view = this.pendingView();
    if (name !== undefined && !view.has(name)) return false;
    const targets = name !== undefined ? [view.get(name)!.config] : [...view.values()].map((v) => v.config);
    this.staged.push({
      operation: 'reload',
      ...(name !== undefined ? { name } : {}),
      conns: targets.map((c) => this.open(c, true)),
      persisted,
    });
    return true;
  }

  private replace(name: string, member: Member): void {
    const old = this.active.get(name);
    if (old && old.conn !== member.conn) closeQuietly(old.conn);
    this.active.set(name, member);
  }

  /**
   * Applies the staged operations in order (turn boundary). Returns what was applied (empty when nothing
   * was staged); a `mcp_changes_applied` event carries the same with `applied_at_turn`.
   */
  applyAtBoundary(turn: number): Array<{ operation: McpOperation; server_name?: string }> {
    const ops = this.staged;
    if (ops.length === 0) return [];
    this.staged = [];
    const applied: Array<{ operation: McpOperation; server_name?: string }> = [];
    for (const op of ops) {
      if (op.operation === 'add') this.replace(op.name, { conn: op.conn, source: op.source, appliedAtTurn: turn });
      else if (op.operation === 'remove') {
        const gone = this.active.get(op.name);
        if (gone) closeQuietly(gone.conn);
        this.active.delete(op.name);
      } else {
        for (const conn of op.conns) {
          const current = this.active.get(conn.name);
          // Removed by an earlier operation of this batch: the fresh connection has nothing to replace.
          if (!current) closeQuietly(conn);
          else this.replace(conn.name, { conn, source: current.source, appliedAtTurn: turn });
        }
      }
      applied.push({ operation: op.operation, ...('name' in op && op.name !== undefined ? { server_name: op.name } : {}) });
    }
    this.opts.emit('mcp_changes_applied', { applied_at_turn: turn, changes: applied });
    return applied;
  }

  /**
   * The tools of the turn that starts now: every tool of each current member that is ready, as tools a
   * session's tool set dispatches like any builtin. A server that dies mid-turn answers error results.
   */
  tools(): Tool[] {
    const timeoutMs = () => this.opts.callTimeoutMs();
    const out: Tool[] = [];
    const members = [...this.active.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, m]) => m.conn);
    for (const conn of members) {
      if (conn.state !== 'ready') continue;
      for (const t of conn.tools) {
        out.push({
          name: namespacedToolName(conn.name, t.name),
          description: t.description ?? `${t.name} (MCP server ${conn.name})`,
          input_schema: t.inputSchema,
          execute: (args, ctx) => conn.call(t.name, args, ctx.signal, timeoutMs()),
        });
      }
    }
    return out;
  }

  /** Every server (current members) with its state and tool names, plus the staged operations. */
  status(): { servers: McpServerStatus[]; staged: McpStagedOp[] } {
    const servers = [...this.active.values()].map(({ conn, source, appliedAtTurn }): McpServerStatus => ({
      name: conn.name,
      source,
      transport: conn.kind,
      ...connectionView(conn),
      ...(appliedAtTurn !== undefined ? { applied_at_turn: appliedAtTurn } : {}),
    }));
    servers.sort((a, b) => a.name.localeCompare(b.name));
    const staged = this.staged.map((op): McpStagedOp => {
      // The connection a staged add (or one-server reload) opened: shown so a caller that waited sees it.
      const conn = op.operation === 'add' ? op.conn : op.operation === 'reload' && op.name !== undefined ? op.conns[0] : undefined;
      return {
        operation: op.operation,
        persisted: op.persisted,
        ...('name' in op && op.name !== undefined ? { server_name: op.name } : {}),
        ...(conn ? connectionView(conn) : {}),
      };
    });
    return { servers, staged };
  }

  private connections(): McpConnection[] {
    const all = [...this.active.values()].map((m) => m.conn);
    for (const op of this.staged) {
      if (op.operation === 'add') all.push(op.conn);
      else if (op.operation === 'reload') all.push(...op.conns);
    }
    return all;
  }

  /** Resolves once no connection (current or staged) is still connecting; each is bounded by its timeout. */
  async settled(): Promise<void> {
    for (;;) {
      const pending = this.connections().filter((c) => c.state === 'connecting');
      if (pending.length === 0) return;
      await Promise.all(pending.map((c) => c.settled));
    }
  }

  /** Closes every connection (session archived, server shutting down). */
  async close(): Promise<void> {
    this.closed = true;
    const all = this.connections();
    this.active.clear();
    this.staged = [];
    await Promise.all(all.map((c) => c.close()));
  }
}

/** A connection's state, its namespaced tools (empty unless ready) and its failure, if any. */
function connectionView(conn: McpConnection): Pick<McpServerStatus, 'state' | 'tools' | 'error'> {
  return {
    state: conn.state,
    tools: conn.state === 'ready' ? conn.tools.map((t) => namespacedToolName(conn.name, t.name)) : [],
    ...(conn.failure ? { error: { kind: conn.failure.kind, message: conn.failure.message } } : {}),
  };
}

/** Closes a connection nobody waits on: a close that fails leaves nothing further to release. */
function closeQuietly(conn: McpConnection): void {
  conn.close().catch(() => undefined);
}
