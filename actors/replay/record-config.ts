// actors/replay/record-config.ts: what the turn recorder reads from the live config at each turn: the
// `[record]` section with its defaults (parsed once per config generation) and the hook entries a run
// executes (the `[hooks]` entries plus the run's override, when the turn-features module is installed).
import { Value } from 'typebox/value';
import type { Config } from '../../contracts/config.ts';
import { RecordSection } from '../../contracts/replay.ts';
import type { RuntimeDeps } from '../supervisor.ts';
import { runEntries } from '../turn-features/hook-engine.ts';
import type { HookEntriesFor, RecordSettings } from './recorder.ts';

export class RecordConfig {
  private cached: { raw: unknown; value: RecordSettings } | undefined;

  constructor(private readonly deps: Pick<RuntimeDeps, 'config' | 'turnFeatures'>) {}

  readonly settings = (): RecordSettings => {
    const raw = (this.deps.config() as Config & { record?: unknown }).record;
    if (!this.cached || this.cached.raw !== raw)
      this.cached = { raw, value: Value.Default(RecordSection, structuredClone(raw ?? {})) as RecordSettings };
    return this.cached.value;
  };

  readonly hookEntries: HookEntriesFor = (override) =>
    this.deps.turnFeatures ? runEntries(this.deps.config().hooks.entries, override) : [];
}
