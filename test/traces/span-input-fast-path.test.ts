import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { plainlyValid, SpanInputSchema, validateSpans } from '../../src/traces/span-input.js';

/**
 * Ingest validates the common span by hand before the schema (span-input.ts, `plainlyValid`): the hand
 * check may send a valid span to the schema, never accept one the schema refuses or read it otherwise.
 */

const FIELDS = [
  'trace_id',
  'span_id',
  'parent_span_id',
  'name',
  'kind',
  'start_time',
  'end_time',
  'status',
  'error_type',
  'error_message',
  'model_name',
  'environment',
  'user_id',
  'session_id',
  'input',
  'output',
  'metadata',
  'cost',
  'input_tokens',
  'output_tokens',
  'total_tokens',
  'evaluation_run_id',
  'cache_read_tokens',
  'cache_write_tokens',
  'reasoning_tokens',
  'time_to_first_token_ms',
  'output_tokens_per_second',
  'resource',
  'attributes',
  'dropped_attributes_count',
];

const text = (max: number) =>
  fc.oneof(
    fc.string({ maxLength: max + 2 }),
    fc.string({ unit: 'grapheme', maxLength: 4 }),
    fc.constantFrom('', 'x'.repeat(max), 'x'.repeat(max + 1), '😀'.repeat(Math.ceil(max / 2) + 1)),
  );
const time = fc.oneof(
  fc.integer({ min: 0, max: 4_102_444_800_000 }).map((ms) => new Date(ms).toISOString()),
  fc.constantFrom(
    '2024-05-01T10:00:00Z',
    '2024-05-01T10:00:00',
    '2024-05-01T10:00',
    '2024-05-01T10:00:00+02:00',
    '2024-05-01T10:00:00.123456789+0200',
    '2024-02-30T10:00:00Z',
    '2024-05-01',
    '2024-05-01 10:00:00Z',
    'now',
    '',
  ),
);
const junk = fc.oneof(
  fc.constant(null),
  fc.constant(undefined),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.string({ maxLength: 3 }),
  fc.constant([]),
  fc.constant({}),
);
const count = fc.oneof(fc.nat(), fc.constantFrom(-1, 1.5, 2 ** 60, Number.NaN, Number.POSITIVE_INFINITY, -0));
const metadata = fc.oneof(
  fc.dictionary(text(256), text(40), { maxKeys: 4 }),
  fc.dictionary(fc.string({ maxLength: 3 }), junk, { maxKeys: 3 }),
  fc.constant(Object.fromEntries(Array.from({ length: 257 }, (_, i) => [`k${i}`, 'v']))),
  fc.constant(JSON.parse('{"__proto__": "x"}')),
  fc.constant(Object.assign(Object.create(null), { a: 'b' })),
  fc.constant(['a']),
);
const event = fc.record(
  { name: fc.oneof(text(512), junk), time: fc.oneof(time, junk), attributes: fc.oneof(metadata, junk), extra: junk },
  { requiredKeys: [] },
);
const link = fc.record(
  { trace_id: fc.oneof(text(128), junk), span_id: fc.oneof(text(128), junk), attributes: fc.oneof(metadata, junk) },
  { requiredKeys: [] },
);
const spanLike = fc.record(
  {
    trace_id: fc.oneof(text(128), junk),
    span_id: fc.oneof(text(128), junk),
    parent_span_id: fc.oneof(text(128), junk),
    name: fc.oneof(text(512), junk),
    kind: fc.oneof(text(64), junk),
    start_time: fc.oneof(time, junk),
    end_time: fc.oneof(time, junk),
    status: fc.oneof(fc.constantFrom('ok', 'error', 'unset', 'OK', ''), junk),
    error_type: fc.oneof(text(1024), junk),
    error_message: fc.oneof(text(40), junk),
    model_name: fc.oneof(text(1024), junk),
    session_id: fc.oneof(text(1024), junk),
    input: fc.oneof(junk, fc.jsonValue()),
    metadata: fc.oneof(metadata, junk),
    cost: fc.oneof(fc.double(), count, junk),
    input_tokens: fc.oneof(count, junk),
    total_tokens: fc.oneof(count, junk),
    evaluation_run_id: fc.oneof(text(1024), junk),
    cache_read_tokens: fc.oneof(count, junk),
    reasoning_tokens: fc.oneof(count, junk),
    time_to_first_token_ms: fc.oneof(fc.double(), fc.constantFrom(0, 2_147_483_647, 2_147_483_648, -1), junk),
    output_tokens_per_second: fc.oneof(fc.double(), junk),
    resource: fc.oneof(metadata, junk),
    attributes: fc.oneof(metadata, junk),
    dropped_attributes_count: fc.oneof(count, junk),
    events: fc.oneof(
      fc.array(event, { maxLength: 3 }),
      fc.constant(Array.from({ length: 129 }, () => ({ name: 'e', time: '2024-05-01T10:00:00Z' }))),
      junk,
    ),
    links: fc.oneof(fc.array(link, { maxLength: 3 }), junk),
    extra: junk,
  },
  { requiredKeys: [] },
);
const valid = fc.record(
  {
    trace_id: text(128).filter((s) => s.length > 0 && s.length <= 128),
    span_id: fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 1, maxLength: 16 }),
    name: fc.constantFrom('root', 'chat', 'tool'),
    start_time: fc.integer({ min: 0, max: 4_102_444_800_000 }).map((ms) => new Date(ms).toISOString()),
    metadata: fc
      .dictionary(
        fc.string({ minLength: 1, maxLength: 8 }).filter((k) => k !== '__proto__'),
        fc.string({ maxLength: 8 }),
        { maxKeys: 3 },
      )
      .map((d) => ({ ...d })),
    cost: fc.double({ min: 0, max: 10, noNaN: true }),
    input_tokens: fc.nat(),
    cache_read_tokens: fc.nat(),
    time_to_first_token_ms: fc.double({ min: 0, max: 60_000, noNaN: true }),
    resource: fc.constant({ 'service.name': 'svc', 'host.name': 'h1' }),
    events: fc.array(
      fc.record({
        name: fc.constantFrom('exception', 'gen_ai.choice'),
        time: fc.constant('2024-05-01T10:00:00.123Z'),
        attributes: fc.constant({ a: 'b' }),
      }),
      { maxLength: 3 },
    ),
    links: fc.array(fc.record({ trace_id: fc.constant('t1'), span_id: fc.constant('s1') }), { maxLength: 2 }),
  },
  { requiredKeys: ['trace_id', 'span_id', 'name', 'start_time'] },
);

