import { z } from 'zod';

/**
 * The zod pieces many routes' params, queries and bodies share, and their bounds (docs/limits.md,
 * "Requests and pages"), so each rule is said once. Resource-specific fields stay in their routes.ts.
 */

/** Reads: any credential; an API key's project is its own, a user's read names it (docs/authentication.md). */
export const ProjectQuery = z.object({ project_id: z.string().optional() });

/** Why a project or workspace is deleted (docs/limits.md, "Accounts"): 3 to 500 characters after trimming. */
export const DeleteReason = z.string().trim().min(3).max(500);

/** Postgres text can't hold U+0000; any string stored as text refuses it with a 422. */
export const StoredText = (min: number, max: number) =>
  z
    .string()
    .min(min)
    .max(max)
    .refine((s) => !s.includes('\u0000'), 'strings may not contain U+0000');

/** An integer query parameter from `min` to `max` inclusive (a query string arrives as text). */
export const QueryInt = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** The list pages' bounds: `limit` 1 to 200 (default 50), `page` 0 to 10000 (default 0). */
export const PAGE_LIMIT = { min: 1, max: 200, default: 50 } as const;
export const PAGE_NUMBER = { min: 0, max: 10_000, default: 0 } as const;
export const Pagination = z.object({
  limit: QueryInt(PAGE_LIMIT.min, PAGE_LIMIT.max).default(PAGE_LIMIT.default),
  page: QueryInt(PAGE_NUMBER.min, PAGE_NUMBER.max).default(PAGE_NUMBER.default),
});

/**
 * An ISO 8601 date-time; the offset may be left out (then it is UTC, see `isoToEpochMs`). The window
 * of widget reads takes only this (docs/dashboards.md, "The window").
 */
export const IsoDateTime = z.iso.datetime({ offset: true, local: true });

/** `IsoDateTime`, or a date alone (its midnight UTC): the trace list's `start_after`/`end_before` (docs/traces.md). */
export const IsoDateOrDateTime = z.union([IsoDateTime, z.iso.date()]);

/**
 * ISO date or date-time (already validated) to epoch ms, the API's one rule: a time without an
 * offset is UTC; a date alone is its midnight UTC.
 */
export function isoToEpochMs(iso: string): number {
  return Date.parse(/(?:[zZ]|[+-]\d\d:?\d\d)$/.test(iso) || !iso.includes('T') ? iso : `${iso}Z`);
}

/**
 * An absolute http(s) URL of at most 2,048 characters with no user or password in it (an outbound
 * address: a webhook, a bucket endpoint, a model provider), refused with `message`. Where it may point
 * is decided when it is called (src/outbound).
 */
export const HttpUrl = (message: string) =>
  z
    .string()
    .max(2048)
    .refine((v) => {
      try {
        const url = new URL(v);
        return (
          (url.protocol === 'http:' || url.protocol === 'https:') &&
          url.hostname !== '' &&
          !url.username &&
          !url.password
        );
      } catch {
        return false;
      }
    }, message);
