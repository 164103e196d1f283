import { beforeAll, describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { ingestSpans, iso } from '../support/ingest.js';
import { runExport } from '../../src/exports/runner.js';

/**
 * Masking reaches everywhere (issue 35; quality.md §6): with every detector on, a value of each kind
 * sent in the input fields of each producer convention (native, the Vercel AI SDK, OpenInference,
 * OpenLLMetry, OTel GenAI, the Langfuse SDK over OTLP) is stored masked, so it is found by no read:
 * the trace detail, the list, text search, public SQL, a dataset version copied from the trace, and
 * an export of the spans.
 */
const h = useHarness();
let o: Awaited<ReturnType<typeof projectWithKey>>;

/** One value of each detector's kind, and a piece of it that must never be read back. */
const VALUES: [string, string, string][] = [
  ['email', 'ann.lee@example.com', 'ann.lee'],
  ['phone', '+44 20 7946 0958', '7946 0958'],
  ['payment_card', '4111 1111 1111 1111', '4111 1111'],
  ['iban', 'DE89 3704 0044 0532 0130 00', 'DE89 3704'],
  ['ip', '192.168.10.254', '192.168.10.254'],
  ['secret', 'sk-proj-abcdefghijklmnopqrstuvwx1234', 'abcdefghijklmnopqrstuvwx1234'],
  [
    'jwt',
    'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
    'dozjgNryP4J3jVmNHl0w5N',
  ],
];
const TEXT = `reach me at ${VALUES.map(([, v]) => v).join(' or ')} please`;
const PIECES = VALUES.map(([, , piece]) => piece);
const TOKENS = ['[EMAIL]', '[PHONE]', '[CARD]', '[IBAN]', '[IP]', '[SECRET]', '[JWT]'];

const at = Date.now() - 120_000;
const nanos = (ms: number) => String(BigInt(ms) * 1_000_000n);
const str = (key: string, value: string) => ({ key, value: { stringValue: value } });
const messages = JSON.stringify([{ role: 'user', content: TEXT }]);

/** Each convention's input (and output) attributes, as its library sends them. */
const CONVENTIONS: [string, ReturnType<typeof str>[]][] = [
  [
    'vercel-ai',
    [
      str('ai.operationId', 'ai.generateText.doGenerate'),
      str('ai.model.id', 'gpt-4o-mini'),
      str('ai.prompt.messages', messages),
      str('ai.response.text', TEXT),
    ],
  ],
  [
    'openinference',
    [
      str('openinference.span.kind', 'LLM'),
      str('input.value', TEXT),
      str('llm.input_messages.0.message.role', 'user'),
      str('llm.input_messages.0.message.content', TEXT),
      str('output.value', TEXT),
    ],
  ],
  [
    'openllmetry',
    [
      str('gen_ai.system', 'openai'),
      str('gen_ai.prompt.0.role', 'user'),
      str('gen_ai.prompt.0.content', TEXT),
      str('gen_ai.completion.0.content', TEXT),
      str('traceloop.entity.input', TEXT),
    ],
  ],
  [
    'genai',
    [
      str('gen_ai.operation.name', 'chat'),
      str('gen_ai.input.messages', messages),
      str('gen_ai.output.messages', JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: TEXT }] }])),
    ],
  ],
  [
    'langfuse',
    [
      str('langfuse.observation.type', 'generation'),
      str('langfuse.observation.input', messages),
      str('langfuse.observation.output', TEXT),
    ],
  ],
];
const traceIdOf = (n: number) => `${(n + 1).toString(16).padStart(2, '0')}f7651916cd43dd8448eb211c80319c`;

