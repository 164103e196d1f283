import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness, type Harness } from '../support/harness.js';
import { settleSpanParts } from '../../src/protocols/span-parts.js';
import { inSample } from '../../src/controls/sampling.js';
import { LANGSMITH_PREFIX } from '../../src/protocols/langsmith/routes.js';

/**
 * The LangSmith routes over raw HTTP (src/protocols/langsmith/routes.ts): what the SDK may do that a
 * friendly run of it doesn't show: a patch before its post in another request, a batch re-sent, a gzip
 * body, bad keys, another project's key, malformed runs and bodies past the bound.
 */

const h = useHarness();
const id = () => crypto.randomUUID();

async function owner(hh: Harness) {
  const { owner: user, project, key } = await projectWithKey(hh);
  return { token: key.key, projectId: project.id, userToken: user.token };
}

/** Today's usage of the project (the read flushes the meter). */
async function usedToday(projectId: string, userToken: string) {
  const res = await call(h().api, { method: 'GET', url: `${PUBLIC}/projects/${projectId}/usage`, token: userToken });
  expect(res.statusCode, res.body).toBe(200);
  const today = new Date().toISOString().slice(0, 10);
  const day = (res.json().data as { date: string; spans: number; sampled_out_spans: number }[]).find(
    (d) => d.date === today,
  );
  return { spans: day?.spans ?? 0, sampled_out_spans: day?.sampled_out_spans ?? 0 };
}
const spansUsedToday = async (projectId: string, userToken: string) => (await usedToday(projectId, userToken)).spans;

const send = (method: 'POST' | 'PATCH', url: string, token: string | undefined, body: unknown, headers = {}) =>
  call(h().api, {
    method,
    url: `${LANGSMITH_PREFIX}${url}`,
    payload: body as Record<string, unknown>,
    headers: { 'content-type': 'application/json', ...(token ? { 'x-api-key': token } : {}), ...headers },
  });

async function settle(projectId: string) {
  return settleSpanParts(h().ctx, { now: Date.now() + 60_000, projectId });
}

const readTrace = (token: string, traceId: string) =>
  call(h().api, { method: 'GET', url: `${PUBLIC}/traces/${traceId}`, token });

/** A root run and its llm child, as the JS SDK sends their posts and patches. */
function runs(traceId = id()) {
  const child = id();
  const start = Date.now() - 5_000;
  const stamp = (ms: number) => new Date(ms).toISOString().replace(/[-:.]/g, '').replace('Z', '000Z');
  const rootOrder = `${stamp(start)}${traceId}`;
  const childOrder = `${rootOrder}.${stamp(start + 10)}${child}`;
  const post = [
    {
      id: traceId,
      trace_id: traceId,
      dotted_order: rootOrder,
      name: 'root',
      run_type: 'chain',
      start_time: new Date(start).toISOString().replace('Z', '123Z'),
      inputs: { question: 'why?' },
      session_name: 'my-app',
      extra: { metadata: { conversation_id: 'c-1', temperature: 0.2, nested: { dropped: true } } },
    },
    {
      id: child,
      trace_id: traceId,
      dotted_order: childOrder,
      name: 'ChatOpenAI',
      run_type: 'llm',
      start_time: new Date(start + 10).toISOString(),
      inputs: { messages: [[{ lc: 1, type: 'constructor', id: ['HumanMessage'], kwargs: { content: 'why?' } }]] },
      extra: { invocation_params: { model: 'gpt-4o-mini' } },
      events: [
        { name: 'start', time: new Date(start + 10).toISOString() },
        { name: 'new_token', time: new Date(start + 250).toISOString(), kwargs: { token: 'be' } },
      ],
    },
  ];
  const patch = [
    {
      id: child,
      trace_id: traceId,
      dotted_order: childOrder,
      end_time: start + 900,
      outputs: { llm_output: { token_usage: { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28 } } },
    },
    {
      id: traceId,
      trace_id: traceId,
      dotted_order: rootOrder,
      end_time: start + 1_000,
      outputs: { answer: 'because' },
    },
  ];
  return { traceId, child, post, patch };
}

