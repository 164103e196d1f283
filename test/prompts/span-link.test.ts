import { beforeAll, describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { ingestSpans, iso } from '../support/ingest.js';
import { attributes, mapOne } from '../traces/conventions/support.js';

/**
 * Spans linked to prompt versions (docs/prompts.md, "Linking spans"): `prompt_name` and
 * `prompt_version` from native ingest and from the producers' conventions over OTLP, answered by the
 * trace detail, filtering the trace list and widgets, grouping widgets, and selectable in public SQL.
 */

const h = useHarness();
const MIN = 60_000;
const E = Math.floor(Date.now() / MIN) * MIN - 5 * MIN;
let key = '';

/**
 * | trace  | span     | prompt      | version | cost | duration |
 * | t-1    | a        | support/faq | 1       | 1    | 100      |
 * | t-2    | b        | support/faq | 2       | 2    | 200      |
 * | t-3    | c        | support/faq | 2       | 4    | 400      |
 * | t-3    | c-child  | –           | –       | 8    | 100      |
 * | t-otel | (OTLP)   | greeting    | 3       | 0    | 1000     |
 */
function span(trace: string, id: string, at: number, cost: number, ms: number, prompt?: [string, number]) {
  return {
    trace_id: trace,
    span_id: id,
    parent_span_id: id === 'c-child' ? 'c' : null,
    name: 'llm-call',
    kind: 'llm',
    start_time: iso(at),
    end_time: iso(at + ms),
    cost,
    ...(prompt ? { prompt_name: prompt[0], prompt_version: prompt[1] } : {}),
  };
}

beforeAll(async () => {
  key = (await projectWithKey(h())).key.key;
  await ingestSpans(h(), key, [
    span('t-1', 'a', E - 9 * MIN, 1, 100, ['support/faq', 1]),
    span('t-2', 'b', E - 8 * MIN, 2, 200, ['support/faq', 2]),
    span('t-3', 'c', E - 7 * MIN, 4, 400, ['support/faq', 2]),
    span('t-3', 'c-child', E - 7 * MIN + 10, 8, 100),
  ]);
  const start = BigInt(E - 6 * MIN) * 1_000_000n;
  const res = await call(h().api, {
    method: 'POST',
    url: `${PUBLIC}/otel/v1/traces`,
    token: key,
    headers: { 'content-type': 'application/json' },
    payload: {
      resourceSpans: [
        {
          resource: { attributes: [] },
          scopeSpans: [
            {
              scope: { name: 'langfuse-sdk' },
              spans: [
                {
                  traceId: '0af7651916cd43dd8448eb211c80319c',
                  spanId: 'b7ad6b7169203331',
                  name: 'generation',
                  startTimeUnixNano: String(start),
                  endTimeUnixNano: String(start + 1_000_000_000n),
                  attributes: attributes({
                    'langfuse.observation.type': 'generation',
                    'langfuse.observation.prompt.name': 'greeting',
                    'langfuse.observation.prompt.version': 3,
                  }),
                },
              ],
            },
          ],
        },
      ],
    },
  });
  expect(res.statusCode, res.body).toBe(200);
});

const get = (path: string, query: Record<string, string> = {}) =>
  call(h().api, { method: 'GET', url: `${PUBLIC}${path}`, token: key, query });

async function listed(filters: unknown[]) {
  const res = await get('/traces', { filters: JSON.stringify(filters), start_after: iso(E - 10 * MIN) });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json().data as { trace_id: string }[]).map((t) => t.trace_id).sort();
}

