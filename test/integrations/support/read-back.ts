import type { AddressInfo } from 'node:net';
import { beforeAll, beforeEach, expect } from 'vitest';
import { call, PUBLIC, type Harness } from '../../support/harness.js';
import { waitUntil } from '../../support/wait.js';
import type { AnswerOf } from '../../../src/answer-schemas.js';
import type { SpanAnswer, TraceDetailAnswer } from '../../../src/traces/answers.js';
import { ANSWER, QUESTION, TENANT, TOOL_NAME, USAGE } from './scenario.js';

/**
 * Reading an instrumented scenario's trace back through the public API, as a user of the library
 * would look at it (test/integrations/*.test.ts).
 */

/**
 * Runs a file's one scenario before its tests. A failure (an export the server refused, a trace that
 * never arrived) fails every test with that error, rather than leaving them skipped.
 */
export function runOnce(setup: () => Promise<void>): void {
  let failure: unknown;
  beforeAll(async () => {
    try {
      await setup();
    } catch (error) {
      failure = error;
    }
  });
  beforeEach(() => {
    if (failure) throw failure;
  });
}

/** Starts the API on a real loopback port (the libraries export over HTTP) and answers its origin. */
export async function listenOnLoopback(h: Harness): Promise<string> {
  await h.api.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(h.api.server.address() as AddressInfo).port}`;
}

/** A trace and its spans as `GET /traces/{trace_id}` answers them: the server's answer types (answers.ts). */
export type StoredTrace = AnswerOf<typeof TraceDetailAnswer>;
export type StoredSpan = AnswerOf<typeof SpanAnswer>;

/**
 * Polls GET /traces/{id} until the trace holds `spanCount` spans (each export is answered once its
 * spans are stored, so this settles at once; the bound turns a lost export into a readable failure).
 */
export async function waitForTrace(
  h: Harness,
  token: string,
  traceId: string,
  spanCount: number,
): Promise<StoredTrace> {
  let trace: StoredTrace | undefined;
  let last = '';
  try {
    await waitUntil(
      async () => {
        const res = await call(h.api, { method: 'GET', url: `${PUBLIC}/traces/${traceId}`, token });
        last = `${res.statusCode} ${res.body.slice(0, 300)}`;
        if (res.statusCode !== 200) return false;
        trace = res.json() as StoredTrace;
        return trace.spans.length >= spanCount;
      },
      `trace ${traceId} with ${spanCount} spans`,
      20_000,
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}; last answer: ${last}`);
  }
  return trace!;
}

/** The trace ids GET /traces answers for these filters. */
export async function listTraceIds(h: Harness, token: string, filters: unknown[]): Promise<string[]> {
  const res = await call(h.api, {
    method: 'GET',
    url: `${PUBLIC}/traces`,
    token,
    query: { filters: JSON.stringify(filters) },
  });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json().data as { trace_id: string }[]).map((t) => t.trace_id);
}

/** The one span of this name (fails when there are none or several). */
export function spanNamed(trace: StoredTrace, name: string): StoredSpan {
  const found = trace.spans.filter((s) => s.name === name);
  expect(
    found.map((s) => s.name),
    `spans named ${name} among ${trace.spans.map((s) => s.name).join(', ')}`,
  ).toEqual([name]);
  return found[0]!;
}

export function spansNamed(trace: StoredTrace, name: string): StoredSpan[] {
  return trace.spans.filter((s) => s.name === name);
}

/** What every span's kind came out as, by name, for one readable assertion. */
export function kindsByName(trace: StoredTrace): [string, string][] {
  return trace.spans.map((s) => [s.name, s.kind]);
}

/**
 * The scenario's two answered model calls as a user checks them: each with the scenario's tokens (and
 * its cached input where the library sends it) and a cost from the price table, and the trace's totals
 * those of the two calls, counted once.
 */
export function expectModelCallsPriced(
  trace: StoredTrace,
  calls: StoredSpan[],
  { cached = false }: { cached?: boolean } = {},
): void {
  expect(calls).toHaveLength(2);
  for (const call of calls) {
    expect(call).toMatchObject({
      input_tokens: USAGE.input,
      output_tokens: USAGE.output,
      ...(cached ? { cache_read_tokens: USAGE.cachedInput } : {}),
    });
    expect(call.cost).toBeGreaterThan(0);
    expect(call.cost_source).toBe('computed');
  }
  expect(trace).toMatchObject({ total_input_tokens: 2 * USAGE.input, total_output_tokens: 2 * USAGE.output });
  expect(trace.total_cost).toBeCloseTo(
    calls.reduce((sum, s) => sum + s.cost, 0),
    12,
  );
}

/**
 * The scenario's words where a user looks for them: the question and the answer on the trace, the
 * question in every model call's input (`callInput`: what else a library puts there instead), the tool
 * call and the answer among the calls' outputs, and the tool's arguments and result on its span.
 */
export function expectScenarioWords(
  trace: StoredTrace,
  calls: StoredSpan[],
  tool: StoredSpan,
  callInput: string = QUESTION,
): void {
  expect(trace.input ?? '(null)').toContain(QUESTION);
  expect(trace.output ?? '(null)').toContain(ANSWER);
  for (const call of calls) expect(call.input ?? '(null)').toContain(callInput);
  expect(calls.map((s) => s.output)).toEqual(
    expect.arrayContaining([expect.stringContaining(TOOL_NAME), expect.stringContaining(ANSWER)]),
  );
  expect(tool.input ?? '(null)').toContain('Paris');
  expect(tool.output ?? '(null)').toContain('temperature_c');
}

/** `metadata eq tenant <the scenario's tenant>` lists exactly this trace, and another tenant lists nothing. */
export async function expectTenantFilterFinds(h: Harness, token: string, trace: StoredTrace): Promise<void> {
  const tenant = (value: string) => [{ field: 'metadata', key: 'tenant', op: 'eq', value }];
  expect(await listTraceIds(h, token, tenant(TENANT))).toEqual([trace.trace_id]);
  expect(await listTraceIds(h, token, tenant('globex'))).toEqual([]);
}
