import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { failingTrace, listFindings, listSignals, signalTitled, span, tick } from './support.js';
import { ingestSpans } from '../support/ingest.js';

/** Each detector type producing the right findings and signals on generated data. */

const h = useHarness({ QUEUE_PREFIX: `signals-detection-${crypto.randomBytes(4).toString('hex')}` });

describe('the Errors detector', () => {
  it('turns error spans into findings grouped by error type and span name, titled what and where', async () => {
    const { key } = await projectWithKey(h());
    const now = Date.now() - 60_000;
    await ingestSpans(h(), key.key, [
      ...failingTrace('TimeoutError', 'tool.search', now),
      ...failingTrace('TimeoutError', 'tool.search', now + 1000),
      ...failingTrace('TimeoutError', 'tool.fetch', now + 2000),
      ...failingTrace('RateLimitError', 'tool.search', now + 3000),
      span({ name: 'healthy', status: 'ok' }),
    ]);
    const project = (await call(h().api, { method: 'GET', url: `${PUBLIC}/whoami`, token: key.key })).json().project_id;
    const report = await tick(h(), project);
    expect(report.passes.map((p) => p.findings)).toEqual([4]);

    const signals = await listSignals(h(), key.key);
    expect(signals.meta).toEqual({ page: 0, limit: 50, total: 3 });
    const search = await signalTitled(h(), key.key, 'TimeoutError in tool.search');
    expect(search.hit_count).toBe(2);
    expect((await signalTitled(h(), key.key, 'TimeoutError in tool.fetch')).hit_count).toBe(1);
    expect((await signalTitled(h(), key.key, 'RateLimitError in tool.search')).hit_count).toBe(1);
    expect(Object.keys(search).sort()).toEqual(
      [
        'created_at',
        'detector_id',
        'detector_name',
        'first_seen_at',
        'hit_count',
        'last_seen_at',
        'reopen_count',
        'rca_state',
        'signal_id',
        'status',
        'title',
      ].sort(),
    );
    expect(search).toMatchObject({ status: 'open', detector_name: 'Errors', reopen_count: 0 });

    const findings = await listFindings(h(), key.key, { signal_id: search.signal_id });
    expect(findings.meta.total).toBe(2);
    for (const f of findings.data) {
      expect(Object.keys(f).sort()).toEqual([
        'detector_id',
        'finding_id',
        'found_at',
        'signal_id',
        'span_id',
        'summary',
        'trace_id',
        'trace_start_time',
      ]);
      expect(f).toMatchObject({
        signal_id: search.signal_id,
        detector_id: search.detector_id,
        summary: 'TimeoutError: TimeoutError after 30 s',
      });
    }
    // A second tick finds nothing new.
    const again = await tick(h(), project);
    expect(again.passes.reduce((n, p) => n + p.findings, 0)).toBe(0);
    expect((await listFindings(h(), key.key)).meta.total).toBe(4);
  });
});