describe('LangSmith runs over HTTP', () => {
  it('answers /info without a key, advertising only what it decompresses', async () => {
    const res = await call(h().api, { method: 'GET', url: `${LANGSMITH_PREFIX}/info` });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      batch_ingest_config: { use_multipart_endpoint: true, size_limit: 1000 },
      instance_flags: {
        gzip_body_enabled: true,
        zstd_compression_enabled:
          typeof (zlib as { createZstdDecompress?: unknown }).createZstdDecompress === 'function',
      },
    });
  });

  it('joins a patch sent before its post, in another request, into the same trace as the usual order', async () => {
    const { token, projectId } = await owner(h());
    const { traceId, child, post, patch } = runs();
    expect((await send('POST', '/runs/batch', token, { patch })).statusCode).toBe(202);
    expect((await settle(projectId)).written).toBe(0);
    expect((await send('POST', '/runs/batch', token, { post })).statusCode).toBe(202);
    expect((await settle(projectId)).written).toBe(2);

    const trace = (await readTrace(token, traceId)).json();
    const llm = trace.spans.find((s: { span_id: string }) => s.span_id === child);
    expect(llm).toMatchObject({
      kind: 'llm',
      parent_span_id: traceId,
      model_name: 'gpt-4o-mini',
      input_tokens: 20,
      output_tokens: 8,
      time_to_first_token_ms: 240,
      status: 'ok',
      session_id: null,
    });
    expect(llm.duration_ms ?? llm.end_time).toBeTruthy();
    const root = trace.spans.find((s: { span_id: string }) => s.span_id === traceId);
    expect(root).toMatchObject({ kind: 'chain', session_id: 'c-1', status: 'ok' });
    expect(root.metadata).toEqual({ conversation_id: 'c-1', temperature: '0.2', 'langsmith.project': 'my-app' });
    expect(root.output).toContain('because');
  });

  it('counts a re-sent batch once, in the trace and in the usage', async () => {
    const { token, projectId, userToken } = await owner(h());
    const { traceId, post, patch } = runs();
    for (let i = 0; i < 2; i++)
      expect((await send('POST', '/runs/batch', token, { post, patch })).statusCode).toBe(202);
    await settle(projectId);
    expect((await send('POST', '/runs/batch', token, { post, patch })).statusCode).toBe(202);
    // A piece of it alone, re-sent: kept, and settled into the span already stored.
    expect((await send('POST', '/runs/batch', token, { post: [post[1]] })).statusCode).toBe(202);
    await settle(projectId);
    const trace = (await readTrace(token, traceId)).json();
    expect(trace.spans).toHaveLength(2);
    expect(trace).toMatchObject({ span_count: 2, total_input_tokens: 20, total_output_tokens: 8 });
    expect(await spansUsedToday(projectId, userToken)).toBe(2);
  });

  it('counts a re-sent batch once in a project that samples, its runs held by sampling', async () => {
    const { token, projectId, userToken } = await owner(h());
    const rate = 0.01;
    const put = await call(h().api, {
      method: 'PUT',
      url: `${PUBLIC}/projects/${projectId}/sampling`,
      token: userToken,
      payload: { rate, keep: [] },
    });
    expect(put.statusCode, put.body).toBe(200);
    let traceId = id();
    while (inSample(projectId, traceId, rate)) traceId = id();
    const { post, patch } = runs(traceId);
    for (let i = 0; i < 2; i++)
      expect((await send('POST', '/runs/batch', token, { post, patch })).statusCode).toBe(202);
    await settle(projectId);
    expect((await readTrace(token, traceId)).statusCode).toBe(404);
    expect(await usedToday(projectId, userToken)).toEqual({ spans: 0, sampled_out_spans: 2 });
  });

  it('writes a run whose post and patch come together at once, yet merges a whole post into the patch sent before it', async () => {
    const { token, projectId } = await owner(h());
    const together = runs();
    expect((await send('POST', '/runs/batch', token, { post: together.post, patch: together.patch })).statusCode).toBe(
      202,
    );
    // Written by the request itself: nothing is left to settle.
    expect((await readTrace(token, together.traceId)).json()).toMatchObject({ span_count: 2, total_input_tokens: 20 });
    expect((await settle(projectId)).written).toBe(0);

    // The patch first, then the post already holding its end (as the SDK merges a finished run):
    // the patch's output is not lost, and the re-sent whole post afterwards changes nothing.
    const apart = runs();
    const [childPatch, rootPatch] = apart.patch;
    expect((await send('POST', '/runs/batch', token, { patch: [childPatch] })).statusCode).toBe(202);
    const whole = apart.post.map((p, i) =>
      i === 0 ? { ...p, ...rootPatch } : { ...p, end_time: childPatch!.end_time },
    );
    expect((await send('POST', '/runs/batch', token, { post: whole })).statusCode).toBe(202);
    expect((await settle(projectId)).written).toBe(1);
    expect((await send('POST', '/runs/batch', token, { post: whole })).statusCode).toBe(202);
    expect((await settle(projectId)).written).toBe(0);
    const trace = (await readTrace(token, apart.traceId)).json();
    expect(trace).toMatchObject({ span_count: 2, total_input_tokens: 20, total_output_tokens: 8 });
    expect(trace.output).toContain('because');
  });

  it('reads a gzip multipart body with the run split over its parts', async () => {
    const { token, projectId } = await owner(h());
    const { traceId, post, patch } = runs();
    const boundary = 'b' + crypto.randomBytes(8).toString('hex');
    const parts: string[] = [];
    const part = (name: string, value: unknown) =>
      parts.push(
        `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(value)}\r\n`,
      );
    for (const [op, list] of [
      ['post', post],
      ['patch', patch],
    ] as const)
      for (const run of list) {
        const { inputs, outputs, events, extra, ...rest } = run as Record<string, unknown>;
        part(`${op}.${run.id}`, rest);
        for (const [k, v] of Object.entries({ inputs, outputs, events, extra }))
          if (v !== undefined) part(`${op}.${run.id}.${k}`, v);
      }
    parts.push(
      `--${boundary}\r\nContent-Disposition: form-data; name="attachment.${traceId}.img"\r\nContent-Type: image/png\r\n\r\n\u0001\u0002\r\n`,
    );
    parts.push(`--${boundary}--\r\n`);
    const res = await call(h().api, {
      method: 'POST',
      url: `${LANGSMITH_PREFIX}/runs/multipart`,
      payload: zlib.gzipSync(Buffer.from(parts.join(''))),
      headers: {
        'x-api-key': token,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-encoding': 'gzip',
      },
    });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toEqual({ accepted: 4, rejected: [] });
    await settle(projectId);
    const trace = (await readTrace(token, traceId)).json();
    expect(trace.spans).toHaveLength(2);
    expect(trace.input).toContain('why?');
  });

  it('rejects a malformed run alone and stores the others', async () => {
    const { token, projectId } = await owner(h());
    const { traceId, post } = runs();
    const res = await send('POST', '/runs/batch', token, { post: [...post, { name: 'no id' }, 'text'] });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({
      accepted: 2,
      rejected: [
        { id: null, errors: ['post: id: a run needs its id'] },
        { id: null, errors: ['post: a run is a JSON object'] },
      ],
    });
    await settle(projectId);
    expect((await readTrace(token, traceId)).json().spans).toHaveLength(2);
  });

  it('answers 401 to a missing or wrong key and 400 to a bad gzip body, storing nothing', async () => {
    const { token, projectId } = await owner(h());
    const { traceId, post } = runs();
    expect((await send('POST', '/runs/batch', undefined, { post })).statusCode).toBe(401);
    const wrong = await send('POST', '/runs/batch', `sl_${crypto.randomUUID()}`, { post });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toEqual({ detail: expect.any(String) });
    const bad = await call(h().api, {
      method: 'POST',
      url: `${LANGSMITH_PREFIX}/runs/batch`,
      payload: Buffer.from('not gzip'),
      headers: { 'x-api-key': token, 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ detail: 'request body is not valid gzip' });
    await settle(projectId);
    expect((await readTrace(token, traceId)).statusCode).toBe(404);
  });

  it('refuses a body past the bound with 413', async () => {
    const { token } = await owner(h());
    const big = 'x'.repeat(11 * 1024 * 1024);
    const json = await send('POST', '/runs/batch', token, { post: [{ id: id(), inputs: { big } }] });
    expect(json.statusCode).toBe(413);
    expect(json.json()).toEqual({ detail: 'request body is too large' });
    const boundary = 'bnd';
    const multipart = await call(h().api, {
      method: 'POST',
      url: `${LANGSMITH_PREFIX}/runs/multipart`,
      payload: `--${boundary}\r\nContent-Disposition: form-data; name="post.x"\r\n\r\n${big}\r\n--${boundary}--\r\n`,
      headers: { 'x-api-key': token, 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    expect(multipart.statusCode).toBe(413);
    expect(multipart.json().detail).toMatch(/^request body is too large/);
  });

  it("keeps projects apart: B's key writes into B, and can't read or patch A's runs", async () => {
    const a = await owner(h());
    const b = await owner(h());
    const { traceId, post, patch } = runs();
    await send('POST', '/runs/batch', a.token, { post });
    // B sends the patch of A's runs: it lands in B's project, where it has no post, and is never written.
    await send('POST', '/runs/batch', b.token, {
      patch: patch.map((p) => ({ ...p, outputs: { answer: 'hijacked' } })),
    });
    await settle(a.projectId);
    await settle(b.projectId);
    expect((await readTrace(b.token, traceId)).statusCode).toBe(404);
    const trace = (await readTrace(a.token, traceId)).json();
    expect(JSON.stringify(trace)).not.toContain('hijacked');
  });

  it('turns POST /feedback into a score, refusing one without a run or trace with 400', async () => {
    const { token, projectId } = await owner(h());
    const { traceId, child, post, patch } = runs();
    await send('POST', '/runs/batch', token, { post, patch });
    const feedbackId = id();
    // No trace_id: the child run's trace is found from the parts received for it.
    const res = await send('POST', '/feedback', token, { id: feedbackId, run_id: child, key: 'accuracy', score: 0.5 });
    expect(res.statusCode, res.body).toBe(201);
    // Re-sent: the same score, not a second one.
    expect(
      (await send('POST', '/feedback', token, { id: feedbackId, run_id: child, key: 'accuracy', score: 0.5 }))
        .statusCode,
    ).toBe(201);
    const bad = await send('POST', '/feedback', token, { key: 'accuracy', score: 1 });
    expect(bad.statusCode).toBe(400);
    await settle(projectId);
    const scores = (await readTrace(token, traceId)).json().scores;
    expect(scores).toEqual([
      expect.objectContaining({ score_id: feedbackId, name: 'accuracy', value: 0.5, span_id: child, source: 'api' }),
    ]);
  });
});
