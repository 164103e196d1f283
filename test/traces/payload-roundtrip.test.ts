import { beforeAll, describe, expect, it } from 'vitest';
import { call, PUBLIC, projectWithKey, useHarness } from '../support/harness.js';
import { ingestSpans } from '../support/ingest.js';
import { createDataset, createVersion, getVersion } from '../support/datasets.js';
import { corpusSpans } from '../../bench/corpus.js';
import type { SpanInput } from '../../src/traces/span-input.js';

/**
 * Input and output come back exactly as the producer sent them (issue 22: however spans are stored,
 * compression included), on the realistic corpus (bench/corpus.ts: agent traces whose LLM calls carry
 * the conversation so far, ten languages and scripts, JSON tool results, strings and objects):
 * ingested through the API, then read through the trace detail, the trace list's root fields, public
 * SQL, and a dataset version copied from the spans. "Exactly" is docs/spans.md's rule: a string as
 * it is, anything else as its JSON text, compared as strings (so byte for byte in UTF-8).
 */

const h = useHarness();
const SPANS = 1500;
const now = Date.now();
const spans = corpusSpans('realistic', { spans: SPANS, startMs: now - 3_600_000, endMs: now - 60_000, seed: 22 });
/** What the store must answer for a span's input or output. */
const text = (value: unknown): string | null =>
  value === undefined || value === null ? null : typeof value === 'string' ? value : JSON.stringify(value);
const sent = new Map(spans.map((s) => [`${s.trace_id}/${s.span_id}`, s]));
const traceIds = [...new Set(spans.map((s) => s.trace_id))];
let key: string;

beforeAll(async () => {
  ({
    key: { key },
  } = await projectWithKey(h(), 'roundtrip'));
  await ingestSpans(h(), key, spans);
}, 120_000);

/** Every span's input and output as answered, beside what was sent. */
function compare(answered: { trace_id: string; span_id: string; input: unknown; output: unknown }[]) {
  const mismatches: string[] = [];
  for (const a of answered) {
    const s = sent.get(`${a.trace_id}/${a.span_id}`);
    if (!s) {
      mismatches.push(`${a.trace_id}/${a.span_id}: not sent`);
      continue;
    }
    if (a.input !== text(s.input)) mismatches.push(`${a.trace_id}/${a.span_id}: input differs`);
    if (a.output !== text(s.output)) mismatches.push(`${a.trace_id}/${a.span_id}: output differs`);
  }
  return mismatches;
}

