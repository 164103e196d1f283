import { describe, expect, it } from 'vitest';
import {
  dottedOrderIds,
  runIds,
  runTime,
  runToSpanFields,
  runToSpanPart,
} from '../../src/protocols/langsmith/run-mapping.js';
import { feedbackToScore } from '../../src/protocols/langsmith/feedback.js';

/** The pure run → span fields mapping (src/protocols/langsmith/run-mapping.ts) and feedback → score. */

const ROOT = '11111111-1111-4111-8111-111111111111';
const MID = '22222222-2222-4222-8222-222222222222';
const LEAF = '33333333-3333-4333-8333-333333333333';
const DOTTED = `20260101T120000000001Z${ROOT}.20260101T120000100000Z${MID}.20260101T120000200000Z${LEAF}`;

describe('LangSmith run mapping', () => {
  it('reads trace and parent from dotted_order when the run does not name them', () => {
    expect(dottedOrderIds(DOTTED)).toEqual([ROOT, MID, LEAF]);
    expect(runIds({ id: LEAF, dotted_order: DOTTED })).toEqual({ span_id: LEAF, trace_id: ROOT, parent_span_id: MID });
    expect(runIds({ id: ROOT, dotted_order: DOTTED.split('.')[0] })).toEqual({
      span_id: ROOT,
      trace_id: ROOT,
      parent_span_id: undefined,
    });
    expect(runIds({ name: 'x' })).toBe('id: a run needs its id');
  });

  it('takes epoch milliseconds and ISO strings, a zone-less one as UTC', () => {
    expect(runTime(Date.UTC(2026, 0, 1, 12))).toBe('2026-01-01T12:00:00.000Z');
    expect(runTime('2026-01-01T12:00:00.123456Z')).toBe('2026-01-01T12:00:00.123456Z');
    expect(runTime('2026-01-01T12:00:00.123456')).toBe('2026-01-01T12:00:00.123456Z');
    expect(runTime('')).toBeUndefined();
  });

  it('maps kinds, model, usage_metadata with its details, errors and thread keys', () => {
    const fields = runToSpanFields({
      id: LEAF,
      dotted_order: DOTTED,
      name: 'ChatAnthropic',
      run_type: 'llm',
      start_time: '2026-01-01T12:00:00.200000Z',
      end_time: Date.UTC(2026, 0, 1, 12, 0, 1),
      error: 'RateLimitError: slow down',
      extra: { metadata: { ls_model_name: 'claude-sonnet-4', thread_id: 't-1', user_id: 'u-1', list: [1] } },
      outputs: {
        usage_metadata: {
          input_tokens: 100,
          output_tokens: 40,
          total_tokens: 140,
          input_token_details: { cache_read: 60, cache_creation: 10 },
          output_token_details: { reasoning: 12 },
        },
      },
      reference_example_id: 'ex-1',
      session_name: 'proj',
    });
    expect(fields).toMatchObject({
      parent_span_id: MID,
      kind: 'llm',
      status: 'error',
      error_type: 'RateLimitError',
      model_name: 'claude-sonnet-4',
      input_tokens: 100,
      output_tokens: 40,
      total_tokens: 140,
      cache_read_tokens: 60,
      cache_write_tokens: 10,
      reasoning_tokens: 12,
      session_id: 't-1',
      user_id: 'u-1',
      end_time: '2026-01-01T12:00:01.000Z',
    });
    // The user's metadata apart from what LangChain says about the run (issue 37).
    expect(fields.metadata).toEqual({ thread_id: 't-1', user_id: 'u-1', 'langsmith.project': 'proj' });
    expect(fields.attributes).toEqual({ ls_model_name: 'claude-sonnet-4', reference_example_id: 'ex-1' });
    expect(runToSpanFields({ id: LEAF, run_type: 'agent' }).kind).toBe('custom');
  });

  it('makes a post the create and a patch an update, timed by start and end', () => {
    const post = runToSpanPart({ id: ROOT, start_time: '2026-01-01T12:00:00Z', name: 'a' }, 'post', 5);
    const patch = runToSpanPart({ id: ROOT, end_time: Date.UTC(2026, 0, 1, 12, 0, 3) }, 'patch', 5);
    expect(post).toMatchObject({ kind: 'create', trace_id: ROOT, event_time: Date.UTC(2026, 0, 1, 12) });
    expect(patch).toMatchObject({ kind: 'update', event_time: Date.UTC(2026, 0, 1, 12, 0, 3) });
    expect((patch as { fields: object }).fields).toEqual({ end_time: '2026-01-01T12:00:03.000Z', status: 'ok' });
  });
});

describe('LangSmith feedback as a score', () => {
  it('maps score, value, comment and correction', () => {
    expect(
      feedbackToScore({ id: 'f', run_id: LEAF, trace_id: ROOT, key: 'k', score: 0.5, comment: 'c' }, undefined),
    ).toEqual({
      score_id: 'f',
      trace_id: ROOT,
      span_id: LEAF,
      name: 'k',
      comment: 'c',
      data_type: 'numeric',
      value: 0.5,
    });
    expect(feedbackToScore({ run_id: ROOT, key: 'ok', score: false, correction: { a: 1 } }, undefined)).toEqual({
      trace_id: ROOT,
      name: 'ok',
      metadata: { correction: '{"a":1}' },
      data_type: 'boolean',
      value: 0,
    });
    expect(feedbackToScore({ run_id: LEAF, key: 'tone', value: 'warm' }, ROOT)).toMatchObject({
      trace_id: ROOT,
      span_id: LEAF,
      data_type: 'categorical',
      string_value: 'warm',
    });
  });
});
