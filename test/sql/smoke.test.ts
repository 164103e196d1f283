import { describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';

const h = useHarness();

describe('public SQL: first contact', () => {
  it('answers a query on the caller project and refuses system tables', async () => {
    const { key } = await projectWithKey(h());
    const other = await projectWithKey(h(), 'other');
    const t = new Date().toISOString();
    await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/traces`,
      token: key.key,
      payload: { spans: [{ trace_id: 'A-1', span_id: 's', name: 'n', start_time: t, cost: 1.5, input_tokens: 3 }] },
    });
    await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/traces`,
      token: other.key.key,
      payload: { spans: [{ trace_id: 'B-1', span_id: 's', name: 'n', start_time: t }] },
    });
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/sql`,
      token: key.key,
      payload: {
        query:
          'SELECT trace_id, total_cost, total_input_tokens, quantile(0.5)(total_cost) AS q FROM traces GROUP BY trace_id, total_cost, total_input_tokens',
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      columns: [
        { name: 'trace_id', type: 'String' },
        { name: 'total_cost', type: 'Float64' },
        { name: 'total_input_tokens', type: 'UInt64' },
        { name: 'q' },
      ],
      rows: [['A-1', 1.5, 3, 1.5]],
      row_count: 1,
      truncated: false,
    });
    const refused = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/sql`,
      token: key.key,
      payload: { query: 'SELECT * FROM system.tables' },
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().detail).toMatch(/system\.tables/);
    const bad = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/sql`,
      token: key.key,
      payload: { query: 'SELECT nosuch FROM traces' },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().detail).not.toMatch(/p_|default\.|__sl|CAST/);
    const schema = await call(h().api, { method: 'GET', url: `${PUBLIC}/sql/schema`, token: key.key });
    expect(schema.json().tables.map((x: { name: string }) => x.name)).toEqual([
      'traces',
      'spans',
      'findings',
      'evaluation_results',
      'scores',
    ]);
  });
});
