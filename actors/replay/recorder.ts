// actors/replay/recorder.ts: the turn recorder the session actor calls (RuntimeDeps.recorder). For each
// turn it wraps the provider and the tool set: every model call (the request's parts not already in the
// transcript plus a hash of its messages, the normalized reply, its duration) and every tool result (with
// its duration) are kept in memory and committed as one record in the turn's own commit. A session being
// replayed gets a replay provider and a replay tool set instead (answered from the source's recording,
// checked call by call); a session being re-run gets recorded tool results where the calls match.
import { ServiceError } from '../../contracts/errors.ts';
import {
  RECORDING_BLOB_NS,
  recordingNs,
  type Divergence,
  type RecordedCall,
  type RecordedTool,
  type TurnRecording,
} from '../../contracts/replay.ts';
import type { AssistantBlock, Message, StopReason, ProviderUsage } from '../../contracts/transcript.ts';
import type { Provider, ProviderRequest, ProviderResponse, StreamEvent } from '../../providers/provider.ts';
import type { StoreOp } from '../../storage/store.ts';
import type { HookEntryConfig } from '../../contracts/turn-features.ts';
import type { TurnToolset } from '../session/turn-runner.ts';
import type { RunFeatureRequest } from '../turn-features/run-features.ts';
import { canonicalJson, firstDiff, recordRequest, sha256, toolsDigest } from './canonical.ts';
import { hookSummary } from './hook-summary.ts';
import { sealFeatures } from './sealed-override.ts';
import type { RealmCipher } from '../auth/realm-key.ts';

/** `[record]` settings (contracts/replay.ts RecordSection). */
export interface RecordSettings {
  enabled: boolean;
  raw_streams: boolean;
  raw_stream_max_bytes: number;
}

/** What the session actor tells the recorder when a turn starts. */
export interface TurnStart {
  sessionId: string;
  requestId: string;
  startedMs: number;
  newRows: readonly Message[];
  transientContext?: string;
  /** The request's run features as sent (output_schema, hooks_override, budget_limits...). */
  features?: RunFeatureRequest;
}

/** The hook entries a run with this override runs (the `[hooks]` config plus the override). */
export type HookEntriesFor = (override: RunFeatureRequest['hooks_override']) => HookEntryConfig[];

/** One turn's recorder: wraps the provider and tool set, then contributes ops to the turn's commit. */
export interface ActiveTurnRecorder {
  provider(p: Provider, providerName: string): Provider;
  toolset(t: TurnToolset | null): TurnToolset | null;
  /** The recording op for the turn's commit; `atRow` is where the turn's rows start, `rows` how many. */
  commitOps(atRow: number, rows: number): StoreOp[];
  /** Model calls made after the commit (structured-output extraction), as a second write; [] if none. */
  lateOps(): StoreOp[];
}

export interface TurnRecorderPort {
  begin(t: TurnStart): ActiveTurnRecorder | undefined;
}

/** The replay of one recorded turn: what the replay provider and tool set answer and check against. */
export class ReplayCursor {
  call = 0;
  tool = 0;
  divergence?: Divergence;
  constructor(
    readonly turn: number,
    readonly rec: TurnRecording,
    /** The source's tool definition lists by hash (to name the differing field of a changed list). */
    readonly blobs: ReadonlyMap<string, unknown> = new Map(),
  ) {}

  diverge(d: Omit<Divergence, 'turn'>): ServiceError {
    this.divergence ??= { turn: this.turn, ...d };
    return new ServiceError('AGENT_ERROR', `replay diverged at turn ${this.turn}, call ${d.call}: ${d.path}`, {
      error: { kind: 'replay_divergence' },
    });
  }
}

/** A re-run turn: tool calls that match the recording (name and arguments) are answered from it. */
export class RerunCursor {
  served = 0;
  constructor(readonly rec: TurnRecording | undefined) {}
}

type Mode = { kind: 'replay'; cursor: () => ReplayCursor } | { kind: 'rerun'; cursor: () => RerunCursor };

