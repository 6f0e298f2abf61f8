// actors/mob/mob-wiring.ts: a mob's wiring. The edges between members and their installed routes live in
// the mob record (pure functions below, over MobRecord); MobWiring adds the commands that change them
// and tell the members (wire, unwire, background route installs), on the host's members and ledger.
import type { MobRecord } from '../../contracts/mob.ts';
import { ServiceError } from '../../contracts/errors.ts';
import type { MemberRuntime, MobActor } from './mob-actor.ts';
import type { MobHost } from './mob-host.ts';

type Pair = [string, string];
type Notice = 'mob.peer_added' | 'mob.peer_retired' | 'mob.peer_unwired';

/** A wired pair in its stored order (edges and installed routes are kept as sorted pairs). */
function pairOf(a: string, b: string): Pair {
  return a < b ? [a, b] : [b, a];
}

const samePair = (e: readonly [string, string], p: Pair): boolean => e[0] === p[0] && e[1] === p[1];

/** The members wired to `identity`. */
export function peersOf(record: MobRecord, identity: string): string[] {
  return record.edges.filter((e) => e.includes(identity)).map((e) => (e[0] === identity ? e[1] : e[0]));
}

/** Removes every edge of `identity`; answers the peers it was wired to. */
export function unwireAll(record: MobRecord, identity: string): string[] {
  const peers = peersOf(record, identity);
  record.edges = record.edges.filter((e) => !e.includes(identity));
  return peers;
}

/** True when the wired pair's route is installed (both told of each other). */
export function isInstalled(record: MobRecord, a: string, b: string): boolean {
  const p = pairOf(a, b);
  return (record.installed ?? []).some((e) => samePair(e, p));
}

export function setInstalled(record: MobRecord, a: string, b: string, on: boolean): void {
  const p = pairOf(a, b);
  const rest = (record.installed ?? []).filter((e) => !samePair(e, p));
  record.installed = on ? [...rest, p] : rest;
}

/** Drops the installed routes of `identity` (its session is gone or about to change). */
export function uninstallAll(record: MobRecord, identity: string): void {
  record.installed = (record.installed ?? []).filter((e) => !e.includes(identity));
}

export class MobWiring {
  constructor(private readonly host: MobHost) {}

  /**
   * A lifecycle notice from one member to another over comms: false when either member's session is not
   * ready (no completed kickoff) or the notice could not be delivered; true without comms once both are
   * ready (nothing to deliver).
   */
  async notify(mob: MobActor, from: string, to: string, kind: Notice): Promise<boolean> {
    const a = mob.members.get(from)?.record;
    const b = mob.members.get(to)?.record;
    if (!a?.session_id || !b?.session_id || a.kickoff !== 'completed' || b.kickoff !== 'completed') return false;
    const sessions = this.host.sessions;
    if (!sessions.comms) return true;
    return sessions.notify(a.session_id, b.session_id, kind, b.session_id, b.role);
  }

  /** Tells both members of a pair of each other; true when both notices were delivered. */
  async notifyPair(mob: MobActor, a: string, b: string, kind: Notice): Promise<boolean> {
    return (await this.notify(mob, a, b, kind)) && (await this.notify(mob, b, a, kind));
  }

  /**
   * Installs the routes of wired pairs in the background, once both kickoffs settled: each member is told
   * of the other; a pair both of whose notices were delivered is recorded installed. The rest stay
   * outstanding (GET /mob/{id}/route-installs) until a respawn installs them again.
   */
  installRoutes(mob: MobActor, pairs: ReadonlyArray<readonly [string, string]>): void {
    for (const [a, b] of pairs) {
      const members = [a, b].map((id) => mob.members.get(id)).filter((m): m is MemberRuntime => m !== undefined);
      if (members.length < 2) continue;
      const notice = Promise.all(members.map((m) => m.kickoff))
        .then(async () => {
          const ok = await this.notifyPair(mob, a, b, 'mob.peer_added');
          const wired = mob.record.edges.some((e) => e.includes(a) && e.includes(b));
          if (ok && wired && !this.host.closing) {
            setInstalled(mob.record, a, b, true);
            await mob.persist(this.host.now());
          }
        })
        .catch(() => undefined)
        .finally(() => mob.notices.delete(notice));
      mob.notices.add(notice);
    }
  }

  /** Wires `edges`; answers the reference's shape: the edges wired now and those already wired, as requested. */
  async wire(
    mob: MobActor,
    edges: ReadonlyArray<{ a: string; b: string }>,
  ): Promise<{ requested: number; wired: Array<{ a: string; b: string }>; already_wired: Array<{ a: string; b: string }> }> {
    for (const { a, b } of edges) {
      if (a === b) throw new ServiceError('BAD_REQUEST', `a member is not wired to itself: ${a}`);
      for (const id of [a, b])
        if (this.host.member(mob, id).state === 'retired') throw new ServiceError('BAD_REQUEST', `member ${id} is retired`);
    }
    const added: Pair[] = [];
    const wired: Array<{ a: string; b: string }> = [];
    const already: Array<{ a: string; b: string }> = [];
    for (const { a, b } of edges) {
      const pair = pairOf(a, b);
      if (mob.record.edges.some((e) => samePair(e, pair)) || added.some((e) => samePair(e, pair))) {
        already.push({ a, b });
        continue;
      }
      added.push(pair);
      wired.push({ a, b });
    }
    mob.record.edges.push(...added);
    if (added.length) mob.bump();
    await mob.persist(this.host.now());
    // Peers are told once both kickoffs settled, in the background: wiring never waits on a slow kickoff.
    this.installRoutes(mob, added);
    const counts = { requested: edges.length, wired: added.length, already_wired: already.length };
    await this.host.emit(mob, 'members_wired', { data: { ...counts, edges: added.map(([a, b]) => ({ a, b })) } });
    return { requested: edges.length, wired, already_wired: already };
  }

  async unwire(mob: MobActor, a: string, b: string): Promise<boolean> {
    const pair = pairOf(a, b);
    const before = mob.record.edges.length;
    mob.record.edges = mob.record.edges.filter((e) => !samePair(e, pair));
    if (mob.record.edges.length === before) return false;
    mob.bump();
    setInstalled(mob.record, a, b, false);
    await mob.persist(this.host.now());
    await this.notify(mob, a, b, 'mob.peer_unwired');
    await this.notify(mob, b, a, 'mob.peer_unwired');
    await this.host.emit(mob, 'members_unwired', { data: { a, b } });
    return true;
  }
}
