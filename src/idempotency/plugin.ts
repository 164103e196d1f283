import crypto from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import type pg from 'pg';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { BadRequestError, ConflictError } from '../errors.js';
import { principalOf, type Principal } from '../auth/principal.js';
import { newTransactionScope, runInTransactionScope, type TransactionScope } from '../stores/transaction-scope.js';
import { BodyDigest, keyHash, open, requestHash, seal } from './seal.js';
import { claimKey, findAnswer, purgeExpired, recordAnswer, storeAnswer, type StoredAnswer } from './store.js';
import { crashPoint } from './crash-point.js';
import { KeyTakenError, REFERENCE_TYPE, runWithDeferredKey, type DeferredKey } from './deferred.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route creates something and takes an `Idempotency-Key` (docs/idempotency.md). `'deferred'`:
     * a long create that records the key in its own final transaction (deferred.ts).
     */
    idempotent?: boolean | 'deferred';
    /** A deferred route that records references (deferred.ts): the answer a reference stands for. */
    replayReference?: (reference: string) => Promise<RebuiltAnswer>;
  }
}

/** An answer rebuilt from a reference: sent as is (a stream for a large one). */
export type RebuiltAnswer = { contentType: string; body: string | Buffer | Readable };

export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** Set on an answer that is the stored answer of an earlier request with the same key. */
export const REPLAYED_HEADER = 'idempotent-replayed';
/** docs/idempotency.md: 1 to 255 printable characters (visible ASCII and space: what a header carries as is). */
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

export const KEY_REUSED_DETAIL =
  'this Idempotency-Key was already used for a different request (method, path or body); use a new key for a new request';
export const INVALID_KEY_DETAIL =
  'the Idempotency-Key header must be 1 to 255 printable ASCII characters (a UUID is a good key)';
const KEY_BUSY_DETAIL = 'a request with this Idempotency-Key is in progress; retry later';

type KeyedRequest = {
  key: string;
  credential: string;
  digest: BodyDigest;
  scope?: TransactionScope;
  deferred?: DeferredKey;
};
const keyed = new WeakMap<FastifyRequest, KeyedRequest>();

/**
 * Retried creates (docs/idempotency.md). A route opts in with
 * `config: { idempotent: true }`; a request to it with an `Idempotency-Key` then runs like this:
 *
 * 1. preParsing (after authentication): the key is checked (400) and the body digested as it is read.
 * 2. preValidation: in a new Postgres transaction, the key is claimed for (credential, key). A live
 *    committed row answers instead of the route: its stored answer when the request is the same
 *    (method, path with query, body bytes), else 409. A concurrent request with the key waits on the
 *    claim until the first ends. Claimed, the rest of the request runs in a transaction scope
 *    (stores/transaction-scope.ts): every Postgres statement of the create joins this transaction.
 * 3. onSend: a 2xx answer is stored on the claim and committed with the create, before a byte goes
 *    out; any other answer rolls it all back (a failed request leaves nothing, key included).
 *
 * So a crash before the commit leaves neither create nor key (the retry creates, once), and a crash
 * after it leaves both (the retry answers the stored answer). Requests without the header, and
 * routes that don't opt in, are untouched.
 *
 * Long creates (`config: { idempotent: 'deferred' }`, deferred.ts) keep step 1; step 2 only looks for
 * a completed key (replay or 409) and runs the handler outside any transaction; the create's own
 * final transaction records the key (deferred.ts), and onSend has nothing left to commit.
 */
