import { AsyncLocalStorage } from 'node:async_hooks';
import type pg from 'pg';

/**
 * A Postgres transaction that the code running inside it joins without being handed it: while a
 * scope is active (`runInTransactionScope`), every `pool.query` of the process's pool runs on the
 * scope's client, and `withTransaction` becomes a savepoint on it. This is how an idempotent create
 * (src/idempotency/) commits the created rows and its stored answer together, without the services
 * that create knowing: they keep calling `ctx.pg.pool` and `withTransaction` as they always did.
 * Long creates written in chunks (dataset versions, evaluation results) never run in a scope: one
 * transaction around their whole write would hold embedded PGlite for all of it (src/idempotency/deferred.ts).
 *
 * Invariants:
 * - The scope's owner opened the transaction on `client` and alone commits or rolls it back; it
 *   sets `open` to false first, so work the scope's code left running afterwards (a detached promise,
 *   a timer started inside it) goes back to the pool instead of a client that is no longer its own.
 * - Inside a scope, no code may wait on another connection of the pool: embedded PGlite has one,
 *   and the scope holds it (docs/design.md, "Known traps").
 * - A failed statement aborts the whole transaction unless it ran in a savepoint; services that
 *   catch a query error and carry on must do so inside `withTransaction` (none does today).
 */
export type TransactionScope = {
  client: pg.PoolClient;
  open: boolean;
  /** Nested transactions of the scope, one at a time (their savepoints must not interleave). */
  nested: Promise<unknown>;
  savepoints: number;
};

const scopes = new AsyncLocalStorage<TransactionScope>();
/** Set while a nested transaction runs: one nested in it runs at once (waiting its turn would deadlock). */
const nesting = new AsyncLocalStorage<true>();

export function newTransactionScope(client: pg.PoolClient): TransactionScope {
  return { client, open: true, nested: Promise.resolve(), savepoints: 0 };
}

/** Runs `fn` (and everything it starts) inside the scope. */
export function runInTransactionScope<T>(scope: TransactionScope, fn: () => T): T {
  return scopes.run(scope, fn);
}

/** The open scope the caller runs in, if any. */
export function activeTransactionScope(): TransactionScope | undefined {
  const scope = scopes.getStore();
  return scope?.open ? scope : undefined;
}

/** Makes the pool's `query` run on the active scope's client when there is one. */
export function routeQueriesThroughScope(pool: pg.Pool): void {
  const poolQuery = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  pool.query = ((...args: unknown[]) => {
    const scope = activeTransactionScope();
    if (!scope) return poolQuery(...args);
    return (scope.client.query as (...a: unknown[]) => unknown).apply(scope.client, args);
  }) as typeof pool.query;
}

/**
 * `withTransaction` inside a scope: a savepoint on the scope's client, so a failing nested part
 * rolls back alone (as its own transaction would) while the scope's transaction goes on.
 */
export function nestedTransaction<T>(scope: TransactionScope, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const run = () =>
    nesting.run(true, async () => {
      const name = `sl_nested_${++scope.savepoints}`;
      await scope.client.query(`SAVEPOINT ${name}`);
      try {
        const result = await fn(scope.client);
        await scope.client.query(`RELEASE SAVEPOINT ${name}`);
        return result;
      } catch (error) {
        await scope.client.query(`ROLLBACK TO SAVEPOINT ${name}`).catch(() => {});
        throw error;
      }
    });
  if (nesting.getStore()) return run();
  const result = scope.nested.then(run, run);
  scope.nested = result.catch(() => {});
  return result;
}
