import { beforeAll, describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { generateSpans } from '../../src/demo/generate-spans.js';
import { queryWidget } from '../../src/widgets/data.js';
import type { WidgetSpec, WidgetType } from '../../src/widgets/spec.js';

const h = useHarness();
let key: string;
let projectId: string;
const HOUR = 3_600_000;
const end = Math.floor(Date.now() / HOUR) * HOUR;
const start = end - 6 * HOUR;

beforeAll(async () => {
  const setup = await projectWithKey(h());
  key = setup.key.key;
  projectId = setup.project.id;
  const spans = generateSpans({ traces: 200, startMs: start, endMs: end - 60_000, seed: 5 });
  for (let i = 0; i < spans.length; i += 500) {
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/traces`,
      token: key,
      payload: { spans: spans.slice(i, i + 500) },
    });
    expect(res.statusCode).toBe(200);
  }
});

const cases: [WidgetType, WidgetSpec][] = [
  ['timeseries', { view: 'SPANS', measure: 'count', aggregation: 'count', interval: '1h' }],
  ['timeseries', { view: 'SPANS', measure: 'cost', aggregation: 'sum', interval: '5m', group_by: ['model_name'] }],
  ['stat', { view: 'SPANS', measure: 'error_rate', aggregation: 'avg' }],
  ['table', { view: 'SPANS', measure: 'total_tokens', aggregation: 'avg', group_by: ['kind', 'status'] }],
  [
    'stat',
    {
      view: 'SPANS',
      measure: 'user_id',
      aggregation: 'uniq',
      filters: [{ field: 'span_kind', op: 'in', value: ['llm'] }],
    },
  ],
  ['bar', { view: 'SPANS', measure: 'latency', aggregation: 'max', group_by: ['environment'] }],
];

describe('widget queries: rollup and raw agree', () => {
  for (const [type, spec] of cases) {
    it(`${type} ${spec.measure}/${spec.aggregation}${spec.group_by ? ` by ${spec.group_by.join(',')}` : ''}`, async () => {
      const window = { startMs: start, endMs: end };
      const rollup = await queryWidget(h().ctx, projectId, type, spec, window);
      const raw = await queryWidget(h().ctx, projectId, type, spec, window, { raw: true });
      expect(rollup.meta.source).toMatch(/^span_rollup/);
      expect(raw.meta.source).toBe('spans');
      expect(rollup.columns).toEqual(raw.columns);
      expect(rollup.rows.length).toBeGreaterThan(0);
      const round = (rows: unknown[][]) =>
        rows.map((r) => r.map((v) => (typeof v === 'number' ? Math.round(v * 1e6) / 1e6 : v)));
      expect(round(rollup.rows)).toEqual(round(raw.rows));
    });
  }

  it('answers POST /widgets/query with filled buckets', async () => {
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/widgets/query`,
      token: key,
      payload: {
        spec: { view: 'SPANS', measure: 'count', aggregation: 'count', interval: '1h' },
        start_time: new Date(start - 2 * HOUR).toISOString(),
        end_time: new Date(end).toISOString(),
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.status).toBe('ok');
    expect(body.columns).toEqual(['time', 'value']);
    expect(body.rows).toHaveLength(8);
    expect(body.rows[0][1]).toBe(0);
    expect(body.rows.slice(2).every((r: [string, number]) => r[1] > 0)).toBe(true);
  });
});
