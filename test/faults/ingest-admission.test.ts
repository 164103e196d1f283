import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { waitUntil } from '../support/wait.js';
import { ClientGoneError, SpanWriter, withIngestTicket } from '../../src/traces/span-writer.js';
import { TooManyRequestsError } from '../../src/errors.js';
import { validateSpans } from '../../src/traces/span-input.js';

/**
 * Ingest's preconditions (docs/operations.md, "Overload"; docs/authentication.md): with a queue
 * bounded to 4 KiB of request bodies, a request that can't fit while another holds the budget is
 * answered 429 with Retry-After before its body is read (Content-Length), or as soon as its
 * undeclared body passes the bound, on the native and OTLP routes; nothing of a refused request is
 * stored. The span bound refuses a write that would overfill the queue. Spans of a client that has
 * closed its connection are dropped before their insert. A project_id naming another project than
 * the key's answers 400.
 */

const h = useHarness({ INGEST_QUEUE_MAX_BYTES: '4096', INGEST_QUEUE_MAX_SPANS: '100' });
let port = 0;
beforeAll(async () => {
  await h().api.listen({ host: '127.0.0.1', port: 0 });
  port = (h().api.server.address() as AddressInfo).port;
});

type Answer = { status: number; headers: http.IncomingHttpHeaders; body: string };