async function widget(spec: Record<string, unknown>, type = 'table') {
  const res = await call(h().api, {
    method: 'POST',
    url: `${PUBLIC}/widgets/query`,
    token: key,
    payload: { type, spec: { view: 'SPANS', ...spec }, start_time: iso(E - 10 * MIN), end_time: iso(E) },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().rows as unknown[][];
}

describe('spans linked to prompt versions', () => {
  it('are answered by the trace detail, from native fields and from Langfuse attributes over OTLP', async () => {
    const t3 = (await get('/traces/t-3')).json();
    const byId = new Map((t3.spans as { span_id: string }[]).map((s) => [s.span_id, s]));
    expect(byId.get('c')).toMatchObject({ prompt_name: 'support/faq', prompt_version: 2 });
    expect(byId.get('c-child')).toMatchObject({ prompt_name: null, prompt_version: null });
    const otel = (await get('/traces/0af7651916cd43dd8448eb211c80319c')).json();
    expect(otel.spans[0]).toMatchObject({ prompt_name: 'greeting', prompt_version: 3, kind: 'llm' });
    // Consumed by the mapping: not repeated in metadata.
    expect(Object.keys(otel.spans[0].metadata)).not.toContain('langfuse.observation.prompt.name');
  });

  it('filter the trace list: prompt_name in, prompt_version eq', async () => {
    expect(await listed([{ field: 'prompt_name', op: 'in', value: ['support/faq'] }])).toEqual(['t-1', 't-2', 't-3']);
    expect(
      await listed([
        { field: 'prompt_name', op: 'in', value: ['support/faq'] },
        { field: 'prompt_version', op: 'eq', value: 2 },
      ]),
    ).toEqual(['t-2', 't-3']);
    expect(await listed([{ field: 'prompt_version', op: 'eq', value: 3 }])).toEqual([
      '0af7651916cd43dd8448eb211c80319c',
    ]);
    for (const bad of [
      [{ field: 'prompt_version', op: 'gt', value: 1 }],
      [{ field: 'prompt_version', op: 'eq', value: 0 }],
      [{ field: 'prompt_name', op: 'eq', value: 'x' }],
    ]) {
      const res = await get('/traces', { filters: JSON.stringify(bad) });
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
    }
  });

  it('group and filter widgets, so cost and latency compare by version', async () => {
    const byVersion = await widget({
      measure: 'cost',
      aggregation: 'sum',
      group_by: ['prompt_name', 'prompt_version'],
    });
    expect(byVersion.sort((a, b) => String(a).localeCompare(String(b)))).toEqual([
      ['', '', 8],
      ['greeting', '3', 0],
      ['support/faq', '1', 1],
      ['support/faq', '2', 6],
    ]);
    const latency = await widget({
      measure: 'latency',
      aggregation: 'max',
      group_by: ['prompt_version'],
      filters: [{ field: 'prompt_name', op: 'in', value: ['support/faq'] }],
    });
    expect(latency.sort()).toEqual([
      ['1', 100],
      ['2', 400],
    ]);
    const one = await widget(
      { measure: 'count', aggregation: 'count', filters: [{ field: 'prompt_version', op: 'eq', value: 2 }] },
      'stat',
    );
    expect(one[0]![0]).toBe(2);
  });

  it('compare by version over a window: traces, latency p50/p95, cost, tokens, error rate, scores', async () => {
    const created = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/prompts`,
      token: key,
      payload: { name: 'support/faq', type: 'text', prompt: 'Q: {{q}}' },
    });
    expect(created.statusCode, created.body).toBe(201);
    // Scores of the versions' traces: numeric and boolean ones are averaged by name; a categorical one is
    // not; a deleted one is gone; a span-level one counts for its trace.
    const scored = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/scores`,
      token: key,
      payload: {
        scores: [
          { trace_id: 't-1', name: 'helpfulness', value: 1 },
          { trace_id: 't-2', name: 'helpfulness', value: 0.5 },
          { trace_id: 't-3', span_id: 'c', name: 'helpfulness', value: 0 },
          { trace_id: 't-3', name: 'correct', data_type: 'boolean', value: 1 },
          { trace_id: 't-3', name: 'tone', data_type: 'categorical', string_value: 'warm' },
          { score_id: 'gone', trace_id: 't-2', name: 'helpfulness', value: 100 },
        ],
      },
    });
    expect(scored.json().accepted, scored.body).toBe(6);
    const deleted = await call(h().api, { method: 'DELETE', url: `${PUBLIC}/scores/gone`, token: key });
    expect(deleted.statusCode).toBe(204);
    const res = await get(`/prompts/${encodeURIComponent('support/faq')}/metrics`, {
      start_time: iso(E - 10 * MIN),
      end_time: iso(E),
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      name: 'support/faq',
      start_time: iso(E - 10 * MIN),
      end_time: iso(E),
      versions: [
        {
          version: 2,
          traces: 2,
          spans: 2,
          latency_p50_ms: 300,
          latency_p95_ms: 390,
          cost: 6,
          input_tokens: 0,
          output_tokens: 0,
          total_tokens: 0,
          error_rate: 0,
          scores: [
            { name: 'correct', avg: 1, count: 1 },
            { name: 'helpfulness', avg: 0.25, count: 2 },
          ],
        },
        {
          version: 1,
          traces: 1,
          spans: 1,
          latency_p50_ms: 100,
          latency_p95_ms: 100,
          cost: 1,
          input_tokens: 0,
          output_tokens: 0,
          total_tokens: 0,
          error_rate: 0,
          scores: [{ name: 'helpfulness', avg: 1, count: 1 }],
        },
      ],
    });
    // A window before every span: no versions.
    const before = await get(`/prompts/${encodeURIComponent('support/faq')}/metrics`, {
      start_time: iso(E - 60 * MIN),
      end_time: iso(E - 30 * MIN),
    });
    expect(before.json().versions).toEqual([]);
    expect((await get('/prompts/greeting/metrics')).statusCode).toBe(404);
    expect((await get('/prompts/x/metrics', { start_time: iso(E), end_time: iso(E - MIN) })).statusCode).toBe(400);
  });

  it('are public SQL columns', async () => {
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/sql`,
      token: key,
      payload: {
        query: "SELECT span_id, prompt_name, prompt_version FROM spans WHERE trace_id = 't-3' ORDER BY span_id",
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().rows).toEqual([
      ['c', 'support/faq', 2],
      ['c-child', '', null],
    ]);
  });
});

describe('the conventions that name a prompt version', () => {
  it('read Langfuse, OpenInference and Traceloop, sightline.* first', () => {
    expect(
      mapOne({ 'langfuse.observation.prompt.name': 'lf', 'langfuse.observation.prompt.version': '4' }),
    ).toMatchObject({ prompt_name: 'lf', prompt_version: 4 });
    expect(mapOne({ 'prompt.id': 'oi', 'llm.prompt_template.version': 'v2' })).toMatchObject({
      prompt_name: 'oi',
      prompt_version: 2,
    });
    expect(mapOne({ 'traceloop.prompt.key': 'tl', 'traceloop.prompt.version': 7 })).toMatchObject({
      prompt_name: 'tl',
      prompt_version: 7,
    });
    expect(
      mapOne({ 'sightline.prompt_name': 's', 'langfuse.observation.prompt.name': 'lf', 'sightline.prompt_version': 1 }),
    ).toMatchObject({ prompt_name: 's', prompt_version: 1 });
    // A version that is not a number stays in the span's attributes.
    const hashed = mapOne({ 'llm.prompt_template.version': '1.2.0' });
    expect(hashed.prompt_version).toBeUndefined();
    expect(hashed.attributes).toMatchObject({ 'llm.prompt_template.version': '1.2.0' });
  });
});