export function registerIdempotency(app: FastifyInstance, ctx: AppContext): void {
  app.addHook('preParsing', async (request, _reply, payload) => {
    if (!request.routeOptions.config?.idempotent) return payload;
    const header = request.headers[IDEMPOTENCY_HEADER];
    if (header === undefined) return payload;
    const key = checkedKey(header);
    const entry: KeyedRequest = { key, credential: credentialOf(principalOf(request)), digest: new BodyDigest() };
    keyed.set(request, entry);
    return digesting(payload, entry.digest);
  });

  app.addHook('preValidation', (request, reply, done) => {
    const entry = keyed.get(request);
    if (!entry) return done();
    if (request.routeOptions.config?.idempotent === 'deferred') {
      lookUp(ctx, request, entry).then(
        (found) => (found ? void replay(reply, found) : done()),
        (error: Error) => done(error as Parameters<typeof done>[0]),
      );
      return;
    }
    claim(ctx, request, entry).then(
      (outcome) => {
        if ('replay' in outcome) return void replay(reply, outcome.replay);
        entry.scope = outcome.scope;
        // Validation, the handler and everything they start run in the create's transaction.
        runInTransactionScope(outcome.scope, () => done());
      },
      (error: Error) => done(error as Parameters<typeof done>[0]),
    );
  });

  // A deferred handler runs with its key, and a key lost to a duplicate answers the winner's answer.
  app.addHook('onRoute', (route) => {
    if (route.config?.idempotent !== 'deferred') return;
    const handler = route.handler;
    route.handler = async function deferredCreate(this: FastifyInstance, request, reply) {
      const entry = keyed.get(request);
      if (!entry?.deferred) return handler.call(this, request, reply);
      try {
        return await runWithDeferredKey(entry.deferred, () => handler.call(this, request, reply));
      } catch (error) {
        if (!(error instanceof KeyTakenError)) throw error;
        return replay(reply, await winner(ctx, request, entry));
      }
    };
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const entry = keyed.get(request);
    if (entry?.deferred) return finishDeferred(ctx, request, reply, entry, entry.deferred, payload);
    if (!entry?.scope?.open) return payload;
    return finish(ctx, reply, entry, entry.scope, payload);
  });

  // A reply that never went through onSend (it can't happen to a create today): nothing is kept.
  app.addHook('onResponse', async (request) => {
    const scope = keyed.get(request)?.scope;
    if (scope?.open) await end(scope, 'ROLLBACK');
  });
}

function checkedKey(header: string | string[]): string {
  if (Array.isArray(header)) throw new BadRequestError('send one Idempotency-Key header');
  if (!KEY_PATTERN.test(header)) throw new BadRequestError(INVALID_KEY_DETAIL);
  return header;
}

/** "The same credential": an API key by its id; a user by their id, whichever token they send. */
function credentialOf(principal: Principal): string {
  return principal.kind === 'api_key' ? `api_key:${principal.keyId}` : `user:${principal.userId}`;
}

function digesting(payload: Readable, digest: BodyDigest): Readable {
  const through = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      digest.update(chunk);
      callback(null, chunk);
    },
  });
  payload.on('error', (error) => through.destroy(error));
  return payload.pipe(through);
}

type Stored = { status: number; contentType: string; body: string | Buffer | Readable };

/** Claims the key in a new transaction (then the create runs in it), or finds what answers instead. */
async function claim(
  ctx: AppContext,
  request: FastifyRequest,
  entry: KeyedRequest,
): Promise<{ scope: TransactionScope } | { replay: Stored }> {
  const hashOfKey = keyHash(entry.key);
  const hashOfRequest = requestHash(request.method, request.url, entry.digest.done());
  const client = await ctx.pg.pool.connect();
  let stored: StoredAnswer | undefined;
  let claimed = false;
  try {
    await purgeExpired(client);
    await client.query('BEGIN');
    // Twice at most: a live row that stopped the claim may expire before it is read (then it's free).
    for (let attempt = 0; attempt < 2 && !stored; attempt++) {
      claimed = await claimKey(client, entry.credential, hashOfKey, hashOfRequest);
      if (claimed) return { scope: newTransactionScope(client) };
      stored = await findAnswer(client, entry.credential, hashOfKey);
    }
  } finally {
    if (!claimed) await abandon(client);
  }
  if (!stored) throw new ConflictError(KEY_BUSY_DETAIL);
  return { replay: await storedAnswer(request, entry, hashOfRequest, stored) };
}

/** What answers a keyed request of a key already used: the stored answer (rebuilt from its reference), or 409. */
async function storedAnswer(
  request: FastifyRequest,
  entry: KeyedRequest,
  hashOfRequest: Buffer,
  stored: StoredAnswer,
): Promise<Stored> {
  if (!crypto.timingSafeEqual(stored.requestHash, hashOfRequest)) throw new ConflictError(KEY_REUSED_DETAIL);
  const body = open(entry.key, entry.credential, stored.answer);
  if (stored.contentType !== REFERENCE_TYPE) return { status: stored.status, contentType: stored.contentType, body };
  const rebuild = request.routeOptions.config?.replayReference;
  if (!rebuild) throw new Error(`route ${request.routeOptions.url} recorded an answer reference but rebuilds none`);
  return { status: stored.status, ...(await rebuild(body.toString('utf8'))) };
}

/**
 * A deferred route (deferred.ts), before its handler: the answer of a completed key, if any (replay,
 * or 409 for another request); else the handler runs, with no transaction, and records the key.
 */
