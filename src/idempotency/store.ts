import type { Queryable } from '../stores/postgres.js';

/**
 * The SQL of the idempotency store (postgres/0008_idempotency_keys.sql). Rows live 24 hours
 * (docs/idempotency.md): past that a key is free again, whether or not the purge has removed its row.
 */

export const KEY_TTL = "interval '24 hours'";

/** How many expired rows one purge removes: each keyed create pays for a few, none waits on another. */
const PURGE_BATCH = 100;

export type StoredAnswer = { requestHash: Buffer; status: number; contentType: string; answer: Buffer };

/**
 * Removes a batch of expired rows, oldest first (run before each claim, outside its transaction:
 * no lock of it outlives the statement, and rows being purged by someone else are skipped).
 */
export async function purgeExpired(db: Queryable): Promise<number> {
  const result = await db.query(
    `DELETE FROM idempotency_keys WHERE (credential, key_hash) IN (
       SELECT credential, key_hash FROM idempotency_keys WHERE created_at <= now() - ${KEY_TTL}
        ORDER BY created_at LIMIT ${PURGE_BATCH} FOR UPDATE SKIP LOCKED)`,
  );
  return result.rowCount ?? 0;
}

/**
 * Claims the key for this request in the caller's transaction: true when claimed (a new row, or an
 * expired one taken over). While the claim is uncommitted, a concurrent claim of the same key waits
 * on its primary key until this transaction ends, then sees the committed row (or claims it when
 * this one rolled back).
 * $1 credential, $2 key hash, $3 request hash
 */
export async function claimKey(
  tx: Queryable,
  credential: string,
  keyHash: Buffer,
  requestHash: Buffer,
): Promise<boolean> {
  const { rowCount } = await tx.query(
    `INSERT INTO idempotency_keys AS k (credential, key_hash, request_hash) VALUES ($1, $2, $3)
     ON CONFLICT (credential, key_hash) DO UPDATE
        SET request_hash = EXCLUDED.request_hash, status = NULL, content_type = NULL, answer = NULL, created_at = now()
      WHERE k.created_at <= now() - ${KEY_TTL}`,
    [credential, keyHash, requestHash],
  );
  return rowCount === 1;
}

/** The committed answer of a live key, if any. $1 credential, $2 key hash */
export async function findAnswer(
  db: Queryable,
  credential: string,
  keyHash: Buffer,
): Promise<StoredAnswer | undefined> {
  const { rows } = await db.query<{ request_hash: Buffer; status: number; content_type: string; answer: Buffer }>(
    `SELECT request_hash, status, content_type, answer FROM idempotency_keys
      WHERE credential = $1 AND key_hash = $2 AND status IS NOT NULL AND created_at > now() - ${KEY_TTL}`,
    [credential, keyHash],
  );
  const row = rows[0];
  return (
    row && { requestHash: row.request_hash, status: row.status, contentType: row.content_type, answer: row.answer }
  );
}

/** Stores the answer on the claimed row, in the create's transaction (committed with it). */
export async function storeAnswer(
  tx: Queryable,
  credential: string,
  keyHash: Buffer,
  status: number,
  contentType: string,
  sealed: Buffer,
): Promise<void> {
  await tx.query(
    'UPDATE idempotency_keys SET status = $3, content_type = $4, answer = $5 WHERE credential = $1 AND key_hash = $2',
    [credential, keyHash, status, contentType, sealed],
  );
}

/**
 * A deferred create's key (docs/idempotency.md, "Long creates"): inserted complete, answer and all,
 * by the create's own final transaction, and committed with it. A live row already there (a
 * concurrent duplicate committed first) is left alone: false, and the caller rolls back. An expired
 * one is taken over. On a server, a duplicate's uncommitted insert makes this one wait for its end.
 * $1 credential, $2 key hash, $3 request hash, $4 status, $5 content type, $6 sealed answer
 */
export async function recordAnswer(
  tx: Queryable,
  row: {
    credential: string;
    keyHash: Buffer;
    requestHash: Buffer;
    status: number;
    contentType: string;
    sealed: Buffer;
  },
): Promise<boolean> {
  const { rowCount } = await tx.query(
    `INSERT INTO idempotency_keys AS k (credential, key_hash, request_hash, status, content_type, answer) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (credential, key_hash) DO UPDATE
        SET request_hash = EXCLUDED.request_hash, status = EXCLUDED.status, content_type = EXCLUDED.content_type,
            answer = EXCLUDED.answer, created_at = now()
      WHERE k.created_at <= now() - ${KEY_TTL}`,
    [row.credential, row.keyHash, row.requestHash, row.status, row.contentType, row.sealed],
  );
  return rowCount === 1;
}
