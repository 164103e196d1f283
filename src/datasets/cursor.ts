import crypto from 'node:crypto';
import { RequestValidationError } from '../errors.js';
import type { PostgresStore } from '../stores/postgres.js';

/**
 * Opaque page cursors (docs/datasets.md, "Reading a version": 1 to 64 characters): a position and an
 * HMAC of (scope, position), where the scope names what is paged (a version id, a pair of runs and a
 * threshold). A cursor made for another scope, or with one character changed, fails verification,
 * so it can never page through something else: the caller gets a 422, not another version's cases.
 * Paged things here are immutable (a version) or ordered by an immutable key, so a position stays
 * meaningful for ever; no expiry is needed.
 *
 * Form: `<position in base 36>.<22 characters of base64url HMAC-SHA256>`, at most 36 characters.
 */

const SECRET_NAME = 'page_cursor_key';
const MAC_CHARS = 22;
const keys = new WeakMap<PostgresStore, Promise<Buffer>>();

/** The deployment's cursor key: generated once, kept in Postgres so every process agrees. */
export function cursorKey(pg: PostgresStore): Promise<Buffer> {
  let pending = keys.get(pg);
  if (!pending) {
    pending = loadKey(pg);
    pending.catch(() => keys.delete(pg));
    keys.set(pg, pending);
  }
  return pending;
}

async function loadKey(pg: PostgresStore): Promise<Buffer> {
  await pg.pool.query('INSERT INTO server_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [
    SECRET_NAME,
    crypto.randomBytes(32).toString('base64url'),
  ]);
  const { rows } = await pg.pool.query<{ value: string }>('SELECT value FROM server_secrets WHERE name = $1', [
    SECRET_NAME,
  ]);
  return Buffer.from(rows[0]!.value, 'base64url');
}

function mac(key: Buffer, scope: string, position: string): string {
  return crypto.createHmac('sha256', key).update(`${scope}\n${position}`).digest('base64url').slice(0, MAC_CHARS);
}

export function signCursor(key: Buffer, scope: string, position: number): string {
  const p = position.toString(36);
  return `${p}.${mac(key, scope, p)}`;
}

/** The position a cursor carries, or null when it was not made by signCursor for this scope. */
export function readCursor(key: Buffer, scope: string, cursor: string): number | null {
  const m = /^([0-9a-z]{1,12})\.([A-Za-z0-9_-]{22})$/.exec(cursor);
  if (!m) return null;
  const expected = Buffer.from(mac(key, scope, m[1]!));
  const given = Buffer.from(m[2]!);
  if (!crypto.timingSafeEqual(expected, given)) return null;
  const position = parseInt(m[1]!, 36);
  return Number.isSafeInteger(position) ? position : null;
}

/** A cursor that readCursor refused: a 422 at `query.cursor`, like any invalid query parameter. */
export function invalidCursor(cursor: string): RequestValidationError {
  return new RequestValidationError([
    {
      loc: ['query', 'cursor'],
      msg: 'cursor is not valid here; pass the next_cursor of a previous page of this same read',
      type: 'value_error',
      input: cursor,
    },
  ]);
}
