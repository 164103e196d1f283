import { Worker } from 'node:worker_threads';
import { TooManyRequestsError } from '../errors.js';

/**
 * Password hashing in its own bounded pool (issue 20, "logins can't starve reads").
 *
 * scrypt through `crypto.scrypt` runs on libuv's threadpool (4 threads by default), the same pool the
 * embedded ClickHouse engine's calls and file system work wait in: 16 logins at once, each 32 MiB
 * and ~100 ms of one core, made another tenant's trace list wait 50 s. Here each hash runs
 * synchronously on one of HASH_THREADS worker threads of our own; at most HASH_QUEUE more wait, and
 * a login past that is answered 429 at once (with Retry-After) instead of queueing without end.
 *
 * The waiting hashes are served round-robin by caller (the login's remote address), not first come
 * first served: one address sending 16 logins at once queues them behind each other, and another
 * caller's login waits for at most one of them, not all 16.
 */

export const HASH_THREADS = 2;
export const HASH_QUEUE = 64;
export const HASHING_BUSY_DETAIL = 'too many logins are being checked right now; retry in a moment';

export type ScryptJob = {
  password: string;
  salt: Buffer;
  keylen: number;
  N: number;
  r: number;
  p: number;
  maxmem: number;
};

// CommonJS source run with `eval: true`: no file to resolve, so it works the same under tsx and node.
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const crypto = require('node:crypto');
parentPort.on('message', (job) => {
  try {
    const hash = crypto.scryptSync(job.password, Buffer.from(job.salt), job.keylen, { N: job.N, r: job.r, p: job.p, maxmem: job.maxmem });
    parentPort.postMessage({ id: job.id, hash });
  } catch (error) {
    parentPort.postMessage({ id: job.id, error: String(error && error.message) });
  }
});`;

export type Pending = { id: number; job: ScryptJob; resolve: (hash: Buffer) => void; reject: (error: Error) => void };

/** Waiting hashes by caller, served one caller at a time in turn. */
export class FairQueue {
  private readonly byCaller = new Map<string, Pending[]>();
  /** Callers with hashes waiting, in the order they are served next. */
  private turn: string[] = [];
  length = 0;

  push(caller: string, pending: Pending): void {
    const waiting = this.byCaller.get(caller);
    if (waiting) waiting.push(pending);
    else {
      this.byCaller.set(caller, [pending]);
      this.turn.push(caller);
    }
    this.length++;
  }

  shift(): Pending | undefined {
    const caller = this.turn.shift();
    if (caller === undefined) return undefined;
    const waiting = this.byCaller.get(caller)!;
    const next = waiting.shift()!;
    if (waiting.length) this.turn.push(caller);
    else this.byCaller.delete(caller);
    this.length--;
    return next;
  }
}
type Slot = { worker: Worker; busy: Pending | null };

class HashPool {
  private slots: Slot[] = [];
  private queue = new FairQueue();
  private nextId = 1;

  constructor(
    private readonly threads: number,
    private readonly queueLimit: number,
  ) {}

  /** `caller`: whose hash this is (a login's remote address), for the round-robin among waiting hashes. */
  run(job: ScryptJob, caller = ''): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const pending: Pending = { id: this.nextId++, job, resolve, reject };
      const idle = this.idleSlot();
      if (idle) return this.start(idle, pending);
      if (this.queue.length >= this.queueLimit) return reject(new TooManyRequestsError(HASHING_BUSY_DETAIL, 1));
      this.queue.push(caller, pending);
    });
  }

  /** Hashes running and waiting now (for tests and metrics). */
  load(): { running: number; queued: number } {
    return { running: this.slots.filter((s) => s.busy).length, queued: this.queue.length };
  }

  private idleSlot(): Slot | null {
    const idle = this.slots.find((s) => !s.busy);
    if (idle) return idle;
    if (this.slots.length < this.threads) return this.spawn();
    return null;
  }

  private spawn(): Slot {
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    // Idle workers never keep a process (or a test run) alive.
    worker.unref();
    const slot: Slot = { worker, busy: null };
    worker.on('message', (message: { id: number; hash?: Uint8Array; error?: string }) => {
      const done = slot.busy;
      slot.busy = null;
      worker.unref();
      if (done && done.id === message.id) {
        if (message.hash) done.resolve(Buffer.from(message.hash));
        else done.reject(new Error(message.error ?? 'scrypt failed'));
      }
      this.next(slot);
    });
    // A worker that dies takes its job with it; the next job gets a new worker.
    worker.on('error', (error: Error) => this.retire(slot, error));
    worker.on('exit', () => this.retire(slot, new Error('hash worker exited')));
    this.slots.push(slot);
    return slot;
  }

  private retire(slot: Slot, error: Error): void {
    const index = this.slots.indexOf(slot);
    if (index === -1) return;
    this.slots.splice(index, 1);
    slot.busy?.reject(error);
    slot.busy = null;
    const waiting = this.queue.shift();
    if (waiting) this.start(this.spawn(), waiting);
  }

  private start(slot: Slot, pending: Pending): void {
    slot.busy = pending;
    // A busy worker keeps the process alive until its answer arrives, like any pending I/O.
    slot.worker.ref();
    const { job } = pending;
    slot.worker.postMessage({
      id: pending.id,
      password: job.password,
      salt: job.salt,
      keylen: job.keylen,
      N: job.N,
      r: job.r,
      p: job.p,
      maxmem: job.maxmem,
    });
  }

  private next(slot: Slot): void {
    const waiting = this.queue.shift();
    if (waiting) this.start(slot, waiting);
  }
}

export const hashPool = new HashPool(HASH_THREADS, HASH_QUEUE);
