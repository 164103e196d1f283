import createClient from 'openapi-fetch';
import type { paths } from '../../../web/src/api-schema.gen.js';

/**
 * A few calls a user of a generated client makes (openapi-typescript types + openapi-fetch), written as
 * a user would. test/http/generated-client.test.ts compiles this file with tsc against types freshly
 * generated from the served document (so a misnamed path, parameter or field fails to compile, and
 * each `@ts-expect-error` must still be an error), then runs `ingestAndRead` against a live server.
 */

export type Client = ReturnType<typeof createClient<paths>>;

export function client(baseUrl: string, token: string): Client {
  return createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${token}` } });
}

export type ReadBack = {
  accepted: number;
  spanStatus: 'ok' | 'error' | 'unset';
  totalCost: number;
  metadata: Record<string, string>;
  listed: string[];
  missingStatus: number;
};

export async function ingestAndRead(api: Client, traceId: string): Promise<ReadBack> {
  const start = new Date(Date.now() - 60_000).toISOString();
  const ingested = await api.POST('/api/v1/public/traces', {
    body: {
      spans: [
        {
          trace_id: traceId,
          span_id: `${traceId}-root`,
          name: 'generated client',
          kind: 'llm',
          start_time: start,
          end_time: new Date(Date.now() - 59_000).toISOString(),
          status: 'error',
          cost: 0.25,
          metadata: { via: 'openapi-fetch' },
        },
      ],
    },
  });
  if (!ingested.data) throw new Error(`ingest failed: ${JSON.stringify(ingested.error)}`);

  const detail = await api.GET('/api/v1/public/traces/{trace_id}', { params: { path: { trace_id: traceId } } });
  if (!detail.data) throw new Error(`read failed: ${JSON.stringify(detail.error)}`);
  // Typed answers: an enum, and fields the document says are always present and never null.
  const status: 'ok' | 'error' | 'unset' = detail.data.spans[0]!.status;
  const totalCost: number = detail.data.total_cost;
  const metadata: Record<string, string> = detail.data.metadata_map;

  const list = await api.GET('/api/v1/public/traces', {
    params: { query: { limit: 10 } },
  });
  const listed = (list.data?.data ?? []).map((t) => t.trace_id);

  // A documented error answer is typed too: `{detail: string}`.
  const missing = await api.GET('/api/v1/public/traces/{trace_id}', {
    params: { path: { trace_id: `${traceId}-missing` } },
  });
  const detailText = missing.error?.detail;
  void detailText;

  return {
    accepted: ingested.data.accepted,
    spanStatus: status,
    totalCost,
    metadata,
    listed,
    missingStatus: missing.response.status,
  };
}

/** Calls that must not compile: the types are the document's, not `any`. */
export async function refused(api: Client): Promise<void> {
  // @ts-expect-error no such path
  await api.GET('/api/v1/public/trace');
  // @ts-expect-error the path parameter is required
  await api.GET('/api/v1/public/traces/{trace_id}', { params: { path: {} } });
  const span = { trace_id: 't', span_id: 's', name: 'n', start_time: '2026-01-01T00:00:00Z' };
  // @ts-expect-error a span's status is one of ok, error, unset
  await api.POST('/api/v1/public/traces', { body: { spans: [{ ...span, status: 'failed' }] } });
  const path = { signal_id: 's' };
  // @ts-expect-error a signal's new status is resolved or open
  await api.PATCH('/api/v1/public/signals/{signal_id}/status', { params: { path }, body: { status: 'closed' } });
  const detail = await api.GET('/api/v1/public/traces/{trace_id}', { params: { path: { trace_id: 't' } } });
  // @ts-expect-error total_cost is a number, never null
  const nullable: null = detail.data!.total_cost;
  void nullable;
}
