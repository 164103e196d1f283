import { ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';

/**
 * ClickHouse failing (the store's client pointed at a server address that refuses connections):
 * ingest answers 503 with Retry-After, never a 200 for spans it did not store, and the OTLP route
 * answers 503, which OTLP exporters retry; once the store is back, ingest stores again.
 */

const h = useHarness();

describe('ClickHouse failing', () => {
  it(
    'ingest and OTLP answer 503 with Retry-After and store nothing; service resumes when the store does',
    { timeout: 60_000 },
    async () => {
      const { key, project } = await projectWithKey(h(), 'ch-down');
      const store = h().ctx.ch;
      const healthy = store.client;
      const refusing = createClient({
        url: 'http://127.0.0.1:9',
        request_timeout: 2_000,
        log: { level: ClickHouseLogLevel.OFF },
      });
      const span = (id: string) => ({
        trace_id: `t-${id}`,
        span_id: id,
        name: 'op',
        start_time: new Date().toISOString(),
      });
      (store as { client: typeof healthy }).client = refusing;
      try {
        const native = await call(h().api, {
          method: 'POST',
          url: `${PUBLIC}/traces`,
          token: key.key,
          payload: { spans: [span('lost-1')] },
        });
        expect(native.statusCode, native.body).toBe(503);
        expect(native.headers['retry-after']).toBeDefined();
        expect(Object.keys(native.json())).toEqual(['detail']);
        const otlp = await call(h().api, {
          method: 'POST',
          url: `${PUBLIC}/otel/v1/traces`,
          token: key.key,
          payload: {
            resourceSpans: [
              {
                scopeSpans: [
                  {
                    spans: [
                      {
                        traceId: '0af7651916cd43dd8448eb211c80319c',
                        spanId: 'b7ad6b7169203331',
                        name: 'op',
                        startTimeUnixNano: String(Date.now() * 1e6),
                        endTimeUnixNano: String(Date.now() * 1e6),
                      },
                    ],
                  },
                ],
              },
            ],
          },
        });
        expect(otlp.statusCode, otlp.body).toBe(503);
        expect(otlp.headers['retry-after']).toBeDefined();
      } finally {
        (store as { client: typeof healthy }).client = healthy;
        await refusing.close();
      }
      const after = await call(h().api, {
        method: 'POST',
        url: `${PUBLIC}/traces`,
        token: key.key,
        payload: { spans: [span('kept-1')] },
      });
      expect(after.statusCode, after.body).toBe(200);
      const rows = await (
        await healthy.query({
          query: `SELECT span_id FROM ${store.database}.spans WHERE project_id = {p:String}`,
          query_params: { p: project.id },
          format: 'JSONEachRow',
        })
      ).json<{ span_id: string }>();
      expect(rows.map((r) => r.span_id)).toEqual(['kept-1']);
    },
  );
});
