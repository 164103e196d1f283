import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { projectWithKey, useHarness } from '../support/harness.js';
import { runDetectionTick, runPass, PASS_LIMIT } from '../../src/signals/detection.js';
import { detectorStates, LATENESS_OVERLAP_MS } from '../../src/signals/detector-state.js';
import { failingTrace, hex, listFindings, signalTitled, span, tick } from './support.js';
import { ingestSpans } from '../support/ingest.js';

/**
 * Detection is incremental and exactly-once: a worker stopped at any point of a pass, restarted, two
 * workers on the same detector, a span whose insert became visible late, a backlog larger than a pass,
 * a batch sent twice: every finding is counted once and stored once.
 */

const h = useHarness({ QUEUE_PREFIX: `signals-restart-${crypto.randomBytes(4).toString('hex')}` });

class Stop extends Error {}
const stop = () => {
  throw new Stop('worker stopped');
};

async function errorsDetector(projectId: string) {
  const [state] = (await detectorStates(h().ctx, [projectId])).filter((d) => d.type === 'error');
  return state!;
}

async function findingCount(key: string, signalId: string) {
  return (await listFindings(h(), key, { signal_id: signalId, limit: '200' })).data.length;
}

describe('a worker stopped mid-pass', () => {
  it('after its query, before the commit: the restarted pass finds everything once', async () => {
    const { key, project } = await projectWithKey(h());
    await ingestSpans(h(), key.key, [
      ...failingTrace('Boom', 'tool.a'),
      ...failingTrace('Boom', 'tool.a'),
      ...failingTrace('Boom', 'tool.a'),
    ]);
    await expect(runDetectionTick(h().ctx, { projectIds: [project.id], faults: { afterQuery: stop } })).rejects.toThrow(
      Stop,
    );
    expect((await listFindings(h(), key.key)).meta.total).toBe(0);
    await tick(h(), project.id);
    const signal = await signalTitled(h(), key.key, 'Boom in tool.a');
    expect(signal.hit_count).toBe(3);
    expect(await findingCount(key.key, signal.signal_id)).toBe(3);
  });

  it('after the commit, before ClickHouse has the findings: the next pass stores them, counts nothing twice', async () => {
    const { key, project } = await projectWithKey(h());
    await ingestSpans(h(), key.key, [...failingTrace('Boom', 'tool.b'), ...failingTrace('Boom', 'tool.b')]);
    await expect(
      runDetectionTick(h().ctx, { projectIds: [project.id], faults: { afterCommit: stop } }),
    ).rejects.toThrow(Stop);
    const signal = await signalTitled(h(), key.key, 'Boom in tool.b');
    expect(signal.hit_count).toBe(2);
    expect(await findingCount(key.key, signal.signal_id)).toBe(0);
    // More arrive while it is down.
    await ingestSpans(h(), key.key, failingTrace('Boom', 'tool.b'));
    await tick(h(), project.id);
    await tick(h(), project.id);
    expect((await signalTitled(h(), key.key, 'Boom in tool.b')).hit_count).toBe(3);
    expect(await findingCount(key.key, signal.signal_id)).toBe(3);
    const ids = (await listFindings(h(), key.key, { limit: '200' })).data.map((f) => f.finding_id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('two workers on the same detector', () => {
  it('count its findings once: the second commit finds the pass token moved and drops its pass', async () => {
    const { key, project } = await projectWithKey(h());
    await ingestSpans(h(), key.key, [...failingTrace('Boom', 'tool.c'), ...failingTrace('Boom', 'tool.c')]);
    const state = await errorsDetector(project.id);
    const [a, b] = await Promise.all([runPass(h().ctx, state), runPass(h().ctx, state)]);
    expect([a.committed, b.committed].sort()).toEqual([false, true]);
    await tick(h(), project.id);
    const signal = await signalTitled(h(), key.key, 'Boom in tool.c');
    expect(signal.hit_count).toBe(2);
    expect(await findingCount(key.key, signal.signal_id)).toBe(2);
  });
});

describe('late and repeated spans', () => {
  it('a span whose insert became visible after the pass that covered its ingest time is still found, once', async () => {
    const { key, project } = await projectWithKey(h());
    await ingestSpans(h(), key.key, failingTrace('Boom', 'tool.d'));
    await tick(h(), project.id);
    const watermark = Number((await errorsDetector(project.id)).watermark_ms);
    expect(watermark).toBeGreaterThan(0);
    // An insert stamped before the watermark (it started before that pass read) and visible only now.
    const start = Date.now() - 30_000;
    const trace = `t-${hex()}`;
    await h().ctx.ch.client.insert({
      table: 'spans',
      format: 'JSONEachRow',
      values: [
        {
          project_id: project.id,
          trace_id: trace,
          span_id: 'late',
          parent_span_id: '',
          name: 'tool.d',
          kind: 'tool',
          start_time: start,
          end_time: start + 10,
          status: 'error',
          error_type: 'Boom',
          error_message: 'late',
          metadata: {},
          trace_start_hour: Math.floor(start / 3_600_000) * 3600,
          ttl_days: 30,
          ingested_at: watermark - Math.floor(LATENESS_OVERLAP_MS / 3),
        },
      ],
    });
    await tick(h(), project.id);
    await tick(h(), project.id);
    const signal = await signalTitled(h(), key.key, 'Boom in tool.d');
    expect(signal.hit_count).toBe(2);
    expect((await listFindings(h(), key.key, { signal_id: signal.signal_id })).data.map((f) => f.trace_id)).toContain(
      trace,
    );
  });

  it('a batch sent twice is one set of findings', async () => {
    const { key, project } = await projectWithKey(h());
    const spans = [...failingTrace('Boom', 'tool.e'), ...failingTrace('Boom', 'tool.e')];
    await ingestSpans(h(), key.key, spans);
    await tick(h(), project.id);
    await ingestSpans(h(), key.key, spans);
    await tick(h(), project.id);
    expect((await signalTitled(h(), key.key, 'Boom in tool.e')).hit_count).toBe(2);
    expect((await listFindings(h(), key.key)).meta.total).toBe(2);
  });

  it('a backlog larger than one pass is worked off over passes, nothing missed or repeated', async () => {
    const { key, project } = await projectWithKey(h());
    const total = PASS_LIMIT + 150;
    const t0 = Date.now() - 3_600_000;
    await ingestSpans(
      h(),
      key.key,
      Array.from({ length: total }, (_, i) =>
        span({ name: 'tool.f', status: 'error', error_type: 'Boom', start: t0 + i }),
      ),
    );
    const first = await tick(h(), project.id);
    expect(first.passes[0]!.findings).toBe(PASS_LIMIT);
    const second = await tick(h(), project.id);
    expect(second.passes[0]!.findings).toBe(150);
    await tick(h(), project.id);
    expect((await signalTitled(h(), key.key, 'Boom in tool.f')).hit_count).toBe(total);
    expect((await listFindings(h(), key.key, { limit: '1' })).meta.total).toBe(total);
  });
});
