import { TooManyRequestsError } from '../errors.js';

/**
 * Fair sharing of public SQL's engine sessions between projects (pure: no store in here).
 *
 * A session runs one query at a time, so one project's slow query (up to the 10 s limit) used to
 * hold every other project behind it. Now:
 * - a small pool of sessions runs queries side by side;
 * - a project runs at most `perProject` queries at once; up to `queuePerProject` more wait, and
 *   anything beyond answers 429 at once (with Retry-After), so no project can fill the queue;
 * - a freed session goes to the next project in round-robin order that has a waiting query and is
 *   under its share, so a busy project can't starve a quiet one;
 * - a query that waits longer than `maxWaitMs` for a session gives up with 429: the caller retries
 *   rather than holding a connection open behind a backlog.
 */

export type SchedulerLimits = { perProject: number; queuePerProject: number; maxWaitMs: number };

type Waiter<S> = { grant: (session: S) => void; timer: NodeJS.Timeout };
type ProjectState<S> = { running: number; waiting: Waiter<S>[] };

export class SqlScheduler<S> {
  private readonly free: S[];
  private readonly projects = new Map<string, ProjectState<S>>();
  /** Projects in the order they are offered a freed session; the served one moves to the back. */
  private readonly turn: string[] = [];

  constructor(
    sessions: readonly S[],
    private readonly limits: SchedulerLimits,
  ) {
    if (!sessions.length) throw new Error('the SQL scheduler needs at least one session');
    this.free = [...sessions];
  }

  /** Runs `work` on a session of its own, when the project's share and a session allow. */
  async run<T>(projectId: string, work: (session: S) => Promise<T>): Promise<T> {
    const session = await this.acquire(projectId);
    try {
      return await work(session);
    } finally {
      this.release(projectId, session);
    }
  }

  /** Queries running and waiting now (tests and /metrics). */
  load(projectId: string): { running: number; waiting: number } {
    const p = this.projects.get(projectId);
    return { running: p?.running ?? 0, waiting: p?.waiting.length ?? 0 };
  }

  private acquire(projectId: string): Promise<S> {
    const p = this.state(projectId);
    if (p.running < this.limits.perProject && this.free.length && !this.othersWaiting()) {
      p.running++;
      return Promise.resolve(this.free.pop()!);
    }
    if (p.waiting.length >= this.limits.queuePerProject) {
      this.forget(projectId);
      throw new TooManyRequestsError(
        `too many SQL queries for this project at once: ${this.limits.perProject} run and ${this.limits.queuePerProject} wait; retry when one has answered`,
      );
    }
    return new Promise<S>((resolve, reject) => {
      const waiter: Waiter<S> = {
        grant: (session) => {
          clearTimeout(waiter.timer);
          resolve(session);
        },
        timer: setTimeout(() => {
          const i = p.waiting.indexOf(waiter);
          if (i >= 0) p.waiting.splice(i, 1);
          this.forget(projectId);
          reject(new TooManyRequestsError('the SQL engine is busy; retry shortly'));
        }, this.limits.maxWaitMs),
      };
      p.waiting.push(waiter);
      if (!this.turn.includes(projectId)) this.turn.push(projectId);
      this.dispatch();
    });
  }

  private release(projectId: string, session: S): void {
    const p = this.state(projectId);
    p.running--;
    this.free.push(session);
    this.forget(projectId);
    this.dispatch();
  }

  /** Hands free sessions to waiting queries, one project at a time, in turn. */
  private dispatch(): void {
    while (this.free.length) {
      const index = this.turn.findIndex((id) => {
        const p = this.projects.get(id);
        return !!p && p.waiting.length > 0 && p.running < this.limits.perProject;
      });
      if (index < 0) return;
      const [projectId] = this.turn.splice(index, 1) as [string];
      const p = this.projects.get(projectId)!;
      const waiter = p.waiting.shift()!;
      p.running++;
      if (p.waiting.length) this.turn.push(projectId);
      waiter.grant(this.free.pop()!);
    }
  }

  private othersWaiting(): boolean {
    for (const p of this.projects.values()) if (p.waiting.length && p.running < this.limits.perProject) return true;
    return false;
  }

  private state(projectId: string): ProjectState<S> {
    let p = this.projects.get(projectId);
    if (!p) {
      p = { running: 0, waiting: [] };
      this.projects.set(projectId, p);
    }
    return p;
  }

  /** Drops an idle project's bookkeeping, so the map holds only projects with work. */
  private forget(projectId: string): void {
    const p = this.projects.get(projectId);
    if (p && p.running === 0 && p.waiting.length === 0) {
      this.projects.delete(projectId);
      const i = this.turn.indexOf(projectId);
      if (i >= 0) this.turn.splice(i, 1);
    }
  }
}
