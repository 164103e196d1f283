import { beforeAll, describe, expect, it } from 'vitest';
import { call, PUBLIC, projectWithKey, useHarness } from '../support/harness.js';
import { ingestSpans, iso } from '../support/ingest.js';
import { EDGES } from './span-payload-fixtures.js';

/**
 * `spans` keeps a span's input and output in one column `io` split by `io_split` and `io_nulls`
 * (clickhouse/0016, 0017; src/traces/span-payload.ts), `input` and `output` being ALIAS columns. The
 * edges of that encoding (null against empty, multibyte text at the split, one text inside the other)
 * come back exactly through the API (span-payload-migration.test.ts: in a store whose spans were
 * written before the change).
 */

describe('span input and output stored in one column', () => {
  const h = useHarness();
  const t = Date.now() - 60_000;
  const spans = EDGES.map(([input, output], i) => ({
    trace_id: 'payload-edges',
    span_id: `s-${i}`,
    ...(i ? { parent_span_id: 's-0' } : {}),
    name: `edge ${i}`,
    start_time: iso(t + i),
    end_time: iso(t + i + 5),
    ...(input === null ? {} : { input }),
    ...(output === null ? {} : { output }),
  }));
  let key: string;
  beforeAll(async () => {
    ({
      key: { key },
    } = await projectWithKey(h(), 'payload-edges'));
    await ingestSpans(h(), key, spans);
  });

  it('answers each edge exactly through the trace detail', async () => {
    const res = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces/payload-edges`, token: key });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    const got = new Map(
      (res.json().spans as { span_id: string; input: unknown; output: unknown }[]).map((s) => [s.span_id, s]),
    );
    EDGES.forEach(([input, output], i) => {
      expect(got.get(`s-${i}`), `edge ${i}`).toMatchObject({ input, output });
    });
  });

  it('answers each edge exactly through public SQL, where null and empty differ', async () => {
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/sql`,
      token: key,
      payload: {
        query:
          "SELECT span_id, input, output, input IS NULL, output IS NULL, length(input), length(output) FROM spans WHERE trace_id = 'payload-edges' ORDER BY start_time",
      },
    });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    const rows = res.json().rows as unknown[][];
    expect(rows).toHaveLength(EDGES.length);
    EDGES.forEach(([input, output], i) => {
      expect(rows[i], `edge ${i}`).toEqual([
        `s-${i}`,
        input,
        output,
        input === null ? 1 : 0,
        output === null ? 1 : 0,
        input === null ? null : Buffer.byteLength(input),
        output === null ? null : Buffer.byteLength(output),
      ]);
    });
  });
});
