// bench/report.ts: renders a bench run (the object bench/run.ts writes as JSON) as markdown: the run's
// setup, the targets as measured, one table per scenario, and the profile hot spots.
import type { HotSpot, ProfileSummary } from './profile.ts';
import type { Cell, ScenarioResult, TargetCheck } from './scenario.ts';

export interface ProfileReport {
  label: string;
  file: string;
  turns: number;
  cpuMsPerTurn: number;
  summary: ProfileSummary;
}

export interface RunReport {
  date: string;
  startedAt: string;
  finishedAt: string;
  elapsedS: number;
  quick: boolean;
  git: { rev: string; dirty: boolean };
  machine: { cpus: number; model: string; memGiB: number; node: string; platform: string; clkTck: number };
  /** 1-minute load average at the start of the run, of each scenario, and at the end. */
  loadavg1: Record<string, number>;
  pinning: { requested: boolean; taskset: boolean; server: string; loadGenerator: string };
  options: Record<string, unknown>;
  fakeLlm: Record<string, unknown>;
  scenarios: ScenarioResult[];
  failures: Array<{ scenario: string; error: string }>;
  targets: TargetCheck[];
  profiles: ProfileReport[];
}

function cell(v: Cell | undefined): string {
  if (v === undefined || v === null) return '—';
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return '—';
    return Number.isInteger(v) ? v.toLocaleString('en-US') : String(v);
  }
  return String(v).replace(/\|/g, '\\|');
}

function table(columns: string[], rows: Array<Record<string, Cell>>): string {
  const head = `| ${columns.join(' | ')} |\n|${columns.map(() => '---').join('|')}|\n`;
  return head + rows.map((r) => `| ${columns.map((c) => cell(r[c])).join(' | ')} |`).join('\n') + '\n';
}

function hot(spots: HotSpot[], withWhere = true): string {
  const cols = withWhere ? ['#', 'function', 'where', 'ms', '%'] : ['#', 'module', 'ms', '%'];
  return table(
    cols,
    spots.map((h, i) => ({
      '#': i + 1,
      function: `\`${h.fn}\``,
      module: `\`${h.fn}\``,
      where: h.where ? `\`${h.where}\`` : '',
      ms: Math.round(h.ms * 10) / 10,
      '%': Math.round(h.pct * 10) / 10,
    })),
  );
}

export function renderMarkdown(r: RunReport): string {
  const out: string[] = [];
  out.push(`# Warren bench ${r.date}${r.quick ? ' (quick)' : ''}\n`);
  out.push(
    `- Commit \`${r.git.rev}\`${r.git.dirty ? ' (working tree has uncommitted changes)' : ''}; started ${r.startedAt}, took ${Math.round(r.elapsedS)} s.`,
  );
  out.push(
    `- Machine: ${r.machine.cpus} × ${r.machine.model}, ${r.machine.memGiB} GiB RAM, Node ${r.machine.node} (${r.machine.platform}).`,
  );
  out.push(
    `- Pinning: ${r.pinning.taskset ? `server ${r.pinning.server}; load generator + fake LLM ${r.pinning.loadGenerator}` : `not pinned (${r.pinning.requested ? 'taskset unavailable' : '--no-pin'})`}.`,
  );
  out.push(
    `- 1-minute load average (other processes compete for the same 2 cores when it exceeds ~2): ${Object.entries(r.loadavg1)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}.`,
  );
  out.push(
    `- Fake LLM: ${Object.entries(r.fakeLlm)
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .join(', ')}.`,
  );
  out.push(
    `- Options: ${Object.entries(r.options)
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .join(', ')}.\n`,
  );
  if (r.failures.length) {
    out.push('## Failed scenarios\n');
    for (const f of r.failures) out.push(`- **${f.scenario}**: ${f.error}`);
    out.push('');
  }
  out.push('## Targets (measured, not asserted)\n');
  out.push(
    table(
      ['target', 'bound', 'measured', 'met'],
      r.targets.map((t) => ({
        target: t.target,
        bound: t.bound,
        measured: t.measured === null ? null : `${cell(t.measured)} ${t.unit}`,
        met: t.met === null ? '—' : t.met ? 'yes' : '**no**',
      })),
    ),
  );
  for (const s of r.scenarios) {
    out.push(`## ${s.title} (\`${s.id}\`)\n`);
    out.push(table(s.columns, s.rows));
    for (const n of s.notes) out.push(`- ${n}`);
    out.push('');
    for (const t of s.extraTables ?? []) {
      out.push(`### ${t.title}\n`);
      out.push(table(t.columns, t.rows));
    }
  }
  for (const p of r.profiles) {
    out.push(`## Server CPU profile: ${p.label}\n`);
    out.push(
      `${p.turns} turns, ${Math.round(p.summary.busyMs)} ms busy (idle ${Math.round(p.summary.idleMs)} ms; ${Math.round(p.summary.excludedMs)} ms of profiler start/stop left out) sampled; ${Math.round(p.cpuMsPerTurn * 1000) / 1000} ms server CPU per turn while profiling. Profile: \`${p.file}\`.\n`,
    );
    out.push('### Top self time\n');
    out.push(hot(p.summary.topSelf));
    out.push('### Self time by module\n');
    out.push(hot(p.summary.byModule, false));
    out.push("### Inclusive time of Warren's own functions\n");
    out.push(hot(p.summary.topWarrenTotal));
  }
  return out.join('\n');
}
