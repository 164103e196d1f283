import { beforeAll, describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { CONTRACT } from '../../src/sql/contract.js';
import { iso } from '../support/ingest.js';

const h = useHarness();
let key: string;

/** GET /sql/schema and the guard read one contract: every advertised column is queryable, nothing else is. */
beforeAll(async () => {
  const setup = await projectWithKey(h());
  key = setup.key.key;
  const t = Date.now() - 60_000;
  const res = await call(h().api, {
    method: 'POST',
    url: `${PUBLIC}/traces`,
    token: key,
    payload: {
      spans: [
        {
          trace_id: 'c-1',
          span_id: 'root',
          name: 'agent',
          start_time: iso(t),
          end_time: iso(t + 900),
          metadata: { tier: 'pro' },
          user_id: 'u',
          session_id: 's',
          input: 'q',
          output: 'a',
        },
        {
          trace_id: 'c-1',
          span_id: 'llm',
          parent_span_id: 'root',
          name: 'chat',
          kind: 'llm',
          model_name: 'gpt-4o',
          start_time: iso(t + 10),
          end_time: iso(t + 500),
          cost: 0.25,
          input_tokens: 7,
          output_tokens: 3,
        },
      ],
    },
  });
  expect(res.statusCode).toBe(200);
});

const sql = (query: string) => call(h().api, { method: 'POST', url: `${PUBLIC}/sql`, token: key, payload: { query } });

describe('the SQL contract', () => {
  it('is what GET /sql/schema prints', async () => {
    const res = await call(h().api, { method: 'GET', url: `${PUBLIC}/sql/schema`, token: key });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      tables: CONTRACT.map((t) => ({ name: t.name, columns: t.columns.map((c) => ({ name: c.name, type: c.type })) })),
    });
  });

  for (const table of CONTRACT) {
    it(`${table.name}: SELECT * answers exactly the advertised columns and types`, async () => {
      const res = await sql(`SELECT * FROM ${table.name} LIMIT 1`);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().columns).toEqual(table.columns.map((c) => ({ name: c.name, type: c.type })));
    });

    it(`${table.name}: every advertised column can be selected, filtered and grouped on`, async () => {
      for (const column of table.columns) {
        const res = await sql(
          `SELECT ${column.name}, count() AS n FROM ${table.name} GROUP BY ${column.name} ORDER BY n DESC LIMIT 5`,
        );
        expect(res.statusCode, `${table.name}.${column.name}: ${res.body}`).toBe(200);
        expect(res.json().columns[0]).toEqual({ name: column.name, type: column.type });
      }
    });

    it(`${table.name}: columns of the physical table outside the contract are unknown`, async () => {
      const advertised = new Set(table.columns.map((c) => c.name));
      const hidden = [
        'project_id',
        'ttl_days',
        'trace_start_hour',
        'ingested_at',
        'root',
        'metadata_pairs',
        'revision',
        `p_${table.columns[0]!.name}`,
      ].filter((c) => !advertised.has(c));
      for (const column of hidden) {
        const res = await sql(`SELECT ${column} FROM ${table.name}`);
        expect(res.statusCode, `${table.name}.${column}`).toBe(400);
        expect(res.json().detail).not.toMatch(/default\.|sightline\.|__sl|CAST\(/);
      }
    });
  }

  it('values come out as the trace list computes them', async () => {
    const res = await sql(
      "SELECT trace_id, name, span_count, total_cost, total_input_tokens, duration_ms, metadata['tier'], model_names, user_id, input FROM traces",
    );
    expect(res.json().rows).toEqual([['c-1', 'agent', 2, 0.25, 7, 900, 'pro', ['gpt-4o'], 'u', 'q']]);
    const spans = await sql('SELECT span_id, parent_span_id, kind FROM spans ORDER BY start_time');
    expect(spans.json().rows).toEqual([
      ['root', null, 'custom'],
      ['llm', 'root', 'llm'],
    ]);
  });
});
