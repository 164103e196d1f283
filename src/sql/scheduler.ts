import { TooManyRequestsError } from '../errors.js';

/**
 * Fair sharing of public SQL's engine sessions (pure: no store in here).
 *
 * A session runs one query at a time, so one caller's slow query (up to the time limit) used to
 * hold every other caller behind it. Now:
 * - a small pool of sessions runs queries side by side;
 * - a query belongs to a project, a workspace and, when known, a user (the one logged in, or the one
 *   who made the API key or the detector); at most `perProject`, `perWorkspace` and `perUser` queries
 *   of each run at once, so a user with three projects, or a workspace with three, can't take every
 *   session (issue 20); up to `queuePerProject` more of a project wait, and anything beyond answers
 *   429 at once (with Retry-After), so no project can fill the queue;
 * - a freed session goes to the next project in round-robin order that has a waiting query whose
 *   project, workspace and user are all under their share, so a busy caller can't starve a quiet one;
 * - a query that waits longer than `maxWaitMs` for a session gives up with 429: the caller retries
 *   rather than holding a connection open behind a backlog.
 *
 * A lease is held until the engine is done with the query, not until its caller was answered: a query
 * answered at its deadline (deadline.ts) keeps its share until the engine has stopped it, so a caller
 * can't run more than its share by retrying queries the engine is still ending.
 */

export type SchedulerLimits = {
  perProject: number;
  queuePerProject: number;
  maxWaitMs: number;
  perWorkspace?: number;
  perUser?: number;
};

/** Whose query this is. A bare string is a project of its own (tests, callers without a workspace). */
export type SqlOwner = { projectId: string; workspaceId?: string; userId?: string };

export type Lease<S> = { session: S; release(): void };

type Waiter<S> = { owner: SqlOwner; grant: (session: S) => void; timer: NodeJS.Timeout };

export class SqlScheduler<S> {
  private readonly free: S[];
  /** Waiting queries by project. */
  private readonly waiting = new Map<string, Waiter<S>[]>();
  /** Running queries by share key (`p:`, `w:`, `u:` + id). */
  private readonly running = new Map<string, number>();
  /** Projects in the order they are offered a freed session; the served one moves to the back. */
  private readonly turn: string[] = [];

  constructor(
    sessions: readonly S[],
    private readonly limits: SchedulerLimits,
  ) {
    if (!sessions.length) throw new Error('the SQL scheduler needs at least one session');
    this.free = [...sessions];
  }

  /** Runs `work` on a session of its own, when the owner's shares and a session allow. */
  async run<T>(owner: string | SqlOwner, work: (session: S) => Promise<T>): Promise<T> {
    const lease = await this.lease(owner);
    try {
      return await work(lease.session);
    } finally {
      lease.release();
    }
  }

  /** A session for the owner, held until `release` (once; later calls do nothing). */
  async lease(owner: string | SqlOwner): Promise<Lease<S>> {
    const o = typeof owner === 'string' ? { projectId: owner } : owner;
    const session = await this.acquire(o);
    let released = false;
    return {
      session,
      release: () => {
        if (released) return;
        released = true;
        this.release(o, session);
      },
    };
  }

  /** Queries running and waiting now for a project (tests and /metrics). */
  load(projectId: string): { running: number; waiting: number } {
    return { running: this.running.get(`p:${projectId}`) ?? 0, waiting: this.waiting.get(projectId)?.length ?? 0 };
  }

  /** Queries running now for a workspace or a user (tests). */
  runningFor(kind: 'workspace' | 'user', id: string): number {
    return this.running.get(`${kind === 'workspace' ? 'w' : 'u'}:${id}`) ?? 0;
  }

  private acquire(owner: SqlOwner): Promise<S> {
    if (this.free.length && this.canRun(owner) && !this.othersWaiting()) {
      this.count(owner, 1);
      return Promise.resolve(this.free.pop()!);
    }
    const queue = this.waiting.get(owner.projectId) ?? [];
    if (queue.length >= this.limits.queuePerProject) {
      throw new TooManyRequestsError(
        `too many SQL queries for this project at once: ${this.limits.perProject} run and ${this.limits.queuePerProject} wait; retry when one has answered`,
      );
    }
    this.waiting.set(owner.projectId, queue);
    return new Promise<S>((resolve, reject) => {
      const waiter: Waiter<S> = {
        owner,
        grant: (session) => {
          clearTimeout(waiter.timer);
          resolve(session);
        },
        timer: setTimeout(() => {
          const i = queue.indexOf(waiter);
          if (i >= 0) queue.splice(i, 1);
          this.forget(owner.projectId);
          reject(new TooManyRequestsError('the SQL engine is busy; retry shortly'));
        }, this.limits.maxWaitMs),
      };
      queue.push(waiter);
      if (!this.turn.includes(owner.projectId)) this.turn.push(owner.projectId);
      this.dispatch();
    });
  }

  private release(owner: SqlOwner, session: S): void {
    this.count(owner, -1);
    this.free.push(session);
    this.dispatch();
  }

  /** Hands free sessions to waiting queries that may run, one project at a time, in turn. */
  private dispatch(): void {
    while (this.free.length) {
      let found: { index: number; waiter: number } | undefined;
      for (let index = 0; index < this.turn.length && !found; index++) {
        const queue = this.waiting.get(this.turn[index]!) ?? [];
        const waiter = queue.findIndex((w) => this.canRun(w.owner));
        if (waiter >= 0) found = { index, waiter };
      }
      if (!found) return;
      const [projectId] = this.turn.splice(found.index, 1) as [string];
      const queue = this.waiting.get(projectId)!;
      const [waiter] = queue.splice(found.waiter, 1) as [Waiter<S>];
      this.count(waiter.owner, 1);
      if (queue.length) this.turn.push(projectId);
      else this.forget(projectId);
      waiter.grant(this.free.pop()!);
    }
  }

  private othersWaiting(): boolean {
    for (const queue of this.waiting.values()) if (queue.some((w) => this.canRun(w.owner))) return true;
    return false;
  }

  private keys(owner: SqlOwner): [string, number][] {
    const keys: [string, number][] = [[`p:${owner.projectId}`, this.limits.perProject]];
    if (owner.workspaceId) keys.push([`w:${owner.workspaceId}`, this.limits.perWorkspace ?? Infinity]);
    if (owner.userId) keys.push([`u:${owner.userId}`, this.limits.perUser ?? Infinity]);
    return keys;
  }

  private canRun(owner: SqlOwner): boolean {
    return this.keys(owner).every(([key, limit]) => (this.running.get(key) ?? 0) < limit);
  }

  private count(owner: SqlOwner, delta: number): void {
    for (const [key] of this.keys(owner)) {
      const n = (this.running.get(key) ?? 0) + delta;
      if (n > 0) this.running.set(key, n);
      else this.running.delete(key);
    }
  }

  /** Drops a project's queue and turn once nothing of it waits, so the maps hold only projects with work. */
  private forget(projectId: string): void {
    const queue = this.waiting.get(projectId);
    if (queue && queue.length === 0) {
      this.waiting.delete(projectId);
      const i = this.turn.indexOf(projectId);
      if (i >= 0) this.turn.splice(i, 1);
    }
  }
}
