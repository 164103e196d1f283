import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { langfuseOtlpAlias } from '../../src/app.js';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';

/**
 * OTLP with Basic credentials, and the Langfuse SDK's path (`/api/public/otel/v1/traces`, Basic
 * `publicKey:secretKey` with a Sightline API key as the secret key): docs/integrations/mapping.md.
 */

const h = useHarness();
const LANGFUSE_PATH = '/api/public/otel/v1/traces';
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

function body(traceId: string, spanId: string) {
  const start = BigInt(Date.now() - 5_000) * 1_000_000n;
  return {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'langfuse-app' } }] },
        scopeSpans: [
          {
            scope: { name: 'langfuse-sdk' },
            spans: [
              {
                traceId,
                spanId,
                name: 'chat',
                startTimeUnixNano: String(start),
                endTimeUnixNano: String(start + 1_000_000n),
                attributes: [
                  { key: 'langfuse.observation.type', value: { stringValue: 'generation' } },
                  { key: 'langfuse.observation.model.name', value: { stringValue: 'gpt-4o' } },
                  { key: 'langfuse.observation.usage_details', value: { stringValue: '{"input":10,"output":5}' } },
                ],
              },
            ],
          },
        ],
      },
    ],
  };
}

const post = (url: string, authorization: string | undefined, payload: unknown) =>
  call(h().api, {
    method: 'POST',
    url,
    payload: payload as Record<string, unknown>,
    headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
  });

const hex = (bytes: number) => crypto.randomBytes(bytes).toString('hex');

describe('OTLP with Basic credentials', () => {
  it('takes the Langfuse SDK path with the API key as the secret key, any public key', async () => {
    const { key } = await projectWithKey(h());
    const traceId = hex(16);
    const res = await post(LANGFUSE_PATH, basic('pk-lf-anything', key.key), body(traceId, hex(8)));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({});

    const detail = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces/${traceId}`, token: key.key });
    expect(detail.statusCode).toBe(200);
    expect(detail.json().spans[0]).toMatchObject({
      kind: 'llm',
      model_name: 'gpt-4o',
      input_tokens: 10,
      output_tokens: 5,
    });
  });

  it('takes Basic on our own OTLP route too, and a bearer key on the Langfuse path', async () => {
    const { key } = await projectWithKey(h());
    expect((await post(`${PUBLIC}/otel/v1/traces`, basic('', key.key), body(hex(16), hex(8)))).statusCode).toBe(200);
    expect((await post(LANGFUSE_PATH, `Bearer ${key.key}`, body(hex(16), hex(8)))).statusCode).toBe(200);
  });

  it('answers 401 to wrong or missing credentials and stores nothing', async () => {
    const { key, owner } = await projectWithKey(h());
    const traceId = hex(16);
    const refused = [
      undefined,
      basic('pk-lf-1', `sl_${crypto.randomUUID()}`),
      basic('pk-lf-1', 'sk-lf-not-a-sightline-key'),
      basic(key.key, ''),
      basic('pk-lf-1', owner.token),
      `Basic ${Buffer.from(key.key).toString('base64')}`,
      'Basic %%%',
    ];
    for (const authorization of refused) {
      const res = await post(LANGFUSE_PATH, authorization, body(traceId, hex(8)));
      expect(res.statusCode, String(authorization)).toBe(401);
      expect(res.json()).toHaveProperty('detail');
      expect(res.body).not.toContain(key.key);
    }
    const list = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces`, token: key.key });
    expect(list.json().meta.total).toBe(0);
  });

  it('keeps Basic off the other API-key routes', async () => {
    const { key } = await projectWithKey(h());
    const span = { trace_id: hex(16), span_id: hex(8), name: 's', start_time: new Date().toISOString() };
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/traces`,
      payload: { spans: [span] },
      headers: { authorization: basic('x', key.key) },
    });
    expect(res.statusCode).toBe(401);
  });

  it('aliases only the exact Langfuse path', async () => {
    expect(langfuseOtlpAlias(LANGFUSE_PATH)).toBe(`${PUBLIC}/otel/v1/traces`);
    expect(langfuseOtlpAlias(`${LANGFUSE_PATH}?x=1`)).toBe(`${PUBLIC}/otel/v1/traces?x=1`);
    expect(langfuseOtlpAlias(`${LANGFUSE_PATH}x`)).toBe(`${LANGFUSE_PATH}x`);
    expect(langfuseOtlpAlias('/api/public/projects')).toBe('/api/public/projects');
    const { key } = await projectWithKey(h());
    expect((await post(`${LANGFUSE_PATH}x`, basic('pk', key.key), body(hex(16), hex(8)))).statusCode).toBe(404);
  });
});