describe('realistic payloads round-trip byte for byte', () => {
  it('is a corpus worth the name: heavy, multilingual, objects and strings', () => {
    const llm = spans.filter((s) => s.kind === 'llm').map((s) => Buffer.byteLength(text(s.input)!));
    expect(Math.max(...llm)).toBeGreaterThan(20_000);
    const all = spans.map((s) => text(s.input) ?? '').join('');
    const scripts = ['Han', 'Hiragana', 'Cyrillic', 'Arabic', 'Devanagari', 'Hangul', 'Latin'];
    const present = scripts.filter((script) => new RegExp(`\\p{Script=${script}}`, 'u').test(all));
    expect(present.length, present.join(', ')).toBeGreaterThanOrEqual(5);
    expect(spans.some((s) => typeof s.input === 'string')).toBe(true);
    expect(spans.some((s) => typeof s.input === 'object' && s.input !== null)).toBe(true);
  });

  it('through the trace detail', async () => {
    const answered: { trace_id: string; span_id: string; input: unknown; output: unknown }[] = [];
    for (const traceId of traceIds) {
      const res = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces/${traceId}`, token: key });
      expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
      for (const span of res.json().spans as { span_id: string; input: unknown; output: unknown }[])
        answered.push({ trace_id: traceId, ...span });
    }
    expect(answered).toHaveLength(SPANS);
    expect(compare(answered)).toEqual([]);
  });

  it('through the trace list (the root span of each trace)', async () => {
    const roots = new Map(spans.filter((s) => !s.parent_span_id).map((s) => [s.trace_id, s]));
    const seen: { trace_id: string; span_id: string; input: unknown; output: unknown }[] = [];
    for (let page = 0; ; page++) {
      const query = { limit: '200', page: String(page), start_after: new Date(now - 7_200_000).toISOString() };
      const res = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces`, token: key, query });
      expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
      const body = res.json() as { data: { trace_id: string; input: unknown; output: unknown }[] };
      for (const t of body.data) {
        const root = roots.get(t.trace_id);
        if (root) seen.push({ trace_id: t.trace_id, span_id: root.span_id, input: t.input, output: t.output });
      }
      if (body.data.length < 200) break;
    }
    // The last trace may have been cut before its root's end: every root sent is listed.
    expect(seen).toHaveLength(roots.size);
    expect(compare(seen)).toEqual([]);
  });

  it('through public SQL (spans.input, spans.output)', async () => {
    const answered: { trace_id: string; span_id: string; input: unknown; output: unknown }[] = [];
    for (let i = 0; i < traceIds.length; i += 10) {
      const ids = traceIds
        .slice(i, i + 10)
        .map((id) => `'${id}'`)
        .join(', ');
      const res = await call(h().api, {
        method: 'POST',
        url: `${PUBLIC}/sql`,
        token: key,
        payload: { query: `SELECT trace_id, span_id, input, output FROM spans WHERE trace_id IN (${ids})` },
      });
      expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
      const body = res.json() as { rows: [string, string, unknown, unknown][]; truncated: boolean };
      expect(body.truncated).toBe(false);
      for (const [trace_id, span_id, input, output] of body.rows) answered.push({ trace_id, span_id, input, output });
    }
    expect(answered).toHaveLength(SPANS);
    expect(compare(answered)).toEqual([]);
  });

  it('through a dataset version copied from the spans', async () => {
    const picked: SpanInput[] = spans.filter((s, i) => i % 5 === 0).slice(0, 250);
    const dataset = await createDataset(h(), key, 'from-traces');
    const version = await createVersion(
      h(),
      key,
      dataset.id,
      picked.map((s) => ({ source_trace_id: s.trace_id, source_span_id: s.span_id })),
    );
    const items: { source_trace_id: string; source_span_id: string; input: unknown; expected: unknown }[] = [];
    let cursor: string | null = null;
    do {
      const res = await getVersion(
        h(),
        key,
        version.dataset_version_id,
        cursor ? { cursor, limit: '100' } : { limit: '100' },
      );
      expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
      const body = res.json() as { items: typeof items; next_cursor: string | null };
      items.push(...body.items);
      cursor = body.next_cursor;
    } while (cursor);
    expect(items).toHaveLength(picked.length);
    // docs/datasets.md: text that is a JSON object or array comes back as that value (digits kept, keys
    // in the store's order), other text as a string; so the same value, keys compared in any order.
    const canonical = (v: unknown): string =>
      v !== null && typeof v === 'object'
        ? Array.isArray(v)
          ? `[${v.map(canonical).join(',')}]`
          : `{${Object.keys(v)
              .sort()
              .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
              .join(',')}}`
        : JSON.stringify(v);
    const asCopied = (v: unknown) => {
      const t = text(v);
      if (t === null) return 'null';
      return canonical(/^\s*[[{]/.test(t) ? JSON.parse(t) : t);
    };
    const mismatches = items.flatMap((c) => {
      const s = sent.get(`${c.source_trace_id}/${c.source_span_id}`)!;
      const out: string[] = [];
      if (canonical(c.input) !== asCopied(s.input)) out.push(`${c.source_span_id}: input differs`);
      if (canonical(c.expected) !== asCopied(s.output)) out.push(`${c.source_span_id}: output differs`);
      return out;
    });
    expect(mismatches).toEqual([]);
  });
});
