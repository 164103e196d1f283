import crypto from 'node:crypto';
import { expect } from 'vitest';
import { call, PUBLIC, type Harness } from '../support/harness.js';
import { iso } from '../support/ingest.js';
import { runDetectionTick, type TickReport } from '../../src/signals/detection.js';

/** Helpers for the signal tests: spans that fail in chosen ways, a detection tick of one project, reads. */

export const hex = (bytes = 8) => crypto.randomBytes(bytes).toString('hex');

export type SpanSpec = {
  trace_id?: string;
  span_id?: string;
  name?: string;
  kind?: string;
  start?: number;
  durationMs?: number;
  status?: 'ok' | 'error' | 'unset';
  error_type?: string;
  error_message?: string;
  model_name?: string;
  environment?: string;
  user_id?: string;
  cost?: number;
  metadata?: Record<string, string>;
  parent_span_id?: string | null;
  evaluation_run_id?: string;
};

/** A span as the ingest route takes it (a root span unless it names a parent). */
export function span(s: SpanSpec = {}): Record<string, unknown> {
  const start = s.start ?? Date.now() - 60_000;
  return {
    trace_id: s.trace_id ?? `t-${hex()}`,
    span_id: s.span_id ?? `s-${hex()}`,
    parent_span_id: s.parent_span_id ?? null,
    name: s.name ?? 'agent.run',
    kind: s.kind ?? 'agent',
    start_time: iso(start),
    end_time: iso(start + (s.durationMs ?? 100)),
    status: s.status ?? 'ok',
    ...(s.error_type !== undefined ? { error_type: s.error_type } : {}),
    ...(s.error_message !== undefined ? { error_message: s.error_message } : {}),
    ...(s.model_name !== undefined ? { model_name: s.model_name } : {}),
    ...(s.environment !== undefined ? { environment: s.environment } : {}),
    ...(s.user_id !== undefined ? { user_id: s.user_id } : {}),
    ...(s.cost !== undefined ? { cost: s.cost } : {}),
    ...(s.metadata !== undefined ? { metadata: s.metadata } : {}),
    ...(s.evaluation_run_id !== undefined ? { evaluation_run_id: s.evaluation_run_id } : {}),
  };
}

/** A trace of a root span and one child that fails with `errorType` in `name`. */
export function failingTrace(
  errorType: string,
  name: string,
  start = Date.now() - 60_000,
  extra: SpanSpec = {},
): Record<string, unknown>[] {
  const trace = `t-${hex()}`;
  const root = `r-${hex()}`;
  return [
    span({
      trace_id: trace,
      span_id: root,
      start,
      durationMs: 500,
      ...extra,
      name: 'agent.run',
      kind: 'agent',
      status: 'ok',
    }),
    span({
      trace_id: trace,
      span_id: `c-${hex()}`,
      parent_span_id: root,
      start: start + 10,
      name,
      kind: 'tool',
      status: 'error',
      error_type: errorType,
      error_message: `${errorType} after 30 s`,
      ...extra,
    }),
  ];
}

/** One detection tick of one project (the test Postgres is shared with other files' projects). */
export async function tick(h: Harness, projectId: string, options: { rca?: boolean } = {}): Promise<TickReport> {
  return runDetectionTick(h.ctx, { projectIds: [projectId], ...options });
}

export async function listSignals(h: Harness, token: string, query: Record<string, string> = {}) {
  const res = await call(h.api, { method: 'GET', url: `${PUBLIC}/signals`, token, query });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { data: Record<string, unknown>[]; meta: { page: number; limit: number; total: number } };
}

export async function listFindings(h: Harness, token: string, query: Record<string, string> = {}) {
  const res = await call(h.api, { method: 'GET', url: `${PUBLIC}/findings`, token, query });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { data: Record<string, unknown>[]; meta: { page: number; limit: number; total: number } };
}

export function patchStatus(h: Harness, token: string, signalId: string, payload: Record<string, unknown>) {
  return call(h.api, { method: 'PATCH', url: `${PUBLIC}/signals/${signalId}/status`, token, payload });
}

/** The signal titled `title` in the project's list (any status), or a failure naming what is there. */
export async function signalTitled(h: Harness, key: string, title: string) {
  const all = await listSignals(h, key, { limit: '200' });
  const found = all.data.find((s) => s.title === title);
  expect(found, `no signal '${title}' among ${JSON.stringify(all.data.map((s) => s.title))}`).toBeDefined();
  return found as Record<string, unknown> & { signal_id: string; hit_count: number; status: string };
}
