import crypto from 'node:crypto';

/** The ids every resource's rows carry: random UUIDs (v4), made here and checked here. */

export function newId(): string {
  return crypto.randomUUID();
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Whether a path or body id can be a stored id at all. An id that can't is answered as not found
 * before it reaches Postgres, which would refuse it as a malformed uuid.
 */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
