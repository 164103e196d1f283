import { describe, expect, it } from 'vitest';
import { CONVENTION_ORDER, FIELDS, PRECEDENCE, SOURCES } from '../../../src/traces/conventions/precedence.js';
import { MAX_OTLP_METADATA_KEYS } from '../../../src/traces/otlp.js';
import { MAX_EVENT_ATTRIBUTES, MAX_SPAN_EVENTS, MAX_SPAN_LINKS } from '../../../src/traces/span-input.js';
import { mapOne, normalize, START_NANOS } from './support.js';

/** The precedence between conventions, and what the mapping keeps bounded (docs/integrations/mapping.md). */

describe('the convention table', () => {
  it('lists conventions in one order for every field, each attribute once', () => {
    for (const field of FIELDS) {
      const ranks = PRECEDENCE[field].map((r) => CONVENTION_ORDER[r.from]);
      expect(ranks, field).toEqual([...ranks].sort((a, b) => a - b));
    }
    const rows = FIELDS.reduce((n, f) => n + PRECEDENCE[f].length, 0);
    expect(SOURCES.size).toBe(rows);
  });

  it('takes each field from the highest convention present, and keeps the losers that differ in attributes', () => {
    const all = {
      'langfuse.observation.model.name': 'lf',
      'llm.model_name': 'oi',
      'gen_ai.request.model': 'genai',
      'ai.model.id': 'vercel',
    };
    expect(mapOne(all).model_name).toBe('lf');
    const { 'langfuse.observation.model.name': _lf, ...noLangfuse } = all;
    const span = mapOne(noLangfuse);
    expect(span.model_name).toBe('oi');
    expect(span.metadata).toEqual({});
    expect(span.attributes).toEqual({ 'gen_ai.request.model': 'genai', 'ai.model.id': 'vercel' });
    expect(mapOne({ 'gen_ai.request.model': 'same', 'ai.model.id': 'same' }).attributes).toBeUndefined();

    const users = mapOne({
      'ai.telemetry.metadata.userId': 'v',
      'traceloop.association.properties.userId': 't',
      'user.id': 'o',
      'langfuse.user.id': 'l',
    });
    expect(users.user_id).toBe('l');
    // Losing ids that differ stay: the user's metadata under its plain key (the first lifted `userId`
    // in arrival order, the second counted as dropped), the convention's `user.id` in attributes.
    expect(users.metadata).toEqual({ userId: 'v' });
    expect(users.attributes).toEqual({ 'user.id': 'o' });
    expect(users.dropped_attributes_count).toBe(1);

    expect(
      mapOne({
        'sightline.span.kind': 'guardrail',
        'langfuse.observation.type': 'tool',
        'gen_ai.operation.name': 'chat',
      }).kind,
    ).toBe('guardrail');
    expect(
      mapOne({
        'sightline.cost': 1,
        'langfuse.observation.cost_details': '{"total":2}',
        'llm.cost.total': 3,
        'gen_ai.usage.cost': 4,
      }).cost,
    ).toBe(1);
    expect(mapOne({ 'llm.cost.total': 3, 'gen_ai.usage.cost': 4 }).cost).toBe(3);
  });

  it('lets usage fields come from different conventions, parts never above their totals', () => {
    const span = mapOne({
      'gen_ai.usage.input_tokens': 50,
      'llm.token_count.prompt_details.cache_read': 20,
      'ai.usage.reasoningTokens': 5,
      'gen_ai.usage.output_tokens': 10,
    });
    expect(span).toMatchObject({ input_tokens: 50, cache_read_tokens: 20, reasoning_tokens: 5, output_tokens: 10 });
    expect(mapOne({ 'gen_ai.usage.cache_read.input_tokens': 30 })).toMatchObject({
      input_tokens: 30,
      cache_read_tokens: 30,
    });
    expect(mapOne({ 'gen_ai.usage.output_tokens': 2, 'gen_ai.usage.reasoning_tokens': 8 })).toMatchObject({
      output_tokens: 10,
      reasoning_tokens: 8,
    });
  });
});

