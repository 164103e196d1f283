import { beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { projectWithKey, publicGet, useHarness } from '../support/harness.js';
import { ingestSpans, iso } from '../support/ingest.js';

/**
 * Text search against docs/traces.md ("Text search", "Sessions"), the cases test/traces/text-search.test.ts
 * leaves out: the exact 422 entries of a bad `text_query`/`text_scope` on both lists, case in scripts
 * where lowering depends on context (Greek final sigma) and in Armenian, evaluation traces, a match in a later
 * span's error message, and the session list's paging and totals under a text search.
 */

const h = useHarness();
const get = publicGet(h);

const HOUR = 3_600_000;
const T0 = Math.floor(Date.now() / HOUR) * HOUR - 6 * HOUR;

type Span = Record<string, unknown>;
const span = (trace_id: string, span_id: string, at: number, more: Span = {}): Span => ({
  trace_id,
  span_id,
  name: 'turn',
  kind: 'llm',
  start_time: iso(T0 + at),
  end_time: iso(T0 + at + 1000),
  ...more,
});

type Item = { trace_id: string; text_match?: { span_id: string; field: string; snippet: string } };
const ids = (res: LightMyRequestResponse): string[] => {
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data.map((t: Item) => t.trace_id);
};

describe('text search: what the spec and docs say, checked', () => {
  let key: string;
  beforeAll(async () => {
    key = (await projectWithKey(h())).key.key;
    await ingestSpans(h(), key, [
      span('greek', 'g1', 0, { input: 'Πώς είναι ο καιρός σήμερα στην Αθήνα;' }),
      span('caps', 'c1', 1000, { output: 'ΠΡΟΣΟΧΗ: Ο ΚΑΙΡΟΣ ΑΛΛΑΖΕΙ' }),
      span('armenian', 'a1', 2000, { input: 'Բարեւ ԱՇԽԱՐՀ' }),
      span('eval', 'e1', 3000, { input: 'evaluation only marker platypus', evaluation_run_id: 'run-1' }),
      span('prod', 'p1', 4000, { input: 'production marker platypus' }),
      // The match is only in the third span's error message, after two spans without it.
      span('late', 'l1', 5000, { input: 'step one' }),
      span('late', 'l2', 5100, { parent_span_id: 'l1', output: 'step two' }),
      span('late', 'l3', 5200, {
        parent_span_id: 'l1',
        status: 'error',
        error_type: 'RateLimitError',
        error_message: 'HTTP 429: quota exhausted for org-42',
      }),
      // Lowering lengthens İ (U+0130) to two code points, so the match lies 1,000 code points further
      // into the lowered text than into the text as sent.
      span('dotted', 'd1', 6000, { output: `${'İ'.repeat(1000)} then the wombat appears` }),
    ]);
  });
  const find = (text_query: string, more: Record<string, string> = {}) => get(key, '/traces', { text_query, ...more });

  it('folds Greek case as the whole word lowers: a word-final capital sigma finds ς', async () => {
    expect(ids(await find('ΚΑΙΡΌΣ'))).toEqual(['greek']);
    expect(ids(await find('καιρός'))).toEqual(['greek']);
    expect(ids(await find('καιρος'))).toEqual(['caps']); // no accent folding: ό ≠ ο
    expect(ids(await find('ΑΘΉΝΑ'))).toEqual(['greek']);
    expect(ids(await find('"ο καιρός σήμερα"'))).toEqual(['greek']);
  });

  it('folds case in other cased scripts (Armenian)', async () => {
    expect(ids(await find('աշխարհ'))).toEqual(['armenian']);
    expect(ids(await find('ԲԱՐԵՒ'))).toEqual(['armenian']);
  });

  it('leaves evaluation traces out unless include_evaluations=true, and counts what it lists', async () => {
    const plain = await find('platypus');
    expect(ids(plain)).toEqual(['prod']);
    expect(plain.json().meta.total).toBe(1);
    const all = await find('platypus', { include_evaluations: 'true' });
    expect(ids(all)).toEqual(['prod', 'eval']);
    expect(all.json().meta.total).toBe(2);
  });

  it("finds a match in a later span's error message and says which span and field", async () => {
    const res = await find('"quota exhausted"');
    expect(ids(res)).toEqual(['late']);
    expect(res.json().data[0].text_match).toEqual({
      span_id: 'l3',
      field: 'error_message',
      snippet: 'HTTP 429: quota exhausted for org-42',
    });
    expect(ids(await find('quota', { text_scope: 'input' }))).toEqual([]);
    expect(ids(await find('quota', { text_scope: 'output' }))).toEqual([]);
    expect(ids(await find('QUOTA', { text_scope: 'error' }))).toEqual(['late']);
    // Words in different spans of the trace, different fields.
    expect(ids(await find('one two 429'))).toEqual(['late']);
    // The error type is not the error message.
    expect(ids(await find('RateLimitError'))).toEqual([]);
  });

  it('cuts the snippet around the match even where lowering lengthens the text before it', async () => {
    const res = await find('WOMBAT');
    expect(ids(res)).toEqual(['dotted']);
    const match = res.json().data[0].text_match;
    expect(match.field).toBe('output');
    expect(match.snippet).toContain('then the wombat appears');
    expect(match.snippet.length).toBeLessThanOrEqual(300);
  });

  it('answers text_scope=all like no text_scope', async () => {
    expect(ids(await find('step', { text_scope: 'all' }))).toEqual(ids(await find('step')));
  });

  for (const path of ['/traces', '/sessions']) {
    it(`refuses a bad text_query or text_scope on ${path} with 422 entries naming the parameter`, async () => {
      const entry = async (query: Record<string, string>) => {
        const res = await get(key, path, query);
        expect(res.statusCode, res.body).toBe(422);
        return res.json().detail[0];
      };
      expect(await entry({ text_query: '' })).toMatchObject({
        loc: ['query', 'text_query'],
        type: 'string_too_short',
        msg: 'String should have at least 1 character',
      });
      // Blank is empty after trimming.
      expect(await entry({ text_query: ' \t ' })).toMatchObject({
        loc: ['query', 'text_query'],
        type: 'string_too_short',
      });
      expect(await entry({ text_query: 'é'.repeat(513) })).toMatchObject({
        loc: ['query', 'text_query'],
        type: 'string_too_long',
        msg: 'String should have at most 512 characters',
        ctx: { max_length: 512 },
      });
      expect(await entry({ text_query: 'x', text_scope: 'metadata' })).toMatchObject({
        loc: ['query', 'text_scope'],
        type: 'enum',
        msg: "Input should be 'all', 'input', 'output', 'error'",
      });
      // 512 characters after trimming are accepted, whatever surrounds them.
      const ok = await get(key, path, { text_query: `  ${'é'.repeat(512)}  ` });
      expect(ok.statusCode, ok.body).toBe(200);
      expect(ok.json().data).toEqual([]);
    });
  }
});

describe('text search: the session list', () => {
  let key: string;
  beforeAll(async () => {
    key = (await projectWithKey(h())).key.key;
    const turns: Span[] = [];
    // Five sessions of two traces; the word is in one trace of sessions 1, 3 and 5 only.
    for (let s = 1; s <= 5; s++) {
      for (let t = 0; t < 2; t++) {
        const at = (s * 10 + t) * 60_000;
        turns.push(
          span(`s${s}-t${t}`, `s${s}-t${t}-a`, at, {
            session_id: `sess-${s}`,
            user_id: `user-${s}`,
            input: t === 1 && s % 2 === 1 ? 'ما هو الطقس غدا في دبي' : 'hello',
            cost: 0.25,
            input_tokens: 100,
            output_tokens: 10,
            metadata: { tier: s === 5 ? 'gold' : 'basic' },
          }),
          span(`s${s}-t${t}`, `s${s}-t${t}-b`, at + 500, {
            parent_span_id: `s${s}-t${t}-a`,
            kind: 'tool',
            status: s === 3 ? 'error' : 'ok',
            error_message: s === 3 ? 'tool failed' : undefined,
            cost: 0.05,
          }),
        );
      }
    }
    await ingestSpans(h(), key, turns);
  });
  const sessions = async (query: Record<string, string>) => {
    const res = await get(key, '/sessions', query);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as {
      data: Record<string, unknown>[];
      meta: { page: number; limit: number; total: number };
    };
  };

  it('keeps the sessions one of whose traces holds the text, pages them, and counts them in meta.total', async () => {
    const all = await sessions({ text_query: 'الطقس' });
    expect(all.data.map((s) => s.session_id)).toEqual(['sess-5', 'sess-3', 'sess-1']);
    expect(all.meta).toEqual({ page: 0, limit: 50, total: 3 });
    const second = await sessions({ text_query: 'الطقس', limit: '2', page: '1' });
    expect(second.data.map((s) => s.session_id)).toEqual(['sess-1']);
    expect(second.meta).toEqual({ page: 1, limit: 2, total: 3 });
    expect((await sessions({ text_query: 'الطقس', text_scope: 'output' })).meta.total).toBe(0);
  });

  it('answers per-session totals over all the session traces, the matching one or not', async () => {
    const { data } = await sessions({
      text_query: '"الطقس غدا"',
      filters: '[{"field":"errors","op":"gte","value":1}]',
    });
    expect(data).toHaveLength(1);
    expect(data[0]).toMatchObject({
      session_id: 'sess-3',
      user_id: 'user-3',
      trace_count: 2,
      total_input_tokens: 200,
      total_output_tokens: 20,
      error_count: 2,
      duration_ms: 61_500,
    });
    expect(data[0]!.total_cost).toBeCloseTo(0.6, 9);
    expect(Date.parse(data[0]!.first_trace_time as string)).toBe(T0 + 30 * 60_000);
    expect(Date.parse(data[0]!.last_trace_time as string)).toBe(T0 + 31 * 60_000);
    expect('text_match' in data[0]!).toBe(false);
  });

  it('filters sessions by metadata, alone and with the text', async () => {
    const gold = '[{"field":"metadata","op":"eq","key":"tier","value":"gold"}]';
    expect((await sessions({ filters: gold })).data.map((s) => s.session_id)).toEqual(['sess-5']);
    expect((await sessions({ filters: gold, text_query: 'دبي' })).data.map((s) => s.session_id)).toEqual(['sess-5']);
    const basic = '[{"field":"metadata","op":"contains","key":"tier","value":"asi"}]';
    expect((await sessions({ filters: basic, text_query: 'دبي' })).data.map((s) => s.session_id)).toEqual([
      'sess-3',
      'sess-1',
    ]);
    const bad = await get(key, '/sessions', { filters: '[{"field":"metadata","op":"eq","value":"gold"}]' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().detail).toMatch(/^invalid filters parameter:/);
  });
});
