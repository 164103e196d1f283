import { expect } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';

/** Assertions on the spec's error envelopes (docs/errors.md). */

/** A 422 with an entry at exactly `loc`; returns the entry. */
export function expectValidationAt(res: LightMyRequestResponse, loc: (string | number)[]) {
  expect(res.statusCode, res.body).toBe(422);
  const detail = res.json().detail as { loc: unknown[]; msg: string; type: string }[];
  const entry = detail.find((d) => JSON.stringify(d.loc) === JSON.stringify(loc));
  expect(entry, `no 422 entry at ${JSON.stringify(loc)} in ${res.body}`).toBeDefined();
  expect(typeof entry!.msg).toBe('string');
  return entry!;
}

/** `{detail}` with the status, and the exact detail when given. */
export function expectDetail(res: LightMyRequestResponse, status: number, detail?: string) {
  expect(res.statusCode, res.body).toBe(status);
  if (detail === undefined) expect(typeof res.json().detail).toBe('string');
  else expect(res.json()).toEqual({ detail });
}

export const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
