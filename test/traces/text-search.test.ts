import { beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { projectWithKey, publicGet, useHarness } from '../support/harness.js';
import { parseTextQuery, snippetOf } from '../../src/traces/text-search.js';
import { ingestSpans, iso } from '../support/ingest.js';
import { catchUpTextIndex } from '../../src/traces/text-index.js';

/**
 * Full-text search (`text_query`, `text_scope`, `text_match`; docs/traces.md "Text search") on real
 * stores: payloads in many scripts ingested through the API, found by a word or a phrase in their
 * script, and near-misses not found; before the text indexer ran (every span scanned) and after.
 */

const h = useHarness();

const HOUR = 3_600_000;
const MIN = 60_000;
const H = Math.floor(Date.now() / HOUR) * HOUR;

type Span = Record<string, unknown>;

let n = 0;
/** A one-span trace, one minute after the previous, so the newest-first order is the fixture's reversed. */
function trace(id: string, fields: Span, extra: Span[] = []): Span[] {
  const start = H - 5 * HOUR + n++ * MIN;
  const root = {
    trace_id: id,
    span_id: `${id}-root`,
    name: 'chat',
    kind: 'llm',
    start_time: iso(start),
    end_time: iso(start + 1000),
    ...fields,
  };
  return [
    root,
    ...extra.map((s, i) => ({
      trace_id: id,
      span_id: `${id}-c${i}`,
      parent_span_id: `${id}-root`,
      name: 'step',
      kind: 'tool',
      start_time: iso(start + 10 + i),
      end_time: iso(start + 500),
      ...s,
    })),
  ];
}

const STACK =
  'Traceback (most recent call last):\n  File "agent/tools.py", line 42, in run\n    return get_weather(city)\nKeyError: \'city\'';

const FIXTURE: Span[] = [
  ...trace('t-latin', {
    input: 'Le café était très bon à Montréal, près de l’École.',
    output: 'Gracias, señor Muñoz; Straße frei.',
  }),
  ...trace('t-cyrillic', { input: 'Здравствуйте! Где мой ЗАКАЗ номер 42?', output: 'Ваш заказ отправлен сегодня.' }),
  ...trace('t-greek', { input: 'Η ΣΟΦΊΑ είναι δύναμη', output: 'Καλημέρα κόσμε' }),
  ...trace('t-chinese', { input: '请帮我查询北京明天的天气预报', output: '北京明天晴，最高气温二十五度' }),
  ...trace('t-japanese', { input: '東京の天気を教えてください', output: 'カタカナとひらがなの答えです' }),
  ...trace('t-korean', { input: '서울의 날씨는 어떻습니까?', output: '오늘 서울은 맑습니다' }),
  ...trace('t-arabic', { input: 'ما هو الطقس في القاهرة اليوم؟', output: 'الجو مشمس في القاهرة' }),
  ...trace('t-hebrew', { input: 'מה מזג האוויר בירושלים היום?', output: 'שמשי בירושלים' }),
  ...trace('t-thai', { input: 'สภาพอากาศในกรุงเทพวันนี้เป็นอย่างไร', output: 'วันนี้ฝนตก' }),
  ...trace('t-hindi', { input: 'दिल्ली में आज मौसम कैसा है?', output: 'आज धूप है' }),
  ...trace('t-emoji', { input: 'I love 🍕 and 👩‍💻 late nights 🎉', output: 'Same here 🙌' }),
  ...trace(
    't-code',
    { input: { tool: 'get_weather', args: { city: 'Paris' } }, output: 'calling get_weather(city="Paris")' },
    [{ status: 'error', error_type: 'KeyError', error_message: STACK }],
  ),
  ...trace('t-mixed', { input: 'Customer wrote: 我的订单 #123 was late, спасибо 🙏 شكرا' }),
  // Near-misses: words present but not as the phrase; a word only in metadata; one word of two.
  ...trace('t-order', { input: 'the blue whale sings a long song', metadata: { note: 'zanzibar' } }),
  // Two words in two different spans of one trace: both required, any span.
  ...trace('t-split', { input: 'alpha quokka' }, [{ output: 'omega wombat' }]),
  ...trace('t-half', { input: 'only quokka here' }),
];

const get = publicGet(h);

/** No lone surrogate: a string cut in the middle of a pair would have one. */
const wellFormed = (s: string) => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);

type Item = { trace_id: string; text_match?: { span_id: string; field: string; snippet: string } };
const ids = (res: LightMyRequestResponse): string[] => {
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data.map((t: Item) => t.trace_id);
};

