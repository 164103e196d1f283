import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { decodeOtlpJson, otlpToSpans } from '../../../src/traces/otlp.js';
import { validateSpans, type NormalizedSpan, type SpanInput } from '../../../src/traces/span-input.js';

/** Pure helpers for the convention tests: recorded fixtures (test/fixtures/otlp) and hand-made spans. */

const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/otlp');

/** A recorded export of a real library, mapped and validated as the OTLP route does. */
export function mapFixture(name: string): NormalizedSpan[] {
  const raw = fs.readFileSync(path.join(FIXTURES, `${name}.json`), 'utf8');
  return normalize(otlpToSpans(decodeOtlpJson(raw)));
}

export function normalize(inputs: SpanInput[]): NormalizedSpan[] {
  const { accepted, rejected } = validateSpans(inputs);
  expect(rejected).toEqual([]);
  return accepted;
}

/** The spans named `name`, in export order. */
export function named(spans: NormalizedSpan[], name: string): NormalizedSpan[] {
  const found = spans.filter((s) => s.name === name);
  expect(found.length, `a span named ${name}`).toBeGreaterThan(0);
  return found;
}

export function parsed(text: string | null): unknown {
  expect(text).not.toBeNull();
  return JSON.parse(text!);
}

type Value = string | number | boolean | Value[] | null;

/** OTLP JSON's AnyValue for a plain value. */
export function anyValue(value: Value): unknown {
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (typeof value === 'number') return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value };
  if (Array.isArray(value)) return { arrayValue: { values: value.map(anyValue) } };
  return {};
}

export const attributes = (attrs: Record<string, Value>) =>
  Object.entries(attrs).map(([key, value]) => ({ key, value: anyValue(value) }));

export const START_NANOS = 1_700_000_000_000_000_000n;

/** One hand-made OTLP span (started at START_NANOS, 1 s long) through the mapping, unvalidated. */
export function mapOne(
  attrs: Record<string, Value>,
  extra: Record<string, unknown> = {},
  resource: Record<string, Value> = {},
): SpanInput {
  const span = {
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    name: 'span',
    startTimeUnixNano: String(START_NANOS),
    endTimeUnixNano: String(START_NANOS + 1_000_000_000n),
    attributes: attributes(attrs),
    ...extra,
  };
  const [mapped] = otlpToSpans(
    decodeOtlpJson({
      resourceSpans: [
        { resource: { attributes: attributes(resource) }, scopeSpans: [{ scope: { name: 'test' }, spans: [span] }] },
      ],
    }),
  );
  return mapped!;
}
