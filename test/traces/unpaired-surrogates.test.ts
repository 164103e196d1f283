import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, PUBLIC, projectWithKey, useHarness } from '../support/harness.js';

/**
 * A string holding an unpaired UTF-16 surrogate (text cut between the two halves of an emoji) is
 * stored with U+FFFD in its place (docs/spans.md), through POST /traces and OTLP/JSON alike. The
 * engine refuses such a string: before, the request was answered 503 "retry", forever, and every
 * other request coalesced into the same insert failed with it.
 */

const h = useHarness();
const CUT = '🚀 launched'.slice(0, 1); // the high half of the rocket alone
const hex = (bytes: number) => crypto.randomBytes(bytes).toString('hex');

const json = (payload: unknown) => JSON.stringify(payload);

describe('unpaired surrogates', () => {
  it('are stored as U+FFFD by POST /traces, and a request sent beside it is stored too', async () => {
    const { key } = await projectWithKey(h(), 'surrogates');
    const t = new Date(Date.now() - 60_000).toISOString();
    const span = {
      trace_id: 'cut-emoji',
      span_id: `s-${CUT}`,
      name: `name ${CUT}`,
      start_time: t,
      input: `input ${CUT}`,
      output: { text: `object ${CUT}` },
      error_message: `error ${CUT}`,
      user_id: `user ${CUT}`,
      metadata: { [`key ${CUT}`]: `value ${CUT}`, plain: 'yes' },
    };
    const send = (spans: unknown[]) =>
      call(h().api, {
        method: 'POST',
        url: `${PUBLIC}/traces`,
        token: key.key,
        payload: json({ spans }),
        headers: { 'content-type': 'application/json' },
      });
    const [cut, beside] = await Promise.all([
      send([span]),
      send([{ trace_id: 'beside', span_id: 'b', name: 'beside', start_time: t, input: 'fine' }]),
    ]);
    expect(cut.statusCode, cut.body).toBe(200);
    expect(cut.json()).toEqual({ accepted: 1, rejected: [] });
    expect(beside.statusCode, beside.body).toBe(200);

    const detail = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces/cut-emoji`, token: key.key });
    expect(detail.statusCode, detail.body).toBe(200);
    expect(detail.json().spans).toEqual([
      expect.objectContaining({
        span_id: 's-\uFFFD',
        name: 'name \uFFFD',
        input: 'input \uFFFD',
        // An object is stored as its JSON, which escapes the half: the text comes back as sent.
        output: JSON.stringify({ text: `object ${CUT}` }),
        error_message: 'error \uFFFD',
        user_id: 'user \uFFFD',
        metadata: { 'key \uFFFD': 'value \uFFFD', plain: 'yes' },
      }),
    ]);
    const other = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces/beside`, token: key.key });
    expect(other.statusCode).toBe(200);
    expect(other.json().spans[0].input).toBe('fine');
  });

  it('are stored as U+FFFD by OTLP/JSON', async () => {
    const { key } = await projectWithKey(h(), 'surrogates-otlp');
    const traceId = hex(16);
    const start = BigInt(Date.now() - 60_000) * 1_000_000n;
    const body = {
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: `svc ${CUT}` } }] },
          scopeSpans: [
            {
              spans: [
                {
                  traceId,
                  spanId: hex(8),
                  name: `chat ${CUT}`,
                  startTimeUnixNano: String(start),
                  endTimeUnixNano: String(start + 1_000_000n),
                  attributes: [
                    { key: 'gen_ai.operation.name', value: { stringValue: 'chat' } },
                    { key: 'input.value', value: { stringValue: `question ${CUT}` } },
                  ],
                },
              ],
            },
          ],
        },
      ],
    };
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/otel/v1/traces`,
      token: key.key,
      payload: json(body),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode, res.body).toBe(200);
    const detail = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces/${traceId}`, token: key.key });
    expect(detail.statusCode, detail.body).toBe(200);
    const [stored] = detail.json().spans;
    expect(stored.name).toBe('chat \uFFFD');
    expect(stored.input).toBe('question \uFFFD');
    expect(stored.resource['service.name']).toBe('svc \uFFFD');
  });
});