describe('text search: terms and snippets (pure)', () => {
  it('splits words, keeps quoted phrases whole, drops repeats and empty quotes', () => {
    expect(parseTextQuery('  get_weather(  "blue whale" 天气 get_weather( "" ')).toEqual([
      'get_weather(',
      'blue whale',
      '天气',
    ]);
    expect(parseTextQuery('"unclosed phrase here')).toEqual(['unclosed phrase here']);
    expect(parseTextQuery('""  " "')).toEqual([]);
    expect(parseTextQuery('"\\"city\\": 1" " whale"')).toEqual(['"city": 1', ' whale']);
  });

  it('cuts snippets between graphemes, never inside a surrogate pair, at most 300 UTF-16 units', () => {
    const around = '😀'.repeat(400) + 'MATCH' + '👩‍💻'.repeat(200);
    const offset = [...'😀'.repeat(400)].length;
    const s = snippetOf(around, offset);
    expect(s.length).toBeLessThanOrEqual(300);
    expect(s).toContain('MATCH');
    expect(wellFormed(s)).toBe(true);
    expect(s.startsWith('😀')).toBe(true);
    expect(s.replace('MATCH', '').replaceAll('😀', '').replaceAll('👩‍💻', '')).toBe('');
    expect(snippetOf('short text', 6)).toBe('short text');
  });
});

