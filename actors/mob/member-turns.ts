// actors/mob/member-turns.ts: the turns a mob runs on its members' sessions. A member's kickoff (its
// session's create turn, started at spawn and respawn), prompts dispatched to it (continue turns, one
// after another on the member's lane; a flow run's signal ends one), stopping its work in flight, and
// waiting for kickoffs. Each turn moves the member's machine and goes to the live agent tap
// (mob-agent-events.ts); its end goes to the durable ledger. MobHost (mob-host.ts) holds the membership
// these turns run on.
import { ServiceError } from '../../contracts/errors.ts';
import type { MemberRecord } from '../../contracts/mob.ts';
import type { ContentInput } from '../../contracts/transcript.ts';
import type { TurnReply } from '../session/session-commands.ts';
import type { MemberRuntime, MobActor } from './mob-actor.ts';
import type { MobHost } from './mob-host.ts';
import { uuidv7 } from '../uuidv7.ts';

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export class MemberTurns {
  constructor(private readonly host: MobHost) {}

  /** Starts the member's kickoff on a fresh session; the member's `kickoff` and `lane` follow it. */
  kickoff(mob: MobActor, m: MemberRuntime, prompt?: string, injected?: ContentInput[]): Promise<TurnReply> {
    const { host } = this;
    const spec = m.record.spec;
    const sessionId = uuidv7();
    m.record.session_id = sessionId;
    m.record.kickoff = 'pending';
    delete m.record.last_error;
    m.abort = new AbortController();
    const signal = m.abort.signal;
    const identity = m.record.agent_identity;
    const text =
      prompt ?? spec.initial_message ?? `You are ${identity}, a ${m.record.role} in mob ${mob.id}. Reply with a short acknowledgement.`;
    mob.inFlight++;
    const run = (async () => {
      host.agentEvents.publish(mob.id, identity, 'run_started', { session_id: sessionId, kickoff: true }, host.now());
      try {
        const reply = await host.sessions.kickoff({
          sessionId,
          prompt: text,
          signal,
          ...(injected ? { injected } : {}),
          ...(spec.instructions ? { systemPrompt: spec.instructions } : {}),
          ...(spec.model ? { model: spec.model } : {}),
          ...(spec.provider ? { provider: spec.provider } : {}),
          commsName: `${mob.id}.${identity}`,
          member: { mob_id: mob.id, agent_identity: identity },
        });
        m.record.kickoff = 'completed';
        m.send({ type: 'kickoff.done' });
        host.agentEvents.publish(mob.id, identity, 'run_completed', { session_id: sessionId, text: reply.text }, host.now());
        await host.emit(mob, 'member_kickoff_completed', {
          agent_identity: identity,
          data: { session_id: sessionId, generation: m.record.generation },
        });
        return reply;
      } catch (err) {
        if (host.closing) throw err;
        m.record.kickoff = 'failed';
        m.record.last_error = messageOf(err);
        m.send({ type: 'kickoff.failed' });
        host.agentEvents.publish(mob.id, identity, 'run_failed', { session_id: sessionId, error: messageOf(err) }, host.now());
        await host.emit(mob, 'member_kickoff_failed', { agent_identity: identity, data: { session_id: sessionId, error: messageOf(err) } });
        throw err;
      } finally {
        mob.inFlight--;
        if (!host.closing) await mob.persist(host.now()).catch(() => undefined);
      }
    })();
    m.kickoff = run.then(
      () => undefined,
      () => undefined,
    );
    m.lane = m.kickoff;
    return run;
  }

  /**
   * Runs one prompt on a member (after its kickoff and earlier dispatches). `signal` (a flow run's) ends
   * it: not started yet, it never runs; running, the member session's turn is interrupted.
   */
  async dispatch(
    mob: MobActor,
    identity: string,
    text: string,
    ctx: { runId?: string; stepId?: string; signal?: AbortSignal } = {},
  ): Promise<TurnReply> {
    const m = this.host.member(mob, identity);
    mob.inFlight++;
    const turn = m.lane.then(async () => {
      if (ctx.signal?.aborted) throw new ServiceError('REQUEST_CANCELLED', 'the flow run was canceled before this step ran');
      if (m.state !== 'active')
        throw new ServiceError('BAD_REQUEST', `member ${identity} of mob ${mob.id} is ${m.state}`, {
          agent_identity: identity,
          state: m.state,
        });
      const sessionId = m.record.session_id!;
      const onAbort = () => this.host.sessions.interrupt(sessionId);
      ctx.signal?.addEventListener('abort', onAbort, { once: true });
      try {
        return await this.run(mob, m, identity, sessionId, text, ctx);
      } finally {
        ctx.signal?.removeEventListener('abort', onAbort);
      }
    });
    m.lane = turn.catch(() => undefined);
    try {
      return await turn;
    } finally {
      mob.inFlight--;
    }
  }

  private async run(
    mob: MobActor,
    m: MemberRuntime,
    identity: string,
    sessionId: string,
    text: string,
    ctx: { runId?: string; stepId?: string },
  ): Promise<TurnReply> {
    const { host } = this;
    m.send({ type: 'turn.start' });
    host.agentEvents.publish(
      mob.id,
      identity,
      'run_started',
      { session_id: sessionId, ...(ctx.runId ? { run_id: ctx.runId } : {}) },
      host.now(),
    );
    try {
      const reply = await host.sessions.prompt(sessionId, text, m.abort.signal);
      m.send({ type: 'turn.done' });
      host.agentEvents.publish(mob.id, identity, 'run_completed', { session_id: sessionId, text: reply.text }, host.now());
      return reply;
    } catch (err) {
      m.send({ type: 'turn.failed' });
      host.agentEvents.publish(mob.id, identity, 'run_failed', { session_id: sessionId, error: messageOf(err) }, host.now());
      await host.emit(mob, 'member_turn_failed', {
        agent_identity: identity,
        run_id: ctx.runId ?? null,
        step_id: ctx.stepId ?? null,
        data: { error: messageOf(err) },
      });
      throw err;
    }
  }

  /** Aborts the member's work in flight and (unless told not to) interrupts its session's turn. */
  stop(m: MemberRuntime, interrupt = true): void {
    m.abort.abort(new ServiceError('REQUEST_CANCELLED', 'member cancelled'));
    if (interrupt && m.record.session_id) this.host.sessions.interrupt(m.record.session_id);
  }

  /** Waits until the named members' (default: all) kickoffs settled, or the timeout passes. */
  async waitKickoff(mob: MobActor, ids: readonly string[] | undefined, timeoutMs: number | undefined): Promise<MemberRecord[]> {
    const members = ids ? ids.map((id) => this.host.member(mob, id)) : [...mob.members.values()];
    const all = Promise.all(members.map((m) => m.kickoff)).then(() => Promise.all([...mob.notices]));
    if (timeoutMs === undefined) await all;
    else {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([all, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
      clearTimeout(timer);
    }
    return members.map((m) => m.record);
  }
}