function textDeltas(blocks: readonly AssistantBlock[], onEvent: (e: StreamEvent) => void): void {
  for (const b of blocks) {
    if (b.block_type === 'text' && b.data.text) onEvent({ type: 'text_delta', delta: b.data.text });
  }
}

export class TurnRecorder implements TurnRecorderPort {
  /** Sessions being replayed or re-run (in memory: a replay runs in this process). */
  private readonly modes = new Map<string, Mode>();
  /** Blob hashes this process has written: a tool list is stored once per realm, not per session or call. */
  readonly written = new Set<string>();

  constructor(
    private readonly settings: () => RecordSettings,
    private readonly now: () => number = Date.now,
    private readonly hookEntries: HookEntriesFor = () => [],
    /** The realm key: a recorded `hooks_override` is sealed with it (sealed-override.ts). */
    private readonly cipher: () => RealmCipher | undefined = () => undefined,
  ) {}

  attach(sessionId: string, mode: Mode): void {
    this.modes.set(sessionId, mode);
  }
  detach(sessionId: string): void {
    this.modes.delete(sessionId);
  }

  begin(t: TurnStart): ActiveTurnRecorder | undefined {
    const cfg = this.settings();
    const mode = this.modes.get(t.sessionId);
    if (!cfg.enabled && !mode) return undefined;
    if (this.written.size > 100_000) this.written.clear();
    // A replay of an imported recording computes its hooks' summary under the export's salt (hook-summary.ts).
    const salt = mode?.kind === 'replay' ? mode.cursor().rec.hook_salt : undefined;
    const hooks = hookSummary(this.hookEntries(t.features?.hooks_override), salt);
    return new ActiveTurn(t, cfg, this.now, mode, this.written, hooks, salt, this.cipher);
  }
}

/** The turn's input as recorded; the realm cipher is asked for only when run features must be sealed. */
function turnInput(t: TurnStart, cipher: () => RealmCipher | undefined): TurnRecording['input'] {
  const input: TurnRecording['input'] = { prompt: null };
  const injected: unknown[] = [];
  for (const row of t.newRows) {
    if (row.role === 'system') input.system_append = row.content;
    else if (row.role === 'user' && row.transcript_role === 'injected_context') injected.push(row.content);
    else if (row.role === 'user') input.prompt = row.content;
  }
  if (injected.length) input.injected_context = injected;
  if (t.transientContext) input.transient_context = t.transientContext;
  if (t.features)
    input.features = sealFeatures(JSON.parse(canonicalJson(t.features)) as NonNullable<TurnRecording['input']['features']>, cipher());
  return input;
}

class ActiveTurn implements ActiveTurnRecorder {
  private readonly calls: RecordedCall[] = [];
  private readonly tools: RecordedTool[] = [];
  /** Tool-use blocks of the latest reply, in order: the k-th dispatch is the k-th of them. */
  private pendingUses: Array<{ id: string; name: string; args: unknown }> = [];
  /** Tool definition lists seen by this turn's calls, by hash. */
  private readonly blobs = new Map<string, unknown>();
  private committed = false;
  private lateFrom = -1;
  private key: string;
  /** sha256 of the run's hook summary (hook-summary.ts); undefined when the run has no hook. */
  private readonly hooksHash: string | undefined;

  constructor(
    private readonly t: TurnStart,
    private readonly cfg: RecordSettings,
    private readonly now: () => number,
    private readonly mode: Mode | undefined,
    private readonly written: Set<string>,
    private readonly hooks: unknown[],
    /** The salt the hooks' hashes are keyed under (a replay of an imported recording), kept in the recording. */
    private readonly hookSalt: string | undefined,
    private readonly cipher: () => RealmCipher | undefined,
  ) {
    this.key = `${String(t.startedMs).padStart(15, '0')}-${t.requestId}`;
    this.hooksHash = hooks.length ? sha256(canonicalJson(hooks)) : undefined;
    if (this.hooksHash) this.blobs.set(this.hooksHash, hooks);
  }