/** A POST over a real connection; `hold` sends half the body and waits for `release`. */
function post(
  path: string,
  token: string,
  body: string,
  options: { hold?: boolean; chunked?: boolean; contentType?: string } = {},
) {
  let release = () => {};
  const answer = new Promise<Answer>((resolve, reject) => {
    const payload = Buffer.from(body);
    const headers: Record<string, string> = {
      authorization: `Bearer ${token}`,
      'content-type': options.contentType ?? 'application/json',
    };
    if (!options.chunked) headers['content-length'] = String(payload.length);
    const req = http.request(
      { host: '127.0.0.1', port, path: `${PUBLIC}${path}`, method: 'POST', headers, agent: false },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    if (options.hold) {
      req.write(payload.subarray(0, payload.length >> 1));
      release = () => req.end(payload.subarray(payload.length >> 1));
    } else {
      req.end(payload);
    }
  });
  return { answer, release: () => release() };
}

const spansOf = (trace: string, n: number, pad = 0) =>
  Array.from({ length: n }, (_, i) => ({
    trace_id: trace,
    span_id: `s${i}`,
    name: 'op',
    start_time: new Date().toISOString(),
    input: 'x'.repeat(pad),
  }));

async function metric(name: string): Promise<number> {
  const res = await call(h().api, { method: 'GET', url: '/metrics' });
  return Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)`, 'm').exec(res.body)?.[1] ?? NaN);
}

async function storedSpans(projectId: string, traceId: string): Promise<number> {
  const ch = h().ctx.ch;
  const result = await ch.client.query({
    query: 'SELECT count() AS n FROM spans WHERE project_id = {p:String} AND trace_id = {t:String}',
    query_params: { p: projectId, t: traceId },
    format: 'JSONEachRow',
  });
  return Number((await result.json<{ n: string }>())[0]!.n);
}

describe('ingest past the queue bound', () => {
  it(
    'answers 429 with Retry-After before reading the body, and stores nothing of what it refused',
    { timeout: 60_000 },
    async () => {
      const { key, project } = await projectWithKey(h(), 'overload');
      const refusedBefore = await metric('sightline_ingest_refused_total\\{[^}]*reason="queue_full"[^}]*\\}');
      // A 3 KB body, half sent: admitted, holding 3 KB of the 4 KiB budget.
      const holder = post('/traces', key.key, JSON.stringify({ spans: spansOf('holder', 5, 500) }), { hold: true });
      await waitUntil(
        async () => (await metric('sightline_ingest_queue_requests')) === 1,
        'the first request to be admitted',
      );
      expect(await metric('sightline_ingest_queue_bytes')).toBeGreaterThan(2048);

      const declared = await post('/traces', key.key, JSON.stringify({ spans: spansOf('refused-declared', 3, 500) }))
        .answer;
      expect(declared.status, declared.body).toBe(429);
      expect(Number(declared.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(JSON.parse(declared.body).detail).toMatch(/capacity/);

      const chunked = await post('/traces', key.key, JSON.stringify({ spans: spansOf('refused-chunked', 4, 500) }), {
        chunked: true,
      }).answer;
      expect(chunked.status, chunked.body).toBe(429);
      expect(Number(chunked.headers['retry-after'])).toBeGreaterThanOrEqual(1);

      const otlpBody = {
        resourceSpans: [
          {
            scopeSpans: [
              {
                spans: [
                  {
                    traceId: 'a'.repeat(32),
                    spanId: 'b'.repeat(16),
                    name: 'x'.repeat(2000),
                    startTimeUnixNano: String(Date.now() * 1e6),
                    endTimeUnixNano: String(Date.now() * 1e6),
                  },
                ],
              },
            ],
          },
        ],
      };
      const otlp = await post('/otel/v1/traces', key.key, JSON.stringify(otlpBody)).answer;
      expect(otlp.status, otlp.body).toBe(429);
      expect(Number(otlp.headers['retry-after'])).toBeGreaterThanOrEqual(1);

      holder.release();
      const held = await holder.answer;
      expect(held.status, held.body).toBe(200);
      expect(await metric('sightline_ingest_queue_bytes')).toBe(0);
      expect(await metric('sightline_ingest_refused_total\\{[^}]*reason="queue_full"[^}]*\\}')).toBe(refusedBefore + 3);

      // Nothing of the refused requests was stored; the same request retried now is taken.
      expect(await storedSpans(project.id, 'holder')).toBe(5);
      expect(await storedSpans(project.id, 'refused-declared')).toBe(0);
      expect(await storedSpans(project.id, 'refused-chunked')).toBe(0);
      const retried = await post('/traces', key.key, JSON.stringify({ spans: spansOf('refused-declared', 3, 500) }))
        .answer;
      expect(retried.status, retried.body).toBe(200);
      expect(await storedSpans(project.id, 'refused-declared')).toBe(3);
    },
  );

  it('refuses a write that would overfill the span bound, and takes any one request into an empty queue', async () => {
    const { project } = await projectWithKey(h(), 'span-bound');
    const writer = new SpanWriter(h().ctx.ch, h().ctx.pg, { maxQueuedSpans: 10 });
    try {
      const { accepted } = validateSpans(spansOf('bound-a', 8));
      const first = writer.write(project.id, 30, accepted);
      // Same tick: the first 8 are still queued, so 5 more would pass the bound of 10.
      const second = writer.write(project.id, 30, validateSpans(spansOf('bound-b', 5)).accepted);
      await expect(second).rejects.toBeInstanceOf(TooManyRequestsError);
      await first;
      // Empty again: a request larger than the bound still goes through whole.
      await writer.write(project.id, 30, validateSpans(spansOf('bound-c', 12)).accepted);
    } finally {
      await writer.close();
    }
    expect([
      await storedSpans(project.id, 'bound-a'),
      await storedSpans(project.id, 'bound-b'),
      await storedSpans(project.id, 'bound-c'),
    ]).toEqual([8, 0, 12]);
  });
});

describe('a client that has gone', () => {
  it('costs no insert: its spans still waiting in the queue are dropped, counted, and not stored', async () => {
    const { project } = await projectWithKey(h(), 'gone');
    const writer = new SpanWriter(h().ctx.ch, h().ctx.pg);
    const refused: string[] = [];
    writer.observe({ refused: (reason) => void refused.push(reason) });
    try {
      const gone = writer.admit(100);
      const stays = writer.admit(100);
      const dropped = withIngestTicket(gone, () =>
        writer.write(project.id, 30, validateSpans(spansOf('gone', 3)).accepted),
      );
      const kept = withIngestTicket(stays, () =>
        writer.write(project.id, 30, validateSpans(spansOf('stays', 3)).accepted),
      );
      // The connection closes before the commit takes the queue (it waits a turn of the event loop).
      gone.clientGone();
      await expect(dropped).rejects.toBeInstanceOf(ClientGoneError);
      await kept;
      stays.release();
      expect(writer.depth()).toEqual({ spans: 0, bytes: 0, requests: 0 });
      // Gone before its spans were handed over: refused at once.
      await expect(
        withIngestTicket(gone, () => writer.write(project.id, 30, validateSpans(spansOf('gone', 3)).accepted)),
      ).rejects.toBeInstanceOf(ClientGoneError);
    } finally {
      await writer.close();
    }
    expect(refused).toEqual(['client_gone', 'client_gone']);
    expect([await storedSpans(project.id, 'gone'), await storedSpans(project.id, 'stays')]).toEqual([0, 3]);
  });
});

describe('ingest with a project_id', () => {
  it("answers 400 for another project's id (query or body) and stores nothing; the key's own id is accepted", async () => {
    const mine = await projectWithKey(h(), 'pid-mine');
    const other = await projectWithKey(h(), 'pid-other');
    const spans = spansOf('pid-trace', 1);
    const viaQuery = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/traces?project_id=${other.project.id}`,
      token: mine.key.key,
      payload: { spans },
    });
    expect(viaQuery.statusCode, viaQuery.body).toBe(400);
    expect(viaQuery.json().detail).toBe("project_id does not match the API key's project");
    const viaBody = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/traces`,
      token: mine.key.key,
      payload: { spans, project_id: other.project.id },
    });
    expect(viaBody.statusCode, viaBody.body).toBe(400);
    const otlp = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/otel/v1/traces?project_id=${other.project.id}`,
      token: mine.key.key,
      payload: { resourceSpans: [] },
    });
    expect(otlp.statusCode, otlp.body).toBe(400);
    expect(await storedSpans(mine.project.id, 'pid-trace')).toBe(0);
    expect(await storedSpans(other.project.id, 'pid-trace')).toBe(0);

    const own = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/traces?project_id=${mine.project.id.toUpperCase()}`,
      token: mine.key.key,
      payload: { spans, project_id: mine.project.id },
    });
    expect(own.statusCode, own.body).toBe(200);
    expect(await storedSpans(mine.project.id, 'pid-trace')).toBe(1);
  });
});
