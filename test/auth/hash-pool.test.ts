import { describe, expect, it } from 'vitest';
import { FairQueue, type Pending } from '../../src/auth/hash-pool.js';

/**
 * The hashing pool serves its waiting hashes round-robin by caller (src/auth/hash-pool.ts): one
 * address's burst queues behind itself, and another caller's hash waits for at most one of it.
 * The order is checked on the queue itself: the pool's threads finish in whatever order the cores
 * allow, so completion order says nothing about it.
 */
function pending(id: number): Pending {
  return { id, job: {} as Pending['job'], resolve: () => {}, reject: () => {} };
}

describe("the hashing pool's queue", () => {
  it("serves another caller's hash before the rest of one caller's burst", () => {
    const queue = new FairQueue();
    for (let i = 1; i <= 8; i++) queue.push('burst', pending(i));
    queue.push('other', pending(100));
    queue.push('third', pending(200));
    queue.push('other', pending(101));
    expect(queue.length).toBe(11);
    const order: number[] = [];
    for (let next = queue.shift(); next; next = queue.shift()) order.push(next.id);
    // In turn: burst, other, third, burst, other, then the rest of the burst in its own order.
    expect(order).toEqual([1, 100, 200, 2, 101, 3, 4, 5, 6, 7, 8]);
    expect(queue.length).toBe(0);
    expect(queue.shift()).toBeUndefined();
  });

  it('is first come first served for one caller', () => {
    const queue = new FairQueue();
    for (let i = 1; i <= 5; i++) queue.push('', pending(i));
    const order: number[] = [];
    for (let next = queue.shift(); next; next = queue.shift()) order.push(next.id);
    expect(order).toEqual([1, 2, 3, 4, 5]);
  });
});
