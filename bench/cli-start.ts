// Start time of the command line (docs/cli.md, "Start time"): `sightline --help` spawned as a real
// process, from the bundle bin/sightline.mjs runs (dist/cli/main.js) and, for the reference column,
// from the TypeScript sources through tsx (the way the CLI started before the bundle); both beside a
// bare `node -e 0`, run interleaved so a busy shared machine disturbs them alike.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { median, type Row } from './measure.js';

const root = path.resolve(import.meta.dirname, '..');

function timed(args: string[]): number {
  const started = performance.now();
  const r = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return performance.now() - started;
}

export function benchCliStart(runs: number, rows: Row[]): Record<string, number> {
  const fromSource =
    "import('tsx/esm/api').then(({register})=>{register();return import('./src/cli/main.ts')}).then(m=>m.main(['node','sightline','--help']))";
  timed(['bin/sightline.mjs', '--help']); // builds the bundle when a source changed
  const samples = { bundle: [] as number[], tsx: [] as number[], node: [] as number[] };
  for (let i = 0; i < runs; i++) {
    samples.bundle.push(timed(['bin/sightline.mjs', '--help']));
    samples.tsx.push(timed(['--input-type=module', '-e', fromSource]));
    samples.node.push(timed(['-e', '0']));
  }
  const m = { bundle: median(samples.bundle), tsx: median(samples.tsx), node: median(samples.node) };
  rows.push({
    work: `sightline --help (bare node -e 0: ${m.node.toFixed(0)} ms)`,
    api: `${m.bundle.toFixed(0)} ms`,
    reference: `${m.tsx.toFixed(0)} ms from sources (tsx)`,
    ratio: `${(m.tsx / m.bundle).toFixed(1)}x faster`,
    target: '< 300 ms',
  });
  return { bundle_ms: m.bundle, tsx_ms: m.tsx, node_ms: m.node };
}