  provider(p: Provider, providerName: string): Provider {
    const inner = this.mode?.kind === 'replay' ? this.replayProvider(p, this.mode.cursor(), providerName) : p;
    return {
      name: p.name,
      preflight: this.mode?.kind === 'replay' ? undefined : p.preflight?.bind(p),
      call: async (req, onEvent, onRetry) => {
        const started = this.now();
        const raw: StreamEvent[] = [];
        let rawBytes = 0;
        let rawTruncated = false;
        const reply = await inner.call(
          req,
          (e) => {
            if (this.cfg.raw_streams) {
              const n = e.delta.length + 32;
              if (rawBytes + n <= this.cfg.raw_stream_max_bytes) {
                raw.push(e);
                rawBytes += n;
              } else rawTruncated = true;
            }
            onEvent(e);
          },
          onRetry,
        );
        const request = recordRequest(req, providerName, this.hooksHash);
        if (!this.blobs.has(request.tools_hash)) this.blobs.set(request.tools_hash, toolsDigest(req.tools).canonical);
        const call: RecordedCall = {
          request,
          response: { blocks: reply.blocks, stop_reason: reply.stop_reason, usage: reply.usage },
          duration_ms: this.now() - started,
        };
        if (this.cfg.raw_streams) {
          call.raw = raw;
          if (rawTruncated) call.raw_truncated = true;
        }
        if (this.committed && this.lateFrom < 0) this.lateFrom = this.calls.length;
        this.calls.push(call);
        this.pendingUses = reply.blocks.flatMap((b) => (b.block_type === 'tool_use' ? [b.data] : []));
        return reply;
      },
    };
  }

  toolset(t: TurnToolset | null): TurnToolset | null {
    if (!t) return t;
    const mode = this.mode;
    const base =
      mode?.kind === 'replay' ? this.replayTools(t, mode.cursor()) : mode?.kind === 'rerun' ? this.rerunTools(t, mode.cursor()) : t;
    return {
      specs: t.specs,
      dispatch: async (name, args, ctx) => {
        const use = this.pendingUses.shift();
        const started = this.now();
        const outcome = await base.dispatch(name, args, ctx);
        const rec: RecordedTool = {
          id: use?.id ?? '',
          name,
          args_hash: sha256(canonicalJson(args ?? null)),
          content: outcome.content,
          duration_ms: this.now() - started,
        };
        if (outcome.is_error) rec.is_error = true;
        if (outcome.timed_out) rec.timed_out_ms = outcome.timed_out.timeout_ms;
        this.tools.push(rec);
        return outcome;
      },
    };
  }

  private recording(atRow: number, rows: number, calls: RecordedCall[], late?: boolean): TurnRecording {
    const r: TurnRecording = {
      v: 1,
      started_at_ms: this.t.startedMs,
      request_id: this.t.requestId,
      at_row: atRow,
      rows,
      input: turnInput(this.t, this.cipher),
      calls,
      tools: this.tools.slice(),
    };
    if (late) r.late = true;
    if (this.hookSalt && this.hooksHash) r.hook_salt = this.hookSalt;
    return r;
  }

  private atRow = 0;
  private rows = 0;

  commitOps(atRow: number, rows: number): StoreOp[] {
    if (!this.cfg.enabled) return [];
    this.committed = true;
    this.atRow = atRow;
    this.rows = rows;
    return [
      ...this.blobOps(),
      { op: 'putRecord', ns: recordingNs(this.t.sessionId), key: this.key, value: this.recording(atRow, rows, this.calls.slice()) },
    ];
  }

  private blobOps(): StoreOp[] {
    const ops: StoreOp[] = [];
    for (const [hash, value] of this.blobs) {
      if (this.written.has(hash)) continue;
      this.written.add(hash);
      ops.push({ op: 'putRecord', ns: RECORDING_BLOB_NS, key: hash, value });
    }
    return ops;
  }