describe('environment, resource and metadata', () => {
  it('reads the environment from the span, then the resource, and keeps the resource apart', () => {
    const resource = {
      'service.name': 'svc',
      'deployment.environment.name': 'prod',
      'host.name': 'h1',
      'process.pid': 42,
    };
    const span = mapOne({ 'langfuse.environment': 'canary' }, {}, resource);
    expect(span.environment).toBe('canary');
    expect(span.resource).toEqual({
      'service.name': 'svc',
      'deployment.environment.name': 'prod',
      'host.name': 'h1',
      'process.pid': '42',
      'otel.scope.name': 'test',
    });
    expect(span.metadata).toEqual({});
    expect(mapOne({}, {}, resource).environment).toBe('prod');
  });

  it("keeps the user's own attributes as metadata and the conventions' as attributes (issue 37)", () => {
    const span = mapOne({
      tenant: 'acme',
      'app.feature': 'booking',
      'ai.toolCall.id': 'call-1',
      'http.request.method': 'POST',
      'operation.name': 'ai.toolCall',
      'langfuse.release': 'v1.4.0',
      'langfuse.version': 'flow-2',
    });
    expect(span.metadata).toEqual({ release: 'v1.4.0', version: 'flow-2', tenant: 'acme', 'app.feature': 'booking' });
    expect(span.attributes).toEqual({
      'ai.toolCall.id': 'call-1',
      'http.request.method': 'POST',
      'operation.name': 'ai.toolCall',
    });
  });

  it('puts lifted user metadata first so the cap never drops it, and counts what the cap drops', () => {
    const attrs: Record<string, string> = {};
    for (let i = 0; i < 150; i++) attrs[`k${i}`] = 'v';
    attrs['ai.telemetry.metadata.tenant'] = 'acme';
    const span = mapOne(attrs);
    expect(Object.keys(span.metadata!)).toHaveLength(MAX_OTLP_METADATA_KEYS);
    expect(span.metadata!.tenant).toBe('acme');
    expect(span.dropped_attributes_count).toBe(151 - MAX_OTLP_METADATA_KEYS);
  });
});

describe('events and links', () => {
  const event = (i: number, attrs = 1) => ({
    name: `e${i}`,
    timeUnixNano: String(START_NANOS + BigInt(i) * 1_000_000n),
    attributes: Array.from({ length: attrs }, (_, j) => ({ key: `a${j}`, value: { intValue: j } })),
  });

  it('keeps events and links bounded and counts the rest with what the producer dropped', () => {
    const span = mapOne(
      {},
      {
        events: [
          event(0, MAX_EVENT_ATTRIBUTES + 3),
          ...Array.from({ length: MAX_SPAN_EVENTS + 4 }, (_, i) => event(i + 1)),
        ],
        links: [
          {
            traceId: '0af7651916cd43dd8448eb211c80319d',
            spanId: '00f067aa0ba902b7',
            attributes: [{ key: 'rel', value: { stringValue: 'batch' } }],
            droppedAttributesCount: 2,
          },
          { traceId: '', spanId: '00f067aa0ba902b8' },
        ],
        droppedAttributesCount: 7,
        droppedEventsCount: 1,
        droppedLinksCount: '2',
      },
    );
    expect(span.events).toHaveLength(MAX_SPAN_EVENTS);
    expect(Object.keys(span.events![0]!.attributes!)).toHaveLength(MAX_EVENT_ATTRIBUTES);
    expect(span.events![1]).toEqual({ name: 'e1', time: '2023-11-14T22:13:20.001Z', attributes: { a0: '0' } });
    expect(span.links).toEqual([
      { trace_id: '0af7651916cd43dd8448eb211c80319d', span_id: '00f067aa0ba902b7', attributes: { rel: 'batch' } },
    ]);
    // 7 + 1 + 2 from the producer, 3 event attributes, 5 events, 2 link attributes, 1 link without ids.
    expect(span.dropped_attributes_count).toBe(7 + 1 + 2 + 3 + 5 + 2 + 1);
    const [normalized] = normalize([span]);
    expect(normalized!.events).toHaveLength(MAX_SPAN_EVENTS);
    expect(normalized!.links).toHaveLength(1);
    expect(MAX_SPAN_LINKS).toBeGreaterThan(1);
  });

  it('leaves events, links, resource and the dropped count out of a plain span', () => {
    const span = mapOne({ 'gen_ai.operation.name': 'chat' });
    expect(span).not.toHaveProperty('events');
    expect(span).not.toHaveProperty('links');
    expect(span).not.toHaveProperty('dropped_attributes_count');
    expect(span.resource).toEqual({ 'otel.scope.name': 'test' });
  });
});
