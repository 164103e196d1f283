import { describe, expect, it } from 'vitest';
import { MAX_SPANS_PER_REQUEST, TraceIngestBody, validateSpans } from '../../src/traces/span-input.js';

const START = '2024-05-01T10:00:00.000Z';
const END = '2024-05-01T10:00:02.500Z';

function span(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    trace_id: 't-1',
    span_id: `s-${Math.random().toString(36).slice(2)}`,
    name: 'root',
    start_time: START,
    ...overrides,
  };
}

describe('validateSpans', () => {
  it('fills every field of a minimal span with its default', () => {
    const { accepted, rejected } = validateSpans([span({ span_id: 's-1' })]);
    expect(rejected).toEqual([]);
    expect(accepted).toEqual([
      {
        trace_id: 't-1',
        span_id: 's-1',
        parent_span_id: '',
        name: 'root',
        kind: 'custom',
        start_time: Date.parse(START),
        end_time: null,
        status: 'unset',
        error_type: '',
        error_message: '',
        model_name: '',
        environment: '',
        user_id: '',
        session_id: '',
        input: null,
        output: null,
        metadata: {},
        cost: 0,
        input_tokens: 0,
        output_tokens: 0,
        total_tokens: 0,
        evaluation_run_id: '',
        cost_source: 'none',
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        reasoning_tokens: 0,
        time_to_first_token_ms: null,
        output_tokens_per_second: null,
        events: [],
        links: [],
        resource: {},
        attributes: {},
        dropped_attributes_count: 0,
        tags: [],
        prompt_name: '',
        prompt_version: 0,
      },
    ]);
  });

  it('keeps the extension fields: cache and reasoning tokens, streaming timings, events, links, resource; a sent cost is `sent`', () => {
    const [normalized] = validateSpans([
      span({
        cost: 0,
        cache_read_tokens: 3,
        cache_write_tokens: 2,
        reasoning_tokens: 1,
        time_to_first_token_ms: 120.5,
        output_tokens_per_second: 41.2,
        events: [{ name: 'exception', time: END, attributes: { 'exception.type': 'E' } }],
        links: [{ trace_id: 't-0', span_id: 's-0' }],
        resource: { 'service.name': 'svc' },
        dropped_attributes_count: 4,
      }),
    ]).accepted;
    expect(normalized).toMatchObject({
      cost: 0,
      cost_source: 'sent',
      cache_read_tokens: 3,
      cache_write_tokens: 2,
      reasoning_tokens: 1,
      time_to_first_token_ms: 120.5,
      output_tokens_per_second: 41.2,
      events: [{ name: 'exception', time: Date.parse(END), attributes: { 'exception.type': 'E' } }],
      links: [{ trace_id: 't-0', span_id: 's-0', attributes: {} }],
      resource: { 'service.name': 'svc' },
      dropped_attributes_count: 4,
    });
    const { rejected } = validateSpans([
      span({ events: [{ name: '', time: END }] }),
      span({ time_to_first_token_ms: -1 }),
      span({ resource: { k: 1 } }),
    ]);
    expect(rejected.map((r) => r.errors[0]?.split(':')[0])).toEqual([
      'events.0.name',
      'time_to_first_token_ms',
      'resource.k',
    ]);
  });

  it('keeps every field of a full span', () => {
    const full = span({
      span_id: 's-2',
      parent_span_id: 's-1',
      kind: 'retriever',
      end_time: END,
      status: 'error',
      error_type: 'TimeoutError',
      error_message: 'took too long',
      model_name: 'gpt-4o',
      environment: 'prod',
      user_id: 'u-1',
      session_id: 'sess-1',
      input: 'plain text',
      output: { answer: 42, sources: ['a'] },
      metadata: { team: 'search' },
      cost: 0.25,
      input_tokens: 10,
      output_tokens: 5,
      total_tokens: 20,
      evaluation_run_id: 'run-9',
    });
    const [normalized] = validateSpans([full]).accepted;
    expect(normalized).toMatchObject({
      parent_span_id: 's-1',
      kind: 'retriever',
      end_time: Date.parse(END),
      status: 'error',
      error_type: 'TimeoutError',
      error_message: 'took too long',
      model_name: 'gpt-4o',
      input: 'plain text',
      output: '{"answer":42,"sources":["a"]}',
      metadata: { team: 'search' },
      cost: 0.25,
      total_tokens: 20,
      evaluation_run_id: 'run-9',
    });
  });

  it('stores any JSON input as text: strings as they are, everything else as JSON', () => {
    const inputs = [{ role: 'user', content: 'hi' }, [1, 2], 3, true, '{"already":"json"}', null];
    const { accepted } = validateSpans(inputs.map((input) => span({ input })));
    expect(accepted.map((s) => s.input)).toEqual([
      '{"role":"user","content":"hi"}',
      '[1,2]',
      '3',
      'true',
      '{"already":"json"}',
      null,
    ]);
  });

  it('defaults total_tokens to input + output', () => {
    const { accepted } = validateSpans([
      span({ input_tokens: 7, output_tokens: 3 }),
      span({ input_tokens: 7 }),
      span({ total_tokens: 99, input_tokens: 1 }),
    ]);
    expect(accepted.map((s) => s.total_tokens)).toEqual([10, 7, 99]);
  });

  it('accepts any short kind, null for optional fields, and a time without offset as UTC', () => {
    const { accepted, rejected } = validateSpans([
      span({
        kind: 'reranker',
        parent_span_id: null,
        model_name: null,
        status: null,
        metadata: null,
        start_time: '2024-05-01T10:00:00',
      }),
      span({ parent_span_id: '', start_time: '2024-05-01T12:00:00+02:00', end_time: '2024-05-01T10:00:00.001Z' }),
    ]);
    expect(rejected).toEqual([]);
    expect(accepted[0]).toMatchObject({
      kind: 'reranker',
      parent_span_id: '',
      model_name: '',
      status: 'unset',
      metadata: {},
      start_time: Date.parse(START),
    });
    expect(accepted[1]).toMatchObject({
      parent_span_id: '',
      start_time: Date.parse(START),
      end_time: Date.parse(START) + 1,
    });
  });

  it('rejects bad spans and stores the good ones of the same batch', () => {
    const batch = [
      span({ span_id: 'ok-1' }),
      { span_id: 'no-trace', name: 'x', start_time: START },
      span({ span_id: 'backwards', end_time: '2024-05-01T09:59:59Z' }),
      span({ span_id: 'neg-cost', cost: -0.01 }),
      span({ span_id: 'frac-tokens', input_tokens: 1.5, output_tokens: -2 }),
      span({ span_id: 'bad-time', start_time: 'yesterday' }),
      span({ span_id: 'bad-status', status: 'failed' }),
      span({ span_id: 'bad-metadata', metadata: { n: 1 } }),
      'not a span',
      { trace_id: 't', span_id: 42, name: '', start_time: START },
      span({ span_id: 'ok-2' }),
    ];
    const { accepted, rejected } = validateSpans(batch);
    expect(accepted.map((s) => s.span_id)).toEqual(['ok-1', 'ok-2']);
    expect(rejected).toEqual([
      { index: 1, span_id: 'no-trace', errors: ['trace_id: Field required'] },
      { index: 2, span_id: 'backwards', errors: ['end_time: must not be before start_time'] },
      { index: 3, span_id: 'neg-cost', errors: ['cost: Input should be greater than or equal to 0'] },
      {
        index: 4,
        span_id: 'frac-tokens',
        errors: [
          'input_tokens: Input should be a valid integer',
          'output_tokens: Input should be greater than or equal to 0',
        ],
      },
      { index: 5, span_id: 'bad-time', errors: ['start_time: Invalid ISO date-time'] },
      { index: 6, span_id: 'bad-status', errors: ["status: Input should be 'ok', 'error', 'unset'"] },
      { index: 7, span_id: 'bad-metadata', errors: ['metadata.n: Input should be a valid string'] },
      { index: 8, span_id: null, errors: ['Input should be a valid object'] },
      {
        index: 9,
        span_id: null,
        errors: ['span_id: Input should be a valid string', 'name: String should have at least 1 character'],
      },
    ]);
  });

  it('enforces the length limits of ids, names and kinds', () => {
    const { rejected } = validateSpans([
      span({ trace_id: 'x'.repeat(129), name: 'n'.repeat(513), kind: 'k'.repeat(65) }),
      span({ trace_id: '' }),
    ]);
    expect(rejected[0]!.errors).toEqual([
      'trace_id: String should have at most 128 characters',
      'name: String should have at most 512 characters',
      'kind: String should have at most 64 characters',
    ]);
    expect(rejected[1]!.errors).toEqual(['trace_id: String should have at least 1 character']);
  });
});

describe('TraceIngestBody', () => {
  it('takes 1 to 10,000 spans and leaves their validation to validateSpans', () => {
    expect(TraceIngestBody.safeParse({ spans: [{ anything: true }] }).success).toBe(true);
    expect(
      TraceIngestBody.safeParse({ spans: Array.from({ length: MAX_SPANS_PER_REQUEST }, () => ({})) }).success,
    ).toBe(true);
  });

  it('refuses an empty batch and one of 10,001 spans', () => {
    expect(TraceIngestBody.safeParse({ spans: [] }).success).toBe(false);
    const tooMany = TraceIngestBody.safeParse({ spans: Array.from({ length: 10_001 }, () => span()) });
    expect(tooMany.success).toBe(false);
    expect(tooMany.error!.issues[0]).toMatchObject({ code: 'too_big', path: ['spans'], maximum: 10_000 });
    expect(TraceIngestBody.safeParse({}).success).toBe(false);
  });
});
