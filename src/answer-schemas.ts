import { z } from 'zod';

/**
 * Pieces shared by the routes' answer schemas (`schema.response`). Answer schemas document; they
 * never shape an answer: the serializer is plain `JSON.stringify` whatever the schema (http.ts), so
 * an answer is byte-for-byte what the service built. The test harness checks every answer the suite
 * receives against these schemas, through the OpenAPI document (test/support/answers.ts).
 */

/**
 * An ISO 8601 date-time with its offset (docs/README.md, "Conventions": times are ISO 8601 date-time strings).
 * Services may hand over a `Date`: `JSON.stringify` writes it as such a string, which is what is
 * documented, so the type admits both while the schema says string.
 */
export const DateTime = z.iso.datetime({ offset: true }) as unknown as z.ZodType<string | Date>;

/** Integers the spec bounds to JavaScript's safe range (counts). */
export const Count = z.number().int().min(0);

/** The pagination meta of lists (docs/README.md, "Conventions"). */
export const PaginationMeta = z.object({ page: Count, limit: Count, total: Count }).meta({ id: 'PaginationMeta' });

/** A page of a list answer: `{data, meta}`. */
export function page<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), meta: PaginationMeta });
}

/** A list answered whole (small, bounded catalogs): `{data}`. */
export function all<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item) });
}

/** The answer of a catalog delete (dashboards, widgets, detectors, alerts). */
export const Deleted = z.object({ deleted: z.literal(true), id: z.string() });

/** Any JSON value (widget specs, test case inputs), documented as such. */
export const AnyJson = z.unknown().describe('any JSON value');

/**
 * The schema of an answer the route writes as JSON text or streams (dataset versions keep test case
 * values as the caller's JSON text): documented and checked in tests like any other, typed as what
 * the handler sends.
 */
export function writtenAsText<T extends z.ZodType>(schema: T): z.ZodType<unknown> {
  return schema as unknown as z.ZodType<unknown>;
}

/** `T` with its times as the ISO strings JSON carries (DateTime admits a `Date` only for services' sake). */
export type IsoTimes<T> = T extends Date
  ? string
  : T extends readonly (infer U)[]
    ? IsoTimes<U>[]
    : T extends object
      ? { [K in keyof T]: IsoTimes<T[K]> }
      : T;

/**
 * The type of an answer, inferred from its schema, with its times as strings: what a service that
 * builds the answer from ClickHouse or Postgres rows declares it returns (traces/trace-item.ts).
 */
export type AnswerOf<S extends z.ZodType> = IsoTimes<z.output<S>>;