  lateOps(): StoreOp[] {
    if (!this.cfg.enabled || this.lateFrom < 0) return [];
    // The turn's record is rewritten whole with the extraction calls appended (marked `late`).
    return [
      { op: 'putRecord', ns: recordingNs(this.t.sessionId), key: this.key, value: this.recording(this.atRow, this.rows, this.calls, true) },
    ];
  }

  /** Answers each model call from the recording after checking the request Warren would send now. */
  private replayProvider(p: Provider, cursor: ReplayCursor, providerName: string): Provider {
    return {
      name: p.name,
      call: async (req: ProviderRequest, onEvent): Promise<ProviderResponse> => {
        if (cursor.divergence) throw cursor.diverge(cursor.divergence);
        const index = cursor.call++;
        const recorded = cursor.rec.calls[index];
        if (!recorded)
          throw cursor.diverge({ kind: 'turn', call: index, path: 'calls.length', recorded: cursor.rec.calls.length, now: index + 1 });
        const now = recordRequest(req, providerName, this.hooksHash);
        let d = firstDiff(recorded.request, now);
        // A changed tool list: name the differing field of the definitions (the source's list is a blob).
        if (d?.path === 'tools_hash' || d?.path === 'tools_count') {
          const was = cursor.blobs.get(recorded.request.tools_hash);
          d = firstDiff(was ?? null, toolsDigest(req.tools).canonical, 'tools') ?? d;
        }
        // Changed hooks: name the differing field of the entries (no hooks recorded is an empty list).
        if (d?.path === 'hooks_hash') {
          const was = recorded.request.hooks_hash ? cursor.blobs.get(recorded.request.hooks_hash) : [];
          d = firstDiff(was ?? null, this.hooks, 'hooks') ?? d;
        }
        if (d) throw cursor.diverge({ kind: 'request', call: index, path: d.path, recorded: d.a, now: d.b });
        const blocks = recorded.response.blocks as AssistantBlock[];
        textDeltas(blocks, onEvent);
        return { blocks, stop_reason: recorded.response.stop_reason as StopReason, usage: recorded.response.usage as ProviderUsage };
      },
    };
  }

  /** Returns the recorded result of each tool call (never runs a tool); a different call is a divergence. */
  private replayTools(t: TurnToolset, cursor: ReplayCursor): TurnToolset {
    return {
      specs: t.specs,
      dispatch: async (name, args) => {
        const index = cursor.tool++;
        const recorded = cursor.rec.tools[index];
        const call = Math.max(0, cursor.call - 1);
        if (!recorded) throw cursor.diverge({ kind: 'tool', call, path: `tools[${index}]`, recorded: null, now: name });
        if (recorded.name !== name)
          throw cursor.diverge({ kind: 'tool', call, path: `tools[${index}].name`, recorded: recorded.name, now: name });
        const hash = sha256(canonicalJson(args ?? null));
        if (hash !== recorded.args_hash)
          throw cursor.diverge({ kind: 'tool', call, path: `tools[${index}].args`, recorded: recorded.args_hash, now: hash });
        return {
          content: recorded.content,
          ...(recorded.is_error ? { is_error: true } : {}),
          ...(recorded.timed_out_ms !== undefined ? { timed_out: { timeout_ms: recorded.timed_out_ms } } : {}),
        };
      },
    };
  }

  /** A re-run's tools: a call matching an unused recorded one (name and arguments) gets its result. */
  private rerunTools(t: TurnToolset, cursor: RerunCursor): TurnToolset {
    const unused = [...(cursor.rec?.tools ?? [])];
    return {
      specs: t.specs,
      dispatch: async (name, args, ctx) => {
        const hash = sha256(canonicalJson(args ?? null));
        const i = unused.findIndex((r) => r.name === name && r.args_hash === hash);
        if (i < 0) return t.dispatch(name, args, ctx);
        const [r] = unused.splice(i, 1);
        cursor.served++;
        return { content: r.content, ...(r.is_error ? { is_error: true } : {}) };
      },
    };
  }
}