async function lookUp(ctx: AppContext, request: FastifyRequest, entry: KeyedRequest): Promise<Stored | undefined> {
  const hashOfKey = keyHash(entry.key);
  const hashOfRequest = requestHash(request.method, request.url, entry.digest.done());
  await purgeExpired(ctx.pg.pool);
  const stored = await findAnswer(ctx.pg.pool, entry.credential, hashOfKey);
  if (stored) return storedAnswer(request, entry, hashOfRequest, stored);
  entry.deferred = {
    ctx,
    key: entry.key,
    credential: entry.credential,
    keyHash: hashOfKey,
    requestHash: hashOfRequest,
    recorded: false,
  };
  return undefined;
}

/** The answer of the duplicate that committed the key while this request ran (its own work was rolled back). */
async function winner(ctx: AppContext, request: FastifyRequest, entry: KeyedRequest): Promise<Stored> {
  const deferred = entry.deferred!;
  const stored = await findAnswer(ctx.pg.pool, deferred.credential, deferred.keyHash);
  if (!stored) throw new ConflictError(KEY_BUSY_DETAIL);
  return storedAnswer(request, entry, deferred.requestHash, stored);
}

function replay(reply: FastifyReply, stored: Stored): FastifyReply {
  return reply.code(stored.status).header(REPLAYED_HEADER, 'true').type(stored.contentType).send(stored.body);
}

/**
 * A deferred create's answer on its way out. Recorded in its final transaction (committed by now):
 * nothing to do. A 2xx answer that never reached a final transaction wrote nothing (results that
 * were all rejected): its key is recorded here, alone; a duplicate that recorded first answers instead.
 */
async function finishDeferred(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  entry: KeyedRequest,
  deferred: DeferredKey,
  payload: unknown,
): Promise<unknown> {
  if (reply.statusCode < 200 || reply.statusCode > 299 || reply.hasHeader(REPLAYED_HEADER)) return payload;
  if (!deferred.recorded) {
    const body = await bytesOf(payload);
    const contentType = String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8');
    const row = {
      credential: deferred.credential,
      keyHash: deferred.keyHash,
      requestHash: deferred.requestHash,
      status: reply.statusCode,
      contentType,
    };
    if (!(await recordAnswer(ctx.pg.pool, { ...row, sealed: seal(entry.key, entry.credential, body.bytes) }))) {
      const first = await winner(ctx, request, entry);
      reply.code(first.status).header(REPLAYED_HEADER, 'true').type(first.contentType);
      return first.body;
    }
    deferred.recorded = true;
    payload = body.sent;
  }
  await crashPoint(ctx, 'after_commit');
  return payload;
}

/** Stores a 2xx answer and commits it with the create; rolls back anything else. Answers the payload. */
async function finish(
  ctx: AppContext,
  reply: FastifyReply,
  entry: KeyedRequest,
  scope: TransactionScope,
  payload: unknown,
): Promise<unknown> {
  // Closed first: from here, a statement of the request's code goes to the pool, not this client.
  scope.open = false;
  const body = await bytesOf(payload);
  if (reply.statusCode < 200 || reply.statusCode > 299) {
    await end(scope, 'ROLLBACK');
    return body.sent;
  }
  try {
    const contentType = String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8');
    const sealed = seal(entry.key, entry.credential, body.bytes);
    await storeAnswer(scope.client, entry.credential, keyHash(entry.key), reply.statusCode, contentType, sealed);
    await crashPoint(ctx, 'before_commit');
    await scope.client.query('COMMIT');
  } catch (error) {
    await end(scope, 'ROLLBACK');
    throw error;
  }
  scope.client.release();
  await crashPoint(ctx, 'after_commit');
  return body.sent;
}

async function end(scope: TransactionScope, statement: 'ROLLBACK'): Promise<void> {
  scope.open = false;
  try {
    await scope.client.query(statement);
    scope.client.release();
  } catch {
    scope.client.release(true);
  }
}

/** Rolls back a claim that will not run; a connection that can't even do that is dropped. */
async function abandon(client: pg.PoolClient): Promise<void> {
  try {
    await client.query('ROLLBACK');
    client.release();
  } catch {
    client.release(true);
  }
}

/** The answer's bytes, and what to send on (a streamed answer is read whole: it is stored anyway). */
async function bytesOf(payload: unknown): Promise<{ bytes: Buffer; sent: unknown }> {
  if (payload === undefined || payload === null) return { bytes: Buffer.alloc(0), sent: payload };
  if (typeof payload === 'string') return { bytes: Buffer.from(payload, 'utf8'), sent: payload };
  if (Buffer.isBuffer(payload)) return { bytes: payload, sent: payload };
  const chunks: Buffer[] = [];
  for await (const chunk of payload as AsyncIterable<Buffer | string>)
    chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  const bytes = Buffer.concat(chunks);
  return { bytes, sent: bytes };
}
