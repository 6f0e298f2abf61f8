// actors/schedules/schedule-records.ts: how schedules and their occurrences sit in the realm store
// (generic records, so every backend holds them) and the compare-and-set writes on them. Every stored
// record carries `rev`, bumped on each write and checked with the store's checkRecord op, so two
// processes on one realm never both move the same occurrence.
import type { Occurrence, Schedule } from '../../contracts/schedule.ts';
import type { ScheduleMachineContext, ScheduleStateValue } from '../../machines/schedule-machine.ts';
import type { StoreOp } from '../../storage/store.ts';

export const SCHEDULE_NS = 'schedule';
export const occurrenceNs = (scheduleId: string): string => `schedule-occ:${scheduleId}`;
/** Zero-padded so the store's key order is the ordinal order. */
export const occurrenceKey = (ordinal: number): string => String(ordinal).padStart(10, '0');

/** The machine's persisted part: its state value and context (data only). */
export interface MachineState {
  value: ScheduleStateValue;
  context: ScheduleMachineContext;
}

export interface ScheduleRecord {
  v: 1;
  rev: number;
  schedule: Schedule;
  machine: MachineState;
}

export interface OccurrenceRecord {
  v: 1;
  rev: number;
  due_ms: number;
  /** Epoch ms the current claim's lease ends (claimed / dispatching / awaiting_completion). */
  lease_ms?: number;
  /** The session a dispatch went to (the crash-recovery check looks for the marker there). */
  session_id?: string;
  occ: Occurrence;
}

/** Writes `next` over a record last read at `rev` (null: must not exist yet); CONFLICT when it moved. */
export function casPut(ns: string, key: string, rev: number | null, value: { rev: number }): StoreOp[] {
  return [
    { op: 'checkRecord', ns, key, rev },
    { op: 'putRecord', ns, key, value },
  ];
}

/** The user-row marker of an occurrence's turn (SessionActor stores it as the row's identity). */
export function occurrenceMarker(occurrenceId: string): string {
  return `schedule-occurrence:${occurrenceId}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

export const iso = (ms: number): string => new Date(ms).toISOString();