function known(span: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(FIELDS.filter((f) => span[f] !== undefined).map((f) => [f, span[f]]));
}

describe("ingest's fast span check", () => {
  it('accepts only spans the schema accepts, and reads them as the schema does', () => {
    fc.assert(
      fc.property(fc.oneof(spanLike, valid), (item) => {
        if (!plainlyValid(item)) return;
        const parsed = SpanInputSchema.safeParse(item);
        expect(parsed.success).toBe(true);
        expect(known(item as Record<string, unknown>)).toEqual(known(parsed.data as Record<string, unknown>));
        // Events and links are read field by field (name, time, attributes; trace_id, span_id, attributes).
        const pick = (list: unknown, keys: string[]) =>
          ((list ?? []) as Record<string, unknown>[]).map((x) => keys.map((k) => x[k] ?? null));
        const data = parsed.data as Record<string, unknown>;
        const it = item as Record<string, unknown>;
        expect(pick(it.events, ['name', 'time', 'attributes'])).toEqual(
          pick(data.events, ['name', 'time', 'attributes']),
        );
        expect(pick(it.links, ['trace_id', 'span_id', 'attributes'])).toEqual(
          pick(data.links, ['trace_id', 'span_id', 'attributes']),
        );
      }),
      { numRuns: 5000 },
    );
  });

  it('takes the common span, and validateSpans answers as the schema does either way', () => {
    fc.assert(
      fc.property(fc.oneof(spanLike, valid), (item) => {
        const { accepted, rejected } = validateSpans([item]);
        expect(accepted.length).toBe(SpanInputSchema.safeParse(item).success ? 1 : 0);
        expect(rejected.length).toBe(1 - accepted.length);
      }),
      { numRuns: 3000 },
    );
    fc.assert(
      fc.property(valid, (item) => {
        expect(plainlyValid(item), JSON.stringify(item)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
