import { AsyncLocalStorage } from 'node:async_hooks';
import type { AppContext } from '../context.js';
import type { Queryable } from '../stores/postgres.js';
import { crashPoint } from './crash-point.js';
import { seal } from './seal.js';
import { recordAnswer } from './store.js';

/**
 * Long creates (`config: { idempotent: 'deferred' }`; docs/idempotency.md, "Long creates"): a dataset
 * version and evaluation results are written in many short statements and transactions so that no
 * request holds the store for long (issue 20; embedded PGlite is one session, and an open
 * transaction holds it). Running such a create inside one idempotency transaction would hold the
 * store for the whole write again. So for these routes the plugin only looks for a completed key
 * before the handler (replay or 409), runs the handler outside any transaction scope, and the
 * create's own final transaction (the one that makes its work visible) records the key with the
 * answer: `recordKey`, its last statement before the commit.
 *
 * - A crash before that commit leaves no key and nothing visible (a version still unnumbered is
 *   garbage, results already written are replaced exactly by the retry): the retry creates, once.
 * - A crash after it leaves the key and the create: the retry answers the recorded answer.
 * - A concurrent duplicate that committed the key first wins: `recordKey` throws KeyTakenError, the
 *   final transaction rolls back (the service drops what it wrote unseen), and the plugin answers
 *   the winner's answer (409 if the winner was another request with the same key).
 *
 * An answer too large to keep (a version's is up to 64 MiB) is recorded as a reference the route
 * rebuilds the identical answer from (`config.replayReference`): the version, read back; the first
 * answer of a keyed create is that same read, so the two are the same bytes.
 */

/** The content type column of a row whose answer is a reference (never an answer's own content type). */
export const REFERENCE_TYPE = 'application/vnd.sightline.answer-reference';

/** What a deferred create records with its key: the answer's bytes, or a reference the route rebuilds them from. */
export type DeferredAnswer =
  { status: number; contentType: string; body: string | Buffer } | { status: number; reference: string };

export type DeferredKey = {
  ctx: AppContext;
  key: string;
  credential: string;
  keyHash: Buffer;
  requestHash: Buffer;
  /** Set once the key was inserted in the final transaction (committed when the request answers 2xx). */
  recorded: boolean;
};

/** Thrown by `recordKey` when a duplicate committed the key first; the plugin answers the winner's answer. */
export class KeyTakenError extends Error {
  constructor() {
    super('a concurrent request with this Idempotency-Key completed first');
    this.name = 'KeyTakenError';
  }
}

const deferredKeys = new AsyncLocalStorage<DeferredKey>();

/** Runs a deferred route's handler (and everything it starts) with its request's key. */
export function runWithDeferredKey<T>(entry: DeferredKey, fn: () => T): T {
  return deferredKeys.run(entry, fn);
}

/** Whether the running create was sent with an Idempotency-Key (its answer must then be one a replay can give again). */
export function keyedCreate(): boolean {
  return deferredKeys.getStore() !== undefined;
}

/**
 * In the create's final transaction, as its last statement: records the request's key with the
 * answer, committed with the transaction. Does nothing for a request without a key. Throws
 * KeyTakenError when a live row of the key is already committed: let it roll the transaction back.
 */
export async function recordKey(tx: Queryable, answer: DeferredAnswer): Promise<void> {
  const entry = deferredKeys.getStore();
  if (!entry) return;
  const [contentType, plain] =
    'reference' in answer
      ? [REFERENCE_TYPE, Buffer.from(answer.reference, 'utf8')]
      : [answer.contentType, Buffer.from(answer.body)];
  const recorded = await recordAnswer(tx, {
    credential: entry.credential,
    keyHash: entry.keyHash,
    requestHash: entry.requestHash,
    status: answer.status,
    contentType,
    sealed: seal(entry.key, entry.credential, plain),
  });
  if (!recorded) throw new KeyTakenError();
  entry.recorded = true;
  await crashPoint(entry.ctx, 'before_commit');
}
