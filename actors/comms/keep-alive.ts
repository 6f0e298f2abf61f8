// actors/comms/keep-alive.ts: the comms agent actor kind ('comms_agent'): one per keep-alive session,
// driven by machines/keep-alive-machine.ts. When an admitted input wakes it, it runs one turn per input,
// oldest first, through continueSession (actors/session/session-commands.ts) with the input as the prompt; the
// turn's commit deletes the input from the inbox. Registered after the session kind, so at shutdown it
// stops (and interrupts its turn) before sessions are quiesced.
import { createActor, type ActorRefFrom } from 'xstate';
import type { Logger } from 'pino';
import { isServiceError } from '../../contracts/errors.ts';
import { keepAliveMachine, type KeepAliveEvent, type KeepAliveOutcome } from '../../machines/keep-alive-machine.ts';
import type { KindTable } from '../actor-registry.ts';
import { continueSession } from '../session/session-commands.ts';
import type { SessionHost } from '../session/session-host.ts';
import type { Inboxes } from './inbox.ts';
import { StateClock } from '../state-clock.ts';

export const COMMS_AGENT_KIND = 'comms_agent';

/** One keep-alive session's agent: its machine, and the turn it is running. */
export class CommsAgent {
  lastUsedMs: number;
  readonly machine: ActorRefFrom<typeof keepAliveMachine>;
  private abort: AbortController | null = null;
  private running: Promise<void> = Promise.resolve();
  stopped = false;
  /** When the agent entered its current state (the viewer's time in state). */
  private readonly clock: StateClock;

  constructor(
    readonly id: string,
    enabled: boolean,
    private readonly deps: AgentDeps,
  ) {
    this.lastUsedMs = deps.now();
    this.machine = createActor(keepAliveMachine, { input: { sessionId: id, enabled } });
    this.clock = new StateClock(this.machine.getSnapshot().value, this.lastUsedMs);
    let previous: unknown = null;
    this.machine.subscribe({
      next: (snap) => {
        this.clock.note(snap.value, deps.now());
        const entered = snap.value !== previous;
        previous = snap.value;
        if (entered && snap.value === 'waking' && !this.stopped) this.running = this.runNext();
      },
      error: (err) => deps.log.error({ err, sessionId: id }, 'comms agent machine error'),
    });
    this.machine.start();
  }

  state(): string {
    return String(this.machine.getSnapshot().value);
  }

  /** When the agent entered its current state (epoch ms). */
  stateSinceMs(): number {
    return this.clock.sinceMs(this.state(), this.deps.now());
  }

  send(event: KeepAliveEvent): void {
    if (this.stopped) return;
    this.lastUsedMs = this.deps.now();
    this.machine.send(event);
  }

  isBusy(): boolean {
    const s = this.state();
    return s === 'running' || s === 'waking' || s === 'blocked';
  }

  /** Runs the oldest waking input as one turn (called on entering `waking`). */
  private async runNext(): Promise<void> {
    // Let the transition into `waking` finish before the next event is sent.
    await Promise.resolve();
    let outcome: KeepAliveOutcome;
    let busyUntil: Promise<void> | undefined;
    try {
      ({ outcome, busyUntil } = await this.turn());
    } catch (err) {
      this.deps.log.error({ err, sessionId: this.id }, 'keep-alive turn failed');
      outcome = 'failed';
    }
    this.send({ type: 'turn.settled', outcome });
    if (busyUntil) {
      // Another turn (an HTTP continue) holds the session: retry once it settles.
      await busyUntil;
      this.send({ type: 'session.idle' });
    }
  }

  private async turn(): Promise<{ outcome: KeepAliveOutcome; busyUntil?: Promise<void> }> {
    const next = await this.deps.inboxes.nextWaking(this.id);
    if (!next || this.stopped) return { outcome: 'empty' };
    const actor = await this.deps.sessions.getActive(this.id);
    if (!actor.settings.keep_alive) {
      this.send({ type: 'keepalive.disabled' });
      return { outcome: 'empty' };
    }
    if (actor.isRunning()) return { outcome: 'busy', busyUntil: actor.whenSettled() };
    this.send({ type: 'turn.started' });
    const abort = new AbortController();
    this.abort = abort;
    try {
      await continueSession(
        this.deps.sessions,
        this.id,
        { session_id: this.id, prompt: next.entry.text },
        { requestId: `inbox-${next.entry.id}`, signal: abort.signal, wakeKey: next.key },
      );
      return { outcome: 'succeeded' };
    } catch (err) {
      if (isServiceError(err) && err.code === 'SESSION_BUSY') return { outcome: 'busy', busyUntil: actor.whenSettled() };
      this.deps.log.warn({ err, sessionId: this.id }, 'keep-alive turn failed; the input stays queued');
      return { outcome: 'failed' };
    } finally {
      this.abort = null;
    }
  }

  /** Stops for good: no new turns; the running one is interrupted. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.abort?.abort();
    await this.running.catch(() => {});
    this.machine.stop();
  }
}

export interface AgentDeps {
  sessions: SessionHost;
  inboxes: Inboxes;
  now(): number;
  log: Logger;
}

/** Registers the comms agent kind; hydrating an agent reads the session's keep_alive setting. */
export function registerAgents(deps: AgentDeps): KindTable<CommsAgent> {
  return deps.sessions.sup.registry.register<CommsAgent>({
    kind: COMMS_AGENT_KIND,
    policy: { idleEvictMs: 10 * 60_000, maxResident: 100_000 },
    hydrate: async (id) => {
      const actor = await deps.sessions.getActive(id).catch(() => undefined);
      if (!actor?.settings.keep_alive || !actor.settings.comms_name) return undefined;
      return new CommsAgent(id, true, deps);
    },
    busy: (a) => a.isBusy(),
    stop: (a) => a.stop(),
    quiesce: async (a) => {
      a.stopped = true;
    },
    describe: (a) => ({ state: a.state(), sinceMs: a.stateSinceMs() }),
  });
}
