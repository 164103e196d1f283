import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { runRca } from '../../src/signals/rca.js';
import { rankHints } from '../../src/signals/rca-query.js';
import { hex, signalTitled, span, tick } from './support.js';
import { ingestSpans } from '../support/ingest.js';

/** Root-cause hints name the planted cause on generated data; honest below the minimum support. */

const h = useHarness({ QUEUE_PREFIX: `signals-rca-${crypto.randomBytes(4).toString('hex')}` });

/** A trace of an agent root and one LLM call, both in `environment`, the call on `model`. */
function trace(start: number, model: string, environment: string, failing: boolean): Record<string, unknown>[] {
  const traceId = `t-${hex()}`;
  return [
    span({
      trace_id: traceId,
      span_id: 'root',
      name: 'agent.run',
      kind: 'agent',
      start,
      durationMs: 800,
      environment,
      user_id: `user-${hex(3)}`,
    }),
    span({
      trace_id: traceId,
      span_id: 'llm',
      parent_span_id: 'root',
      name: 'llm.chat',
      kind: 'llm',
      start: start + 5,
      durationMs: 700,
      model_name: model,
      environment,
      ...(failing ? { status: 'error' as const, error_type: 'RateLimitError', error_message: 'slow down' } : {}),
    }),
  ];
}

/** A trace failing with a TimeoutError in `name`, production, on no model. */
function failingTraceOn(name: string, start: number): Record<string, unknown>[] {
  const traceId = `t-${hex()}`;
  return [
    span({
      trace_id: traceId,
      span_id: 'root',
      name: 'agent.run',
      kind: 'agent',
      start,
      durationMs: 800,
      environment: 'production',
    }),
    span({
      trace_id: traceId,
      span_id: 'tool',
      parent_span_id: 'root',
      name,
      kind: 'tool',
      start: start + 5,
      environment: 'production',
      status: 'error',
      error_type: 'TimeoutError',
    }),
  ];
}

const getSignal = (token: string, id: string) =>
  call(h().api, { method: 'GET', url: `${PUBLIC}/signals/${id}`, token }).then((r) => r.json());

