import type { AddressInfo } from 'node:net';
import { beforeAll, beforeEach, expect } from 'vitest';
import { call, PUBLIC, type Harness } from '../../support/harness.js';
import { waitUntil } from '../../support/wait.js';
import type { AnswerOf } from '../../../src/answer-schemas.js';
import type { SpanAnswer, TraceDetailAnswer } from '../../../src/traces/answers.js';

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
