import { describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { expectDetail, expectValidationAt } from '../support/expect.js';
import { ingestSpans, iso } from '../support/ingest.js';
import {
  createDataset,
  createVersion,
  getVersion,
  postVersionText,
  simpleCases,
  type Version,
} from '../support/datasets.js';

const h = useHarness();

describe('creating a version', () => {
  it('answers the version with every case and its new test_case_id, in the order given', async () => {
    const { key } = await projectWithKey(h());
    const dataset = await createDataset(h(), key.key);
    const version = await createVersion(
      h(),
      key.key,
      dataset.id,
      [
        { input: { question: 'capital of France?' }, expected: 'Paris', metadata: { topic: 'geo' } },
        { input: 'plain string', expected: null },
        {
          input: [1, 'two', { three: 3 }],
          expected: { answer: [true, false, null] },
          metadata: 'note',
          source_trace_id: 't-1',
          source_span_id: 's-1',
        },
      ],
      'first',
    );
    expect(version).toMatchObject({ dataset_id: dataset.id, version_number: 1, label: 'first', next_cursor: null });
    expect(version.items.map((c) => c.test_case_id)).toEqual([
      expect.any(String),
      expect.any(String),
      expect.any(String),
    ]);
    expect(new Set(version.items.map((c) => c.test_case_id)).size).toBe(3);
    expect(version.items.map(({ test_case_id: _, ...rest }) => rest)).toEqual([
      {
        input: { question: 'capital of France?' },
        expected: 'Paris',
        metadata: { topic: 'geo' },
        source_trace_id: null,
        source_span_id: null,
      },
      { input: 'plain string', expected: null, metadata: null, source_trace_id: null, source_span_id: null },
      {
        input: [1, 'two', { three: 3 }],
        expected: { answer: [true, false, null] },
        metadata: 'note',
        source_trace_id: 't-1',
        source_span_id: 's-1',
      },
    ]);
    const read = await getVersion(h(), key.key, version.dataset_version_id);
    expect(read.statusCode).toBe(200);
    expect(read.headers['content-type']).toMatch(/^application\/json/);
    expect(read.json()).toEqual({ ...version, test_case_count: 3, created_at: expect.any(String) });
  });

  it('keeps JSON values exactly: big integers, float sums, decimals, unicode', async () => {
    const { key } = await projectWithKey(h());
    const dataset = await createDataset(h(), key.key);
    // Written as text: JSON.stringify can't write 9007199254740993 (2^53 + 1).
    const body = `{"test_cases": [
      {"input": {"n": 9007199254740993, "neg": -9007199254740993, "huge": 123456789012345678901234567890}, "expected": 0.30000000000000004,
       "metadata": {"pi": 3.141592653589793238462643383279, "tiny": 1e-300, "float": 0.1}},
      {"input": "emoji \\ud83d\\ude00 and \\u00e9", "expected": ["\\"quoted\\"", "back\\\\slash", "tab\\t"], "metadata": {"nested": {"deep": [[[1]]]}}}
    ]}`;
    const res = await postVersionText(h(), key.key, dataset.id, body);
    expect(res.statusCode, res.body).toBe(201);
    const read = await getVersion(h(), key.key, res.json().dataset_version_id);
    for (const text of [res.body, read.body]) {
      expect(text).toContain('"n": 9007199254740993');
      expect(text).toMatch(/"neg": ?-9007199254740993/);
      expect(text).toContain('123456789012345678901234567890');
      expect(text).toContain('0.30000000000000004');
      expect(text).toContain('3.141592653589793238462643383279');
    }
    const items = read.json().items;
    expect(items[0].expected).toBe(0.1 + 0.2);
    expect(items[0].metadata.tiny).toBe(1e-300);
    expect(items[1].input).toBe('emoji 😀 and é');
    expect(items[1].expected).toEqual(['"quoted"', 'back\\slash', 'tab\t']);
    expect(items[1].metadata).toEqual({ nested: { deep: [[[1]]] } });
  });

  it('refuses bad cases with 422 at their place, and creates nothing', async () => {
    const { key } = await projectWithKey(h());
    const dataset = await createDataset(h(), key.key);
    const post = (body: unknown) =>
      call(h().api, {
        method: 'POST',
        url: `${PUBLIC}/datasets/${dataset.id}/versions`,
        token: key.key,
        payload: body as never,
      });
    expectValidationAt(await post({}), ['body', 'test_cases']);
    expectValidationAt(await post({ test_cases: [] }), ['body', 'test_cases']);
    expectValidationAt(await post({ test_cases: [{ input: 1, expected: 2 }, { expected: 'no input' }] }), [
      'body',
      'test_cases',
      1,
      'input',
    ]);
    expectValidationAt(await post({ test_cases: [{ input: 'no expected' }] }), ['body', 'test_cases', 0, 'expected']);
    expectValidationAt(await post({ test_cases: [{ input: 1, expected: 1, source_span_id: 's' }] }), [
      'body',
      'test_cases',
      0,
      'source_span_id',
    ]);
    expectValidationAt(await post({ test_cases: [{ input: 1, expected: 1, source_trace_id: '' }] }), [
      'body',
      'test_cases',
      0,
      'source_trace_id',
    ]);
    expectValidationAt(await post({ test_cases: [{ input: 'nul \u0000', expected: 1 }] }), [
      'body',
      'test_cases',
      0,
      'input',
    ]);
    expectValidationAt(await post({ label: 5, test_cases: simpleCases(1) }), ['body', 'label']);
    const lone = await postVersionText(
      h(),
      key.key,
      dataset.id,
      '{"test_cases": [{"input": "\\ud800", "expected": 1}]}',
    );
    expectValidationAt(lone, ['body', 'test_cases', 0, 'input']);
    const exponent = await postVersionText(
      h(),
      key.key,
      dataset.id,
      '{"test_cases": [{"input": 1, "expected": 1e100000}]}',
    );
    expectValidationAt(exponent, ['body', 'test_cases', 0, 'expected']);
    const deep = await postVersionText(
      h(),
      key.key,
      dataset.id,
      `{"test_cases": [{"input": 1, "expected": 1, "metadata": ${'['.repeat(101)}${']'.repeat(101)}}]}`,
    );
    expectValidationAt(deep, ['body', 'test_cases', 0, 'metadata']);
    expectDetail(
      await postVersionText(h(), key.key, dataset.id, '{"test_cases": [{"input": 1, "expected": }]}'),
      400,
      'request body is not valid JSON',
    );
    expectDetail(
      await postVersionText(h(), key.key, dataset.id, '{"test_cases": [{"input": 1, "expected": 1}]} trailing'),
      400,
      'request body is not valid JSON',
    );
    const detail = (
      await call(h().api, { method: 'GET', url: `${PUBLIC}/datasets/${dataset.id}`, token: key.key })
    ).json();
    expect(detail.versions).toEqual([]);
    expect(detail.version_count).toBe(0);
  });

  it('takes 10,000 cases in one call; 10,001 is a 413 with a clear detail', async () => {
    const { key } = await projectWithKey(h());
    const dataset = await createDataset(h(), key.key);
    const tooMany = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/datasets/${dataset.id}/versions`,
      token: key.key,
      payload: { test_cases: simpleCases(10_001) },
    });
    expectDetail(tooMany, 413, 'at most 10000 test cases per version; this request has 10001');
    const version = await createVersion(h(), key.key, dataset.id, simpleCases(10_000));
    expect(version.version_number).toBe(1);
    expect(version.items).toHaveLength(10_000);
    expect(version.items[9_999]!.input).toEqual({ q: 9_999 });
  });

  it('numbers concurrent creates 1..N without gaps or duplicates', async () => {
    const { key } = await projectWithKey(h());
    const dataset = await createDataset(h(), key.key);
    const other = await createDataset(h(), key.key, 'other');
    const made = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        call(h().api, {
          method: 'POST',
          url: `${PUBLIC}/datasets/${i % 3 === 0 ? other.id : dataset.id}/versions`,
          token: key.key,
          payload: { test_cases: simpleCases(20, i * 20) },
        }),
      ),
    );
    for (const res of made) expect(res.statusCode, res.body).toBe(201);
    const numbers = (id: string) =>
      made
        .map((r) => r.json() as Version)
        .filter((v) => v.dataset_id === id)
        .map((v) => v.version_number)
        .sort((a, b) => a - b);
    expect(numbers(dataset.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(numbers(other.id)).toEqual([1, 2, 3, 4]);
    // Each version holds exactly its own request's cases.
    for (const res of made) {
      const v = res.json() as Version;
      const read = (await getVersion(h(), key.key, v.dataset_version_id)).json() as Version;
      expect(read.items).toEqual(v.items);
    }
  });

  it('is immutable: no route changes or deletes a version', async () => {
    const { key } = await projectWithKey(h());
    const dataset = await createDataset(h(), key.key);
    const version = await createVersion(h(), key.key, dataset.id, simpleCases(2));
    const url = `${PUBLIC}/dataset-versions/${version.dataset_version_id}`;
    for (const method of ['PUT', 'PATCH', 'DELETE', 'POST'] as const) {
      const res = await call(h().api, {
        method,
        url,
        token: key.key,
        payload: { label: 'changed', test_cases: simpleCases(1) },
      });
      expect([404, 405], `${method} ${res.statusCode}`).toContain(res.statusCode);
    }
    // A new version of the dataset leaves the old one as it was.
    await createVersion(h(), key.key, dataset.id, simpleCases(5, 100));
    expect((await getVersion(h(), key.key, version.dataset_version_id)).json().items).toEqual(version.items);
    // And the store itself refuses an update.
    await expect(
      h().ctx.pg.pool.query("UPDATE dataset_versions SET label = 'x' WHERE id = $1", [version.dataset_version_id]),
    ).rejects.toThrow(/immutable/);
    await expect(
      h().ctx.pg.pool.query("UPDATE dataset_test_cases SET input = '1' WHERE version_id = $1", [
        version.dataset_version_id,
      ]),
    ).rejects.toThrow(/immutable/);
  });
});

describe('cases built from a trace', () => {
  it("copies the root's (or a named span's) input and output, from the same project only", async () => {
    const a = await projectWithKey(h(), 'alice');
    const b = await projectWithKey(h(), 'bob');
    const t = Date.now() - 60_000;
    await ingestSpans(h(), a.key.key, [
      {
        trace_id: 'tr-1',
        span_id: 'root',
        name: 'agent',
        start_time: iso(t),
        input: { question: 'why?', n: 9007199254740991 },
        output: 'because',
      },
      {
        trace_id: 'tr-1',
        span_id: 'llm',
        parent_span_id: 'root',
        name: 'chat',
        start_time: iso(t + 5),
        input: [{ role: 'user', content: 'why?' }],
        output: { text: 'because', tokens: 3 },
      },
      { trace_id: 'tr-2', span_id: 'only', name: 'plain', start_time: iso(t + 10), input: '{not json', output: '42' },
      { trace_id: 'tr-3', span_id: 'none', name: 'empty', start_time: iso(t + 20) },
    ]);
    await ingestSpans(h(), b.key.key, [
      { trace_id: 'tr-b', span_id: 'root', name: 'secret', start_time: iso(t), input: 'B only', output: 'B' },
    ]);
    const dataset = await createDataset(h(), a.key.key);
    const version = await createVersion(h(), a.key.key, dataset.id, [
      { source_trace_id: 'tr-1' },
      { source_trace_id: 'tr-1', source_span_id: 'llm', metadata: { from: 'llm' } },
      { source_trace_id: 'tr-2' },
      { source_trace_id: 'tr-3' },
      { source_trace_id: 'tr-1', expected: 'override' },
      { input: 'own', expected: 'own', source_trace_id: 'anything' },
    ]);
    expect(version.items.map(({ test_case_id: _, ...rest }) => rest)).toEqual([
      {
        input: { question: 'why?', n: 9007199254740991 },
        expected: 'because',
        metadata: null,
        source_trace_id: 'tr-1',
        source_span_id: 'root',
      },
      {
        input: [{ role: 'user', content: 'why?' }],
        expected: { text: 'because', tokens: 3 },
        metadata: { from: 'llm' },
        source_trace_id: 'tr-1',
        source_span_id: 'llm',
      },
      // Text that isn't a JSON object or array stays a string, even when it looks like a number.
      { input: '{not json', expected: '42', metadata: null, source_trace_id: 'tr-2', source_span_id: 'only' },
      { input: null, expected: null, metadata: null, source_trace_id: 'tr-3', source_span_id: 'none' },
      {
        input: { question: 'why?', n: 9007199254740991 },
        expected: 'override',
        metadata: null,
        source_trace_id: 'tr-1',
        source_span_id: 'root',
      },
      { input: 'own', expected: 'own', metadata: null, source_trace_id: 'anything', source_span_id: null },
    ]);
    const post = (token: string, cases: unknown[]) =>
      call(h().api, {
        method: 'POST',
        url: `${PUBLIC}/datasets/${dataset.id}/versions`,
        token,
        payload: { test_cases: cases },
      });
    expectDetail(
      await post(a.key.key, [{ source_trace_id: 'tr-b' }]),
      404,
      "test_cases[0]: source trace 'tr-b' not found in this project",
    );
    expectDetail(
      await post(a.key.key, [simpleCases(1)[0], { source_trace_id: 'tr-1', source_span_id: 'nope' }]),
      404,
      "test_cases[1]: source span 'nope' of trace 'tr-1' not found in this project",
    );
    expect(
      (await call(h().api, { method: 'GET', url: `${PUBLIC}/datasets/${dataset.id}`, token: a.key.key })).json()
        .version_count,
    ).toBe(1);
  });
});
