// bench/startup.ts: start time and idle RSS of `warren serve`, from the build (node dist/main.js) and from
// source (node --import tsx main.ts). Each run starts a fresh process on a temp state root and port 0,
// times spawn -> the 'listening' log line, waits --idle-ms for start-up work to settle, then reads VmRSS
// from /proc/<pid>/status; and again at --settled-ms after 'listening', once an idle server has given back
// the young generation its start-up grew (cli/settle-heap.ts, about 7 s after 'ready').
// Usage: npx tsx bench/startup.ts [--runs 5] [--idle-ms 3000] [--settled-ms 10000] [--tree <dir>]
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseProgramLine } from '../config/cli-args.ts';

const { values } = parseProgramLine(
  'bench/startup.ts',
  {
    runs: { type: 'string', default: '5' },
    'idle-ms': { type: 'string', default: '3000' },
    'settled-ms': { type: 'string', default: '10000' },
    tree: { type: 'string', default: '.' },
  },
  { positionals: false },
);
const runs = Number(values.runs);
const idleMs = Number(values['idle-ms']);
const settledMs = Math.max(idleMs, Number(values['settled-ms']));
const tree = resolve(values.tree ?? '.');

interface Sample {
  startMs: number;
  rssMiB: number;
  settledMiB: number;
}

function rssMiB(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024;
}

async function once(args: string[]): Promise<Sample> {
  const stateRoot = mkdtempSync(join(tmpdir(), 'warren-startup-'));
  const t0 = performance.now();
  const child = spawn(process.execPath, [...args, 'serve', '--port', '0', '--state-root', stateRoot, '--log-level', 'info'], {
    cwd: tree,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    const startMs = await new Promise<number>((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`no 'listening' line within 60 s from ${args.join(' ')}`)), 60_000);
      let buf = '';
      const onData = (chunk: Buffer): void => {
        buf += chunk.toString('utf8');
        if (buf.includes('listening')) {
          clearTimeout(timer);
          done(performance.now() - t0);
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.once('exit', (code) => fail(new Error(`server exited (${code}) before listening: ${buf.slice(0, 500)}`)));
    });
    await new Promise((r) => setTimeout(r, idleMs));
    const idle = rssMiB(child.pid);
    await new Promise((r) => setTimeout(r, settledMs - idleMs));
    return { startMs, rssMiB: idle, settledMiB: rssMiB(child.pid) };
  } finally {
    child.kill('SIGKILL');
    rmSync(stateRoot, { recursive: true, force: true });
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

const modes: Array<[string, string[]]> = [['source (tsx)', ['--import', 'tsx', 'main.ts']]];
if (existsSync(join(tree, 'dist/main.js'))) modes.unshift(['build (dist/main.js)', ['dist/main.js']]);
process.stdout.write(
  `| start mode | start ms (median of ${runs}) | RSS MiB ${idleMs / 1000} s after listening (median) | RSS MiB ${settledMs / 1000} s after (median) |\n|---|---|---|---|\n`,
);
for (const [label, args] of modes) {
  const samples: Sample[] = [];
  for (let i = 0; i < runs; i++) samples.push(await once(args));
  const start = median(samples.map((s) => s.startMs));
  const rss = median(samples.map((s) => s.rssMiB));
  const settled = median(samples.map((s) => s.settledMiB));
  process.stdout.write(`| ${label} | ${start.toFixed(0)} | ${rss.toFixed(1)} | ${settled.toFixed(1)} |\n`);
}