describe('text search: GET /traces', () => {
  let token: string;
  beforeAll(async () => {
    token = (await projectWithKey(h())).key.key;
    await ingestSpans(h(), token, FIXTURE);
  });
  const find = (text_query: string, more: Record<string, string> = {}) =>
    get(token, '/traces', { text_query, ...more });

  const cases: [string, string, string[]][] = [
    ['accented Latin, other case', 'ÉCOLE', ['t-latin']],
    ['accented Latin phrase', '"café était"', ['t-latin']],
    ['ß', 'straße', ['t-latin']],
    ['Cyrillic, case folded', 'заказ', ['t-cyrillic']],
    ['Cyrillic upper', 'ЗДРАВСТВУЙТЕ', ['t-cyrillic']],
    ['Greek, case folded', 'σοφία', ['t-greek']],
    ['Chinese word inside a sentence', '天气', ['t-chinese']],
    ['Chinese phrase', '"北京明天"', ['t-chinese']],
    ['Japanese kanji', '東京', ['t-japanese']],
    ['Japanese katakana', 'カタカナ', ['t-japanese']],
    ['Japanese hiragana', 'ひらがな', ['t-japanese']],
    ['Korean', '서울', ['t-korean']],
    ['Arabic', 'القاهرة', ['t-arabic']],
    ['Hebrew', 'בירושלים', ['t-hebrew']],
    ['Thai, no spaces between words', 'กรุงเทพ', ['t-thai']],
    ['Hindi', 'मौसम', ['t-hindi']],
    ['emoji', '🍕', ['t-emoji']],
    ['emoji ZWJ sequence', '👩‍💻', ['t-emoji']],
    ['code identifier with paren', 'get_weather(', ['t-code']],
    ['JSON fragment', '"\\"city\\":\\"Paris\\""', ['t-code']],
    ['stack-trace line', '"line 42, in run"', ['t-code']],
    ['mixed: Chinese and Cyrillic words of one text', '订单 спасибо', ['t-mixed']],
    ['mixed: emoji and Arabic', '🙏 شكرا', ['t-mixed']],
    ['a word in two scripts of two traces', 'спасибо заказ', []],
    ['words in two spans of one trace', 'quokka wombat', ['t-split']],
    ['a word in two traces', 'quokka', ['t-half', 't-split']],
    ['words in order', 'whale song', ['t-order']],
    ['phrase in another order is a near-miss', '"song whale"', []],
    ['phrase split by other words is a near-miss', '"blue song"', []],
    ['a word only in metadata is not text', 'zanzibar', []],
    ['LIKE wildcards are literal', '100%', []],
    ['underscore is literal', 'get_weathe_', []],
  ];
  it.each(cases)('%s: %s', async (_label, query, expected) => {
    expect(ids(await find(query))).toEqual(expected);
  });

  // The same answers through the text index (src/traces/text-index.ts), and with some traces
  // indexed in part: a span stored after the indexer's pass is read from the spans.
  describe('after the indexer ran', () => {
    beforeAll(async () => {
      await ingestSpans(h(), token, trace('t-partial', { input: 'a first kinkajou 第一只熊' }));
      await catchUpTextIndex(h().ctx, { lagMs: 0 });
      const postings = await h().ctx.ch.rows<{ n: string }>({ query: 'SELECT count() AS n FROM text_postings' });
      expect(Number(postings[0]!.n)).toBeGreaterThan(0);
    });
    it.each(cases)('%s: %s', async (_label, query, expected) => {
      expect(ids(await find(query))).toEqual(expected);
    });
    it('finds words in two spans of a trace, one indexed and one stored after the pass', async () => {
      await ingestSpans(h(), token, [
        {
          trace_id: 't-partial',
          span_id: 't-partial-late',
          parent_span_id: 't-partial-root',
          name: 'step',
          kind: 'tool',
          start_time: iso(H - 4 * HOUR),
          end_time: iso(H - 4 * HOUR + 1000),
          output: 'a late numbat and 迟到的袋鼠',
        },
      ]);
      expect(ids(await find('kinkajou numbat'))).toEqual(['t-partial']);
      expect(ids(await find('熊 袋鼠'))).toEqual(['t-partial']);
      expect(ids(await find('"late numbat" kinkajou'))).toEqual(['t-partial']);
      expect(ids(await find('kinkajou wombat'))).toEqual([]);
    });
  });

  it('counts matches in meta.total and pages through them', async () => {
    const res = await find('quokka', { limit: '1' });
    expect(ids(res)).toEqual(['t-half']);
    expect(res.json().meta).toEqual({ page: 0, limit: 1, total: 2 });
    const next = await find('quokka', { limit: '1', page: '1' });
    expect(ids(next)).toEqual(['t-split']);
    expect(next.json().meta.total).toBe(2);
  });

  it('narrows by scope', async () => {
    expect(ids(await find('заказ', { text_scope: 'input' }))).toEqual(['t-cyrillic']);
    expect(ids(await find('отправлен', { text_scope: 'input' }))).toEqual([]);
    expect(ids(await find('отправлен', { text_scope: 'output' }))).toEqual(['t-cyrillic']);
    expect(ids(await find('KeyError', { text_scope: 'error' }))).toEqual(['t-code']);
    expect(ids(await find('get_weather', { text_scope: 'error' }))).toEqual(['t-code']);
    expect(ids(await find('Paris', { text_scope: 'error' }))).toEqual([]);
    expect(ids(await find('wombat', { text_scope: 'input' }))).toEqual([]);
  });

  it('says where it matched: span, field, snippet around the first match', async () => {
    const [code] = (await find('keyerror', { text_scope: 'error' })).json().data as Item[];
    expect(code!.text_match).toEqual({ span_id: 't-code-c0', field: 'error_message', snippet: STACK });
    const [split] = (await find('wombat')).json().data as Item[];
    expect(split!.text_match).toMatchObject({ span_id: 't-split-c0', field: 'output', snippet: 'omega wombat' });
    const [cyr] = (await find('отправлен')).json().data as Item[];
    expect(cyr!.text_match).toMatchObject({ span_id: 't-cyrillic-root', field: 'output' });
    expect(cyr!.text_match!.snippet).toContain('отправлен');
    // Without text_query, no text_match.
    const plain = await get(token, '/traces', { limit: '3' });
    expect(plain.json().data.every((t: Item) => !('text_match' in t))).toBe(true);
  });

  it('answers a snippet of at most 300 characters from a long text', async () => {
    const long = `${'мир '.repeat(500)}NEEDLE-𝔘𝔫𝔦 ${'ok 😀 '.repeat(500)}`;
    await ingestSpans(h(), token, trace('t-long', { output: long }));
    const [item] = (await find('needle-𝔲𝔫𝔦')).json().data as Item[];
    expect(item).toBeUndefined(); // Fraktur letters have no case: 𝔲 is a different letter.
    const [found] = (await find('needle-𝔘𝔫𝔦')).json().data as Item[];
    expect(found!.trace_id).toBe('t-long');
    const snippet = found!.text_match!.snippet;
    expect(snippet.length).toBeLessThanOrEqual(300);
    expect(snippet.length).toBeGreaterThan(200);
    expect(snippet).toContain('NEEDLE-𝔘𝔫𝔦');
    expect(wellFormed(snippet)).toBe(true);
  });

  it('combines with filters, the window and the other parameters', async () => {
    const filters = JSON.stringify([{ field: 'status', op: 'in', value: ['error'] }]);
    expect(ids(await find('Paris', { filters }))).toEqual(['t-code']);
    expect(ids(await find('quokka', { filters }))).toEqual([]);
    const errorsOnly = JSON.stringify([{ field: 'errors', op: 'gte', value: 1 }]);
    expect(ids(await find('get_weather', { filters: errorsOnly }))).toEqual(['t-code']);
    // The window: t-half is the fixture's last trace before t-long; a window ending at its start leaves it out.
    const halfStart = H - 5 * HOUR + (FIXTURE_TRACES - 1) * MIN;
    expect(ids(await find('quokka', { end_before: iso(halfStart) }))).toEqual(['t-split']);
    expect(ids(await find('quokka', { start_after: iso(halfStart) }))).toEqual(['t-half']);
    expect(ids(await find('quokka', { start_after: iso(H - 48 * HOUR), end_before: iso(H - 24 * HOUR) }))).toEqual([]);
    expect(ids(await find('quokka', { search_query: 't-spl' }))).toEqual(['t-split']);
    expect(ids(await find('quokka', { name: 'chat', user_id: 'nobody' }))).toEqual([]);
  });

  it('refuses an empty, blank or too long query with 422, like other query parameters', async () => {
    for (const bad of ['', '   ', '""', 'x'.repeat(513)]) {
      const res = await find(bad);
      expect(res.statusCode, bad).toBe(422);
      expect(res.json().detail[0].loc).toEqual(['query', 'text_query']);
    }
    expect((await find(` ${'x'.repeat(512)} `)).statusCode).toBe(200);
    expect((await find('a', { text_scope: 'metadata' })).statusCode).toBe(422);
  });

  it('keeps projects apart', async () => {
    const other = (await projectWithKey(h(), 'other')).key.key;
    expect(ids(await get(other, '/traces', { text_query: 'quokka' }))).toEqual([]);
  });
});