beforeAll(async () => {
  o = await projectWithKey(h(), 'masking-reach');
  const put = await call(h().api, {
    method: 'PUT',
    url: `${PUBLIC}/projects/${o.project.id}/masking`,
    token: o.owner.token,
    payload: { detectors: VALUES.map(([d]) => d), patterns: [], action: 'mask' },
  });
  expect(put.statusCode, put.body).toBe(200);
  await ingestSpans(h(), o.key.key, [
    {
      trace_id: 'reach-native',
      span_id: 'root',
      name: 'chat',
      kind: 'llm',
      start_time: iso(at),
      end_time: iso(at + 10),
      input: { messages: [{ role: 'user', content: TEXT }] },
      output: TEXT,
      metadata: { contact: TEXT },
    },
  ]);
  const otlp = await call(h().api, {
    method: 'POST',
    url: `${PUBLIC}/otel/v1/traces`,
    token: o.key.key,
    headers: { 'content-type': 'application/json' },
    payload: {
      resourceSpans: CONVENTIONS.map(([name, attributes], n) => ({
        resource: { attributes: [str('service.name', name)] },
        scopeSpans: [
          {
            spans: [
              {
                traceId: traceIdOf(n),
                spanId: 'b7ad6b7169203331',
                name: `${name}-call`,
                startTimeUnixNano: nanos(at),
                endTimeUnixNano: nanos(at + 5),
                attributes,
              },
            ],
          },
        ],
      })),
    },
  });
  expect(otlp.statusCode, otlp.body).toBe(200);
});

const neverRead = (body: string) => {
  for (const piece of PIECES) expect(body).not.toContain(piece);
};

describe('masking with every detector on', () => {
  it("stores each convention's input masked: nothing of the values in the trace detail", async () => {
    for (const traceId of ['reach-native', ...CONVENTIONS.map((_, n) => traceIdOf(n))]) {
      const detail = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces/${traceId}`, token: o.key.key });
      expect(detail.statusCode, traceId).toBe(200);
      neverRead(detail.body);
      // The input was read as this convention's input, and masked there.
      const input = String(detail.json().spans[0].input ?? '');
      for (const token of TOKENS) expect(input, `${traceId} input`).toContain(token);
    }
  });

  it('leaves nothing of them to the list, text search or SQL', async () => {
    const list = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces`, token: o.key.key });
    expect(list.statusCode).toBe(200);
    expect(list.json().data.length).toBe(CONVENTIONS.length + 1);
    neverRead(list.body);
    for (const term of ['ann.lee', '7946', 'DE89']) {
      const search = await call(h().api, {
        method: 'GET',
        url: `${PUBLIC}/traces`,
        token: o.key.key,
        query: { text_query: term },
      });
      expect(search.statusCode).toBe(200);
      expect(search.json().data, term).toEqual([]);
    }
    const sql = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/sql`,
      token: o.key.key,
      payload: { query: 'SELECT input, output, error_message, toString(metadata) AS m FROM spans' },
    });
    expect(sql.statusCode, sql.body).toBe(200);
    expect(sql.json().rows.length).toBe(CONVENTIONS.length + 1);
    neverRead(sql.body);
  });

  it('leaves nothing of them to a dataset version copied from the trace', async () => {
    const dataset = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/datasets`,
      token: o.key.key,
      payload: { name: 'from traces' },
    });
    expect(dataset.statusCode, dataset.body).toBe(201);
    const version = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/datasets/${dataset.json().id}/versions`,
      token: o.key.key,
      payload: { test_cases: [{ source_trace_id: 'reach-native' }, { source_trace_id: traceIdOf(0) }] },
    });
    expect(version.statusCode, version.body).toBe(201);
    const read = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/dataset-versions/${version.json().dataset_version_id}`,
      token: o.key.key,
    });
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json().items).toHaveLength(2);
    neverRead(read.body);
    expect(read.body).toContain('[EMAIL]');
  });

  it('leaves nothing of them to an export of the spans', async () => {
    const started = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/exports`,
      token: o.key.key,
      payload: {
        kind: 'spans',
        format: 'jsonl',
        start_time: iso(at - 3_600_000),
        end_time: iso(at + 3_600_000),
      },
    });
    expect(started.statusCode, started.body).toBe(202);
    const id = started.json().export_id;
    expect(await runExport(h().ctx, id)).toBe('completed');
    const file = await call(h().api, { method: 'GET', url: `${PUBLIC}/exports/${id}/download`, token: o.key.key });
    expect(file.statusCode).toBe(200);
    expect(file.body.trim().split('\n')).toHaveLength(CONVENTIONS.length + 1);
    neverRead(file.body);
    expect(file.body).toContain('[EMAIL]');
  });
});
