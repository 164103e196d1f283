import type { OtlpValue } from '../otlp-types.js';

/**
 * Readers of attribute values for the convention table (precedence.ts). Each returns the field's value,
 * or undefined when the attribute's value does not fit the field: the attribute then stays in
 * metadata and the next convention is tried. Lenient by design: an exporter can't fix one span.
 */

/** What a reader may need beyond the value: the span's start, for times sent as instants. */
export interface ReadContext {
  startMs: number;
}

export type Reader<T = unknown> = (value: OtlpValue, ctx: ReadContext) => T | undefined;

/** A non-empty scalar as text. */
export const text: Reader<string> = (value) => {
  if (typeof value === 'string') return value === '' ? undefined : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
};

/** A number ≥ 0, possibly sent as a numeric string (Python SDKs stringify some counts). */
export const amount: Reader<number> = (value) => {
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  return Number.isFinite(n) && n >= 0 ? n : undefined;
};

/** A token count: an integer ≥ 0. */
export const count: Reader<number> = (value, ctx) => {
  const n = amount(value, ctx);
  return n !== undefined && Number.isSafeInteger(n) ? n : undefined;
};

/**
 * A prompt version number: an integer ≥ 1 up to a Postgres integer, sent as a number or as its text
 * (`"3"`, and `"v3"` as template versions are often written). Anything else (`"1.2"`, a hash) stays in metadata.
 */
export const versionNumber: Reader<number> = (value) => {
  const digits =
    typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim().replace(/^v/i, '') : '';
  if (!/^\d{1,10}$/.test(digits)) return undefined;
  const n = Number(digits);
  return n >= 1 && n <= 2_147_483_647 ? n : undefined;
};

/** Seconds (the OTel GenAI conventions' unit for durations) as milliseconds. */
export const secondsAsMs: Reader<number> = (value, ctx) => {
  const n = amount(value, ctx);
  return n === undefined ? undefined : n * 1000;
};

/** An instant (ISO text, possibly JSON-quoted as the Langfuse SDK sends it) as milliseconds after the span's start. */
export const instantAfterStart: Reader<number> = (value, ctx) => {
  if (typeof value !== 'string' || ctx.startMs <= 0) return undefined;
  const iso = value.startsWith('"') ? parseJson(value) : value;
  const ms = typeof iso === 'string' ? Date.parse(iso) : NaN;
  return Number.isFinite(ms) && ms >= ctx.startMs ? ms - ctx.startMs : undefined;
};

/** Input or output: any value but null and the empty string (an empty `ai.response.text` beside tool calls). */
export const content: Reader<unknown> = (value) => (value === null || value === '' ? undefined : value);

/** A string attribute holding a JSON object, parsed; undefined when it isn't one. */
export function jsonObject(value: OtlpValue): Record<string, unknown> | undefined {
  const parsed = typeof value === 'string' ? (value.startsWith('{') ? parseJson(value) : undefined) : value;
  return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
    ? (parsed as Record<string, unknown>)
    : undefined;
}

export function parseJson(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}

/** A kind reader from a table of the convention's values; values outside it give no kind. */
export function kindFrom(table: Readonly<Record<string, string>>, passThrough = false): Reader<string> {
  return (value) => {
    if (typeof value !== 'string' || value === '') return undefined;
    const lowered = value.toLowerCase();
    return Object.hasOwn(table, lowered) ? table[lowered] || undefined : passThrough ? lowered : undefined;
  };
}

/** Metadata and resource values are strings: a string as it is, anything else as its JSON. */
export function asString(value: OtlpValue): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}
