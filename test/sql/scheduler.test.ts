import { describe, expect, it } from 'vitest';
import { TooManyRequestsError } from '../../src/errors.js';
import { SqlScheduler } from '../../src/sql/scheduler.js';

/** Fair sharing of public SQL's sessions (src/sql/scheduler.ts). Pure: sessions are plain tokens. */

type Gate = { promise: Promise<void>; open(): void };
const gate = (): Gate => {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
};
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('SqlScheduler', () => {
  it('runs a project up to its share at once, queues the next ones, refuses beyond the queue with 429', async () => {
    const s = new SqlScheduler(['s1', 's2', 's3'], { perProject: 2, queuePerProject: 1, maxWaitMs: 60_000 });
    const g = gate();
    const started: string[] = [];
    const work = (name: string) =>
      s.run('A', async (session) => {
        started.push(`${name}@${session}`);
        await g.promise;
        return name;
      });
    const a1 = work('a1');
    const a2 = work('a2');
    const a3 = work('a3');
    await tick();
    expect(started.map((x) => x.split('@')[0])).toEqual(['a1', 'a2']);
    expect(s.load('A')).toEqual({ running: 2, waiting: 1 });
    await expect(work('a4')).rejects.toBeInstanceOf(TooManyRequestsError);
    g.open();
    expect(await Promise.all([a1, a2, a3])).toEqual(['a1', 'a2', 'a3']);
    expect(s.load('A')).toEqual({ running: 0, waiting: 0 });
  });

  it('keeps a session for another project while one project is at its share', async () => {
    const s = new SqlScheduler(['s1', 's2'], { perProject: 1, queuePerProject: 5, maxWaitMs: 60_000 });
    const slow = gate();
    const a1 = s.run('A', () => slow.promise.then(() => 'a1'));
    const a2 = s.run('A', () => slow.promise.then(() => 'a2'));
    await tick();
    // B answers while A's first query still holds its session and its second still waits.
    expect(await s.run('B', async () => 'b')).toBe('b');
    expect(s.load('A')).toEqual({ running: 1, waiting: 1 });
    slow.open();
    expect(await Promise.all([a1, a2])).toEqual(['a1', 'a2']);
  });

  it('hands freed sessions to waiting projects in turn, not to the busiest', async () => {
    const s = new SqlScheduler(['s1'], { perProject: 1, queuePerProject: 10, maxWaitMs: 60_000 });
    const order: string[] = [];
    const first = gate();
    const held = s.run('A', () => first.promise);
    const queued = [
      s.run('A', async () => void order.push('A2')),
      s.run('A', async () => void order.push('A3')),
      s.run('B', async () => void order.push('B1')),
      s.run('C', async () => void order.push('C1')),
      s.run('B', async () => void order.push('B2')),
    ];
    await tick();
    first.open();
    await Promise.all([held, ...queued]);
    expect(order).toEqual(['A2', 'B1', 'C1', 'A3', 'B2']);
  });

  it('gives up on a query that waited too long for a session, with 429, and forgets it', async () => {
    const s = new SqlScheduler(['s1'], { perProject: 1, queuePerProject: 5, maxWaitMs: 20 });
    const g = gate();
    const held = s.run('A', () => g.promise);
    await expect(s.run('B', async () => 'never')).rejects.toMatchObject({ status: 429 });
    expect(s.load('B')).toEqual({ running: 0, waiting: 0 });
    g.open();
    await held;
    expect(await s.run('B', async () => 'now')).toBe('now');
  });

  it('frees the session when the work fails', async () => {
    const s = new SqlScheduler(['s1'], { perProject: 1, queuePerProject: 0, maxWaitMs: 1000 });
    await expect(
      s.run('A', async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await s.run('A', async (session) => session)).toBe('s1');
  });
});
