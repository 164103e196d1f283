import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { call, useHarness } from '../support/harness.js';
import { FAIL_FOR_MS, LoopWatch, TICK_MS } from '../../src/health/loop-watch.js';

/**
 * Issue 30, item 3: a blocked event loop is visible and recoverable. `/healthz` fails after a block
 * past LIVENESS_MAX_BLOCK_MS (an orchestrator restarts the process), and a watchdog thread ends a
 * process whose loop stays blocked past LOOP_STALL_EXIT_MS, which no SIGTERM could.
 */
const h = useHarness({ LIVENESS_MAX_BLOCK_MS: '2000' });

/** Holds the event loop, as a runaway computation would. */
function blockLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('liveness', () => {
  it('/healthz answers 200, then 503 naming the block once the loop was held past the bound', async () => {
    // A quiet loop first: a loaded machine's own pauses stay well below 2 s.
    expect((await call(h().api, { method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    blockLoop(3_000);
    // The watch's next tick sees how late it is.
    await new Promise((resolve) => setTimeout(resolve, 2 * TICK_MS));
    for (const app of [h().api, h().web]) {
      const res = await call(app, { method: 'GET', url: '/healthz' });
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json().detail).toMatch(
        /^not live: the event loop was blocked for \d+ ms \(bound 2000 ms\), \d+ s ago; restart this process$/,
      );
    }
    // /readyz is about the stores, and stays ready.
    expect((await call(h().api, { method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });

  it('fails for a minute after the block ended, then passes again', () => {
    let now = 0;
    const watch = new LoopWatch(1_000, () => now);
    // Drive its ticks by hand: a tick 5 s late is a 5 s block.
    const tick = (at: number) => {
      now = at;
      (watch as unknown as { tick(): void }).tick();
    };
    (watch as unknown as { expected: number }).expected = TICK_MS;
    tick(TICK_MS);
    expect(watch.failing()).toBeNull();
    tick(TICK_MS * 2 + 5_000);
    expect(watch.failing()).toMatchObject({ ms: 5_000 + TICK_MS });
    now += FAIL_FOR_MS - 1;
    expect(watch.failing()).not.toBeNull();
    now += 1;
    expect(watch.failing()).toBeNull();
  });
});

describe('the stall watchdog', () => {
  it('ends a process whose loop stays blocked past LOOP_STALL_EXIT_MS, with one line on stderr', async () => {
    const module = path.resolve('src/health/stall-watchdog.ts');
    // A process that starts the watchdog and then never yields its loop again.
    const script = `
      const { startStallWatchdog } = await import(${JSON.stringify(module)});
      startStallWatchdog(1000);
      setTimeout(() => { process.stdout.write('blocking\\n'); for (;;); }, 300);
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    // A bound on the wait, not a timing: the process must end by itself (else SIGKILL it after 60 s).
    const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, s) => resolve(s)));
    clearTimeout(guard);
    expect(stdout, stderr).toContain('blocking');
    expect(signal).toBe('SIGKILL');
    expect(stderr).toMatch(
      /the event loop has been blocked for \d+ ms \(LOOP_STALL_EXIT_MS 1000\); ending the process/,
    );
  });

  it('leaves a process that yields alone: it ends on its own when its work is done', async () => {
    const module = path.resolve('src/health/stall-watchdog.ts');
    const script = `
      const { startStallWatchdog } = await import(${JSON.stringify(module)});
      startStallWatchdog(1000);
      let n = 0;
      const t = setInterval(() => { if (++n === 10) { clearInterval(t); process.stdout.write('done\\n'); } }, 200);
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.on('exit', (c, s) => resolve([c, s])),
    );
    clearTimeout(guard);
    expect(stdout).toContain('done');
    expect([code, signal]).toEqual([0, null]);
  });
});