describe('detector filters', () => {
  it('narrow the Errors-type detector with span predicates; evaluation spans are never findings', async () => {
    const { owner, project, key } = await projectWithKey(h());
    const created = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/detectors`,
      token: owner.token,
      payload: {
        project_id: project.id,
        name: 'Production errors',
        type: 'error',
        config: { filters: [{ field: 'environment', op: '=', value: 'production' }] },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    await ingestSpans(h(), key.key, [
      ...failingTrace('Boom', 'tool.a', Date.now() - 60_000, { environment: 'production' }),
      ...failingTrace('Boom', 'tool.a', Date.now() - 50_000, { environment: 'staging' }),
      ...failingTrace('Boom', 'tool.a', Date.now() - 40_000, { environment: 'production', evaluation_run_id: 'run-1' }),
    ]);
    await tick(h(), project.id);
    const mine = await listSignals(h(), key.key, { detector_id: created.json().id });
    expect(mine.data.map((s) => [s.title, s.hit_count])).toEqual([['Boom in tool.a', 1]]);
    // The default detector sees both environments, still not the evaluation.
    const errors = await listSignals(h(), key.key);
    expect(errors.data.find((s) => s.detector_name === 'Errors')).toMatchObject({
      title: 'Boom in tool.a',
      hit_count: 2,
    });
  });
});

describe('threshold detectors', () => {
  it('find each span whose measure crosses the line, grouped by span name', async () => {
    const { owner, project, key } = await projectWithKey(h());
    const created = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/detectors`,
      token: owner.token,
      payload: {
        project_id: project.id,
        name: 'Slow LLM calls',
        type: 'threshold',
        config: { measure: 'latency', operator: '>', value: 2000, filters: [{ field: 'kind', value: 'llm' }] },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const t0 = Date.now() - 120_000;
    await ingestSpans(h(), key.key, [
      span({ name: 'llm.chat', kind: 'llm', start: t0, durationMs: 2500 }),
      span({ name: 'llm.chat', kind: 'llm', start: t0 + 1, durationMs: 3100 }),
      span({ name: 'llm.chat', kind: 'llm', start: t0 + 2, durationMs: 2000 }), // not over the line
      span({ name: 'llm.summarise', kind: 'llm', start: t0 + 3, durationMs: 9000 }),
      span({ name: 'tool.search', kind: 'tool', start: t0 + 4, durationMs: 9000 }), // not an llm span
    ]);
    await tick(h(), project.id);
    const found = await listSignals(h(), key.key, { detector_id: created.json().id });
    expect(found.data.map((s) => [s.title, s.hit_count]).sort()).toEqual([
      ['latency > 2000 in llm.chat', 2],
      ['latency > 2000 in llm.summarise', 1],
    ]);
    const findings = await listFindings(h(), key.key, { detector_id: created.json().id });
    expect(findings.data.map((f) => f.summary).sort()).toEqual([
      'latency 2500 > 2000',
      'latency 3100 > 2000',
      'latency 9000 > 2000',
    ]);
  });

  it('compare cost and tokens too, with any operator', async () => {
    const { owner, project, key } = await projectWithKey(h());
    const created = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/detectors`,
      token: owner.token,
      payload: {
        project_id: project.id,
        name: 'Costly',
        type: 'threshold',
        config: { measure: 'cost', operator: '>=', value: 0.5 },
      },
    });
    await ingestSpans(h(), key.key, [
      span({ name: 'llm.a', cost: 0.5 }),
      span({ name: 'llm.a', cost: 0.49 }),
      span({ name: 'llm.b', cost: 2 }),
    ]);
    await tick(h(), project.id);
    const found = await listSignals(h(), key.key, { detector_id: created.json().id });
    expect(found.data.map((s) => [s.title, s.hit_count]).sort()).toEqual([
      ['cost >= 0.5 in llm.a', 1],
      ['cost >= 0.5 in llm.b', 1],
    ]);
  });
});

describe('sql detectors', () => {
  it('run their guarded query as the project on their interval; each new row is a finding, grouped by group_key', async () => {
    const { owner, project, key } = await projectWithKey(h());
    const other = await projectWithKey(h());
    const query = "SELECT trace_id, span_id, model_name AS group_key FROM spans WHERE model_name != '' AND cost > 1";
    const created = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/detectors`,
      token: owner.token,
      payload: { project_id: project.id, name: 'Pricey models', type: 'sql', config: { query, interval_minutes: 1 } },
    });
    expect(created.statusCode, created.body).toBe(201);
    await ingestSpans(h(), key.key, [
      span({ model_name: 'gpt-4o', cost: 2 }),
      span({ model_name: 'gpt-4o', cost: 3 }),
      span({ model_name: 'claude', cost: 1.5 }),
      span({ model_name: 'mini', cost: 0.1 }),
    ]);
    // Another project's rows are out of the query's reach.
    await ingestSpans(h(), other.key.key, [span({ model_name: 'gpt-4o', cost: 9 })]);
    const first = await tick(h(), project.id);
    expect(first.passes.find((p) => p.type === 'sql')).toMatchObject({ findings: 3, committed: true });
    const found = await listSignals(h(), key.key, { detector_id: created.json().id });
    expect(found.data.map((s) => [s.title, s.hit_count]).sort()).toEqual([
      ['Pricey models: claude', 1],
      ['Pricey models: gpt-4o', 2],
    ]);
    // Not due again before its interval: the next tick leaves it alone.
    await ingestSpans(h(), key.key, [span({ model_name: 'claude', cost: 5 })]);
    const second = await tick(h(), project.id);
    expect(second.passes.some((p) => p.type === 'sql')).toBe(false);
    // Due again (its last run moved back a minute): only the new row is a finding.
    await h().ctx.pg.pool.query("UPDATE detectors SET last_run_at = last_run_at - interval '1 minute' WHERE id = $1", [
      created.json().id,
    ]);
    const third = await tick(h(), project.id);
    expect(third.passes.find((p) => p.type === 'sql')).toMatchObject({ findings: 1 });
    expect((await signalTitled(h(), key.key, 'Pricey models: claude')).hit_count).toBe(2);
    expect((await listFindings(h(), key.key, { detector_id: created.json().id })).meta.total).toBe(4);
  });

  it('without span_id and group_key: one finding per trace, one signal named after the detector', async () => {
    const { owner, project, key } = await projectWithKey(h());
    const created = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/detectors`,
      token: owner.token,
      payload: {
        project_id: project.id,
        name: 'Long traces',
        type: 'sql',
        config: { query: 'SELECT trace_id FROM traces WHERE duration_ms > 1000' },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    await ingestSpans(h(), key.key, [span({ durationMs: 5000 }), span({ durationMs: 10 }), span({ durationMs: 2000 })]);
    await tick(h(), project.id);
    const signal = await signalTitled(h(), key.key, 'Long traces');
    expect(signal.hit_count).toBe(2);
    const findings = await listFindings(h(), key.key, { signal_id: signal.signal_id });
    expect(findings.data.map((f) => f.span_id)).toEqual([null, null]);
  });
});

describe('switching a detector off and on', () => {
  it('leaves alone what arrived while it was off, and goes on with what arrives after', async () => {
    const { owner, project, key } = await projectWithKey(h());
    const errors = (await call(h().api, { method: 'GET', url: `${PUBLIC}/detectors`, token: key.key })).json().data[0];
    const patch = (enabled: boolean) =>
      call(h().api, {
        method: 'PATCH',
        url: `${PUBLIC}/detectors/${errors.id}`,
        token: owner.token,
        payload: { project_id: project.id, enabled },
      });
    expect((await patch(false)).json().enabled).toBe(false);
    await ingestSpans(h(), key.key, failingTrace('WhileOff', 'tool.a'));
    expect((await tick(h(), project.id)).passes).toEqual([]);
    expect((await patch(true)).json().enabled).toBe(true);
    await ingestSpans(h(), key.key, failingTrace('AfterOn', 'tool.a'));
    await tick(h(), project.id);
    expect((await listSignals(h(), key.key)).data.map((s) => s.title)).toEqual(['AfterOn in tool.a']);
  });
});