const FIXTURE_TRACES = new Set(FIXTURE.map((s) => s.trace_id)).size;

describe('text search: GET /sessions', () => {
  let token: string;
  beforeAll(async () => {
    token = (await projectWithKey(h())).key.key;
    const t0 = H - 3 * HOUR;
    const span = (trace_id: string, session_id: string, at: number, more: Span) => ({
      trace_id,
      span_id: `${trace_id}-r`,
      name: 'turn',
      kind: 'llm',
      session_id,
      start_time: iso(t0 + at),
      end_time: iso(t0 + at + 2000),
      ...more,
    });
    await ingestSpans(h(), token, [
      span('s1-a', 'sess-1', 0, {
        input: '你好，我要退货',
        cost: 0.5,
        input_tokens: 10,
        output_tokens: 5,
        environment: 'prod',
      }),
      span('s1-b', 'sess-1', 60_000, {
        output: 'OK',
        status: 'error',
        error_message: 'timeout',
        metadata: { plan: 'pro' },
      }),
      span('s2-a', 'sess-2', 120_000, { input: 'hello there', metadata: { plan: 'free' } }),
    ]);
  });
  const sessions = (query: Record<string, string>) => get(token, '/sessions', query);
  const sessionIds = (res: LightMyRequestResponse) => {
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data.map((s: { session_id: string }) => s.session_id);
  };

  it('lists the sessions one of whose traces holds the text, with totals over all their traces', async () => {
    const res = await sessions({ text_query: '退货' });
    expect(sessionIds(res)).toEqual(['sess-1']);
    expect(res.json().meta.total).toBe(1);
    expect(res.json().data[0]).toMatchObject({
      trace_count: 2,
      total_cost: 0.5,
      total_input_tokens: 10,
      error_count: 1,
      duration_ms: 62_000,
    });
    expect(sessionIds(await sessions({ text_query: 'HELLO' }))).toEqual(['sess-2']);
    expect(sessionIds(await sessions({ text_query: 'timeout', text_scope: 'error' }))).toEqual(['sess-1']);
    expect(sessionIds(await sessions({ text_query: 'timeout', text_scope: 'input' }))).toEqual([]);
    expect(sessionIds(await sessions({}))).toEqual(['sess-2', 'sess-1']);
  });

  it('filters sessions by metadata and the other predicates, with the text too', async () => {
    const meta = (value: string) => JSON.stringify([{ field: 'metadata', op: 'eq', key: 'plan', value }]);
    expect(sessionIds(await sessions({ filters: meta('pro') }))).toEqual(['sess-1']);
    expect(sessionIds(await sessions({ filters: meta('free') }))).toEqual(['sess-2']);
    expect(sessionIds(await sessions({ filters: meta('free'), text_query: '退货' }))).toEqual([]);
    expect(
      sessionIds(await sessions({ filters: JSON.stringify([{ field: 'environment', op: 'in', value: ['prod'] }]) })),
    ).toEqual(['sess-1']);
    expect((await sessions({ filters: '[{"field":"nope"}]' })).statusCode).toBe(400);
    expect((await sessions({ text_query: ' ' })).statusCode).toBe(422);
  });
});