describe('root-cause hints', () => {
  it('name the attributes the failing traces share: every failing trace uses model X in environment Y', async () => {
    const { key, project } = await projectWithKey(h());
    const t0 = Date.now() - 3_600_000;
    const spans: Record<string, unknown>[] = [];
    // 20 failing traces, all on gpt-bad in staging.
    for (let i = 0; i < 20; i++) spans.push(...trace(t0 + i * 60_000, 'gpt-bad', 'staging', true));
    // 60 healthy ones: gpt-bad in a quarter of them, staging in a tenth.
    const models = ['gpt-4o', 'claude', 'mini', 'gpt-bad'];
    for (let i = 0; i < 60; i++)
      spans.push(
        ...trace(
          t0 + i * 20_000 + 7,
          models[i % 4]!,
          i % 10 === 0 ? 'staging' : i % 2 ? 'production' : 'development',
          false,
        ),
      );
    await ingestSpans(h(), key.key, spans);
    // The tick leaves the hints pending here, to look at each step (the worker's tick answers them).
    await tick(h(), project.id, { rca: false });
    const signal = await signalTitled(h(), key.key, 'RateLimitError in llm.chat');
    expect(signal.hit_count).toBe(20);
    expect((await getSignal(key.key, signal.signal_id)).rca_state).toBe('pending');

    const outcome = await runRca(h().ctx, signal.signal_id);
    expect(outcome.state).toBe('ready');
    const detail = await getSignal(key.key, signal.signal_id);
    expect(detail.rca_state).toBe('ready');
    expect(Object.keys(detail.rca).sort()).toEqual(['generated_at', 'hints']);
    expect(Date.parse(detail.rca.generated_at)).toBeGreaterThan(t0);
    // Staging: all 20 failing traces, 6 of 60 others (lift 10); gpt-bad: 20 of 20 vs 15 of 60 (lift 4).
    expect(detail.rca.hints).toEqual([
      { attribute: 'environment', value: 'staging', signal_share: 1, baseline_share: 0.1, lift: 10 },
      { attribute: 'model_name', value: 'gpt-bad', signal_share: 1, baseline_share: 0.25, lift: 4 },
    ]);
    // Answered once: a second run for the same request has nothing to do.
    expect((await runRca(h().ctx, signal.signal_id)).state).toBe('skipped');
  });

  it('are answered by the detection tick: for new signals, and again for a merge target', async () => {
    const { owner, key, project } = await projectWithKey(h());
    const t0 = Date.now() - 600_000;
    const spans: Record<string, unknown>[] = [];
    for (let i = 0; i < 6; i++) spans.push(...trace(t0 + i * 1000, 'gpt-bad', 'staging', true));
    for (let i = 0; i < 12; i++) spans.push(...trace(t0 + i * 1000 + 3, 'gpt-4o', 'production', false));
    spans.push(...failingTraceOn('tool.search', t0 + 50));
    await ingestSpans(h(), key.key, spans);
    const report = await tick(h(), project.id);
    expect(report.rcaAnswered).toBe(2);
    const llm = await signalTitled(h(), key.key, 'RateLimitError in llm.chat');
    const tool = await signalTitled(h(), key.key, 'TimeoutError in tool.search');
    const before = await getSignal(key.key, llm.signal_id);
    expect(before.rca_state).toBe('ready');
    expect(before.rca.hints.map((x: { attribute: string; value: string }) => `${x.attribute}=${x.value}`)).toEqual([
      'environment=staging',
      'model_name=gpt-bad',
    ]);
    const merged = await call(h().web, {
      method: 'POST',
      url: `/api/projects/${project.id}/signals/${tool.signal_id}/merge`,
      token: owner.token,
      payload: { into_signal_id: llm.signal_id },
    });
    expect(merged.json().merged_into.rca_state).toBe('pending');
    expect((await tick(h(), project.id)).rcaAnswered).toBe(1);
    const after = await getSignal(key.key, llm.signal_id);
    expect(after.rca_state).toBe('ready');
    expect(Date.parse(after.rca.generated_at)).toBeGreaterThanOrEqual(Date.parse(before.rca.generated_at));
  });

  it('give no hint below the minimum support', async () => {
    const { key, project } = await projectWithKey(h());
    const t0 = Date.now() - 600_000;
    const spans = [...trace(t0, 'gpt-bad', 'staging', true), ...trace(t0 + 1000, 'gpt-bad', 'staging', true)];
    for (let i = 0; i < 20; i++) spans.push(...trace(t0 + i * 1000 + 3, 'gpt-4o', 'production', false));
    await ingestSpans(h(), key.key, spans);
    await tick(h(), project.id, { rca: false });
    const signal = await signalTitled(h(), key.key, 'RateLimitError in llm.chat');
    expect((await runRca(h().ctx, signal.signal_id)).state).toBe('ready');
    expect((await getSignal(key.key, signal.signal_id)).rca.hints).toEqual([]);
  });

  it('rank by lift with a finite lift for values no other trace has, and nothing without a baseline', () => {
    const rows = [
      { attribute: '__traces', value: '', s: 10, b: 9 },
      { attribute: 'model_name', value: 'x', s: 10, b: 0 },
      { attribute: 'environment', value: 'y', s: 5, b: 9 },
      { attribute: 'user_id', value: 'u', s: 2, b: 0 },
    ];
    expect(rankHints(rows)).toEqual([
      { attribute: 'model_name', value: 'x', signal_share: 1, baseline_share: 0, lift: 10 },
    ]);
    expect(
      rankHints([
        { attribute: '__traces', value: '', s: 10, b: 0 },
        { attribute: 'model_name', value: 'x', s: 10, b: 0 },
      ]),
    ).toEqual([]);
  });
});
