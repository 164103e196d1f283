import { beforeAll, describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { planTerm, runsOf } from '../../src/traces/text-search.js';
import { catchUpTextIndex, runTextIndexPass, TEXT_INDEX_LAG_MS } from '../../src/traces/text-index.js';
import { visibleStampsUpTo } from '../../src/traces/visible-stamps.js';

/**
 * The text index (clickhouse/0012_text_index.sql, src/traces/text-index.ts, src/traces/text-search.ts)
 * never changes what a search finds: its answers equal a plain substring scan of the lowered text, on
 * random multilingual texts and terms cut from them, before the indexer ran, after it ran, and with
 * traces indexed in part (spans stored after its pass); its pieces are cut exactly as ClickHouse cuts
 * the indexed text. This file's indexer passes index every project of its engine (their own data
 * directory) and move the one watermark.
 */

const h = useHarness();

/** `sightline_text_index_lag_seconds` of the api's /metrics (NaN before the first pass). */
async function lagMetric(): Promise<number | undefined> {
  const res = await call(h().api, { method: 'GET', url: '/metrics' });
  const line = res.body.split('\n').find((l) => l.startsWith('sightline_text_index_lag_seconds'));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

/** A deterministic generator (mulberry32), so a failure reproduces. */
function rng(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  'Refund',
  'refunded',
  'NONREFUNDABLE',
  'order',
  'Orders',
  'get_weather(',
  'city="Paris"',
  '{"temp": 18}',
  'line 42,',
  'KeyError:',
  'café',
  'CAFÉ',
  'Straße',
  'STRASSE',
  'заказ',
  'ЗАКАЗЫ',
  'Σοφία',
  'ΟΔΟΣ',
  'οδός',
  '订单状态',
  '订单',
  '状态',
  '東京の天気',
  'カタカナ',
  'ひらがな',
  '서울의',
  '날씨',
  'القاهرة',
  'בירושלים',
  'กรุงเทพวันนี้',
  'मौसम',
  '🙏',
  '👩‍💻',
  '🎉ok',
  'x~y',
  'a',
  'ok',
  'é',
  '42',
  '12345678',
  'ab12cd',
  '\\path\\to',
  'tab\there',
  'İstanbul',
  'ǅemal',
];
const GLUE = [' ', ' ', ' ', '', ', ', '. ', '\n', '_', '-', '(', '"', '，', '。', ':'];

function text(r: () => number): string {
  const n = 3 + Math.floor(r() * 10);
  let s = '';
  for (let i = 0; i < n; i++) s += WORDS[Math.floor(r() * WORDS.length)]! + GLUE[Math.floor(r() * GLUE.length)]!;
  return s;
}

/** A term: a piece cut from one of the texts (any offsets, by code point), its case sometimes changed. */
function termFrom(texts: string[], r: () => number): string {
  const cps = [...texts[Math.floor(r() * texts.length)]!];
  const start = Math.floor(r() * cps.length);
  const len = 1 + Math.floor(r() * 8);
  let t = cps.slice(start, start + len).join('');
  const c = r();
  if (c < 0.25) t = t.toUpperCase();
  else if (c < 0.5) t = t.toLowerCase();
  return t.trim() === '' ? 'order' : t;
}

describe('text index: pieces', () => {
  it('cuts a term at the same places ClickHouse cuts the indexed text (splitByNonAlpha)', async () => {
    const r = rng(7);
    const samples = [
      ...Array.from({ length: 200 }, () => text(r)),
      // Every ASCII character between two letters.
      ...Array.from({ length: 128 }, (_, c) => `a${String.fromCharCode(c)}b`),
    ];
    const res = await h().ctx.ch.client.query({
      query: 'SELECT splitByNonAlpha(s) AS runs FROM (SELECT arrayJoin({samples:Array(String)}) AS s)',
      query_params: { samples },
      format: 'JSONEachRow',
    });
    const engine = (await res.json<{ runs: string[] }>()).map((row) => row.runs);
    expect(engine).toEqual(samples.map(runsOf));
  });

  it('answers a term from the index alone only when it is one piece', () => {
    expect(planTerm('refund')).toMatchObject({ exact: true, pieces: [1] });
    expect(planTerm('天气')).toMatchObject({ exact: true, pieces: [1] });
    expect(planTerm('天')).toMatchObject({ exact: true, pieces: [1] });
    expect(planTerm('get_weather(')).toMatchObject({ exact: false, pieces: [1, 2] });
    expect(planTerm(' refund')).toMatchObject({ exact: false, pieces: [1] });
    expect(planTerm('ok')).toMatchObject({ exact: false, pieces: [] });
    expect(planTerm('(')).toMatchObject({ exact: false, pieces: [] });
    // Cased letters count one byte each (lowering may shrink them: the Kelvin sign becomes `k`).
    expect(planTerm('éé')).toMatchObject({ exact: false, pieces: [] });
    expect(planTerm('\u212Aa')).toMatchObject({ exact: false, pieces: [] });
    expect(planTerm('café')).toMatchObject({ exact: true, pieces: [1] });
  });
});

describe('text index: same answers as a scan', () => {
  let key: string;
  let projectId: string;
  const texts: string[] = [];
  const r = rng(42);
  const H = Math.floor(Date.now() / 3_600_000) * 3_600_000;

  /** Spans for traces prop-<from> .. prop-<to - 1>, span ids from `first`; their texts join `texts`. */
  function spansFor(from: number, to: number, first: number): Record<string, unknown>[] {
    const spans: Record<string, unknown>[] = [];
    for (let t = from; t < to; t++) {
      const start = H - 30 * 3_600_000 + t * 60_000;
      for (let s = first; s < first + 3; s++) {
        const fields: Record<string, unknown> = { input: text(r) };
        if (r() < 0.6) fields.output = text(r);
        if (r() < 0.2) Object.assign(fields, { status: 'error', error_message: text(r) });
        texts.push(...Object.values(fields).filter((v): v is string => typeof v === 'string' && v !== 'error'));
        spans.push({
          trace_id: `prop-${t}`,
          span_id: `prop-${t}-${s}`,
          parent_span_id: s === 0 ? undefined : `prop-${t}-0`,
          name: 'step',
          kind: 'llm',
          start_time: new Date(start + s).toISOString(),
          end_time: new Date(start + 500).toISOString(),
          ...fields,
        });
      }
    }
    return spans;
  }

  async function send(spans: Record<string, unknown>[]) {
    for (let i = 0; i < spans.length; i += 40) {
      const res = await call(h().api, {
        method: 'POST',
        url: `${PUBLIC}/traces`,
        token: key,
        payload: { spans: spans.slice(i, i + 40) },
      });
      expect(res.statusCode).toBe(200);
    }
  }

  beforeAll(async () => {
    const p = await projectWithKey(h());
    key = p.key.key;
    projectId = p.project.id;
    await send(spansFor(0, 40, 0));
  });

  /** The traces whose spans hold every term in the scope's fields: lowerUTF8 and position, nothing else. */
  async function scan(terms: string[], fields: string[]): Promise<string[]> {
    const has = (i: number) =>
      `max(${fields.map((f) => `position(lowerUTF8(${f}), lowerUTF8({t${i}:String})) > 0`).join(' OR ')})`;
    const res = await h().ctx.ch.client.query({
      query: `SELECT trace_id FROM spans WHERE project_id = {p:String} GROUP BY trace_id
              HAVING ${terms.map((_, i) => has(i)).join(' AND ')} ORDER BY trace_id`,
      query_params: { p: projectId, ...Object.fromEntries(terms.map((t, i) => [`t${i}`, t])) },
      format: 'JSONEachRow',
    });
    return (await res.json<{ trace_id: string }>()).map((row) => row.trace_id);
  }

  async function search(query: string, scope: string): Promise<string[]> {
    const res = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/traces`,
      token: key,
      query: { text_query: query, text_scope: scope, limit: '100' },
    });
    expect(res.statusCode, res.body).toBe(200);
    const found = res.json().data.map((t: { trace_id: string }) => t.trace_id) as string[];
    expect(res.json().meta.total).toBe(found.length);
    return found.sort();
  }

  const quote = (t: string) => `"${t.replace(/["\\]/g, '\\$&')}"`;
  const FIELDS: Record<string, string[]> = {
    all: ["ifNull(input, '')", "ifNull(output, '')", 'error_message'],
    input: ["ifNull(input, '')"],
    output: ["ifNull(output, '')"],
    error: ['error_message'],
  };

  /** 60 random queries (single terms, pairs, every scope) against the scan. */
  async function compareRandom() {
    let nonEmpty = 0;
    for (let i = 0; i < 60; i++) {
      const terms = [termFrom(texts, r)];
      if (i % 3 === 0) terms.push(termFrom(texts, r));
      const scope = ['all', 'all', 'input', 'output', 'error'][i % 5]!;
      const expected = await scan(terms, FIELDS[scope]!);
      if (expected.length) nonEmpty++;
      expect(await search(terms.map(quote).join(' '), scope), `${JSON.stringify(terms)} in ${scope}`).toEqual(expected);
    }
    // The generator finds things, so the equality is not between two empty lists.
    expect(nonEmpty).toBeGreaterThan(30);
  }

  async function watermark(): Promise<number> {
    const rows = await h().ctx.ch.rows<{ w: string }>({
      query: "SELECT toUnixTimestamp64Milli(max(watermark)) AS w FROM text_index_marks WHERE project_id = ''",
    });
    return Number(rows[0]!.w);
  }

  it('finds the same traces as a scan before the indexer ran (everything is the tail)', async () => {
    expect(await watermark()).toBe(0);
    expect(await lagMetric()).toBeNaN();
    await compareRandom();
  });

  it('finds the same traces as a scan after the indexer ran', async () => {
    // Small chunks: several passes, each its own watermark.
    const passes = await catchUpTextIndex(h().ctx, { lagMs: 0, maxSpans: 50 });
    expect(passes.length).toBeGreaterThan(1);
    expect(passes.reduce((n, p) => n + p.spans, 0)).toBeGreaterThanOrEqual(120);
    expect(await watermark()).toBeGreaterThan(0);
    // /metrics says how far behind the index is: the pass just reached the engine's clock.
    const lag = await lagMetric();
    expect(lag).toBeGreaterThanOrEqual(0);
    expect(lag).toBeLessThan(3600);
    const postings = await h().ctx.ch.rows<{ n: string }>({
      query: 'SELECT count() AS n FROM text_postings WHERE project_id = {p:String}',
      query_params: { p: projectId },
    });
    expect(Number(postings[0]!.n)).toBeGreaterThan(100);
    await compareRandom();
  });

  it('finds the same traces as a scan when traces are indexed in part (spans stored after the pass)', async () => {
    // More spans for half the traces, and new traces: above the watermark, so scanned.
    await send(spansFor(20, 50, 3));
    await compareRandom();
    await catchUpTextIndex(h().ctx, { lagMs: 0 });
    await compareRandom();
  });

  it('finds near-misses neither way: a piece that is in no text', async () => {
    for (const t of ['refundx', '订单状况', 'заказа', 'get_weather[', '🙏🙏']) {
      expect(await scan([t], FIELDS.all!)).toEqual([]);
      expect(await search(quote(t), 'all')).toEqual([]);
    }
  });

  it('counts a re-sent trace once', async () => {
    const span = {
      trace_id: 'resent',
      span_id: 'resent-0',
      name: 'chat',
      kind: 'llm',
      start_time: new Date(H - 2 * 3_600_000).toISOString(),
      end_time: new Date(H - 2 * 3_600_000 + 100).toISOString(),
      input: 'a unique xylophonist wrote this',
    };
    for (let i = 0; i < 3; i++) {
      await send([span]);
      await runTextIndexPass(h().ctx, { lagMs: 0 });
    }
    expect(await search('xylophonist', 'all')).toEqual(['resent']);
    // Found through the index: one posting for the word, however often the span came.
    const res = await h().ctx.ch.rows<{ n: string }>({
      query: `SELECT count() AS n FROM text_postings FINAL WHERE project_id = {p:String} AND token = 'xylophonist'`,
      query_params: { p: projectId },
    });
    expect(Number(res[0]!.n)).toBe(1);
  });

  it('scans an hour where two traces share a key instead of trusting its postings', async () => {
    await catchUpTextIndex(h().ctx, { lagMs: 0 });
    // A posting that no span backs (as a key collision would make): the index alone would find it.
    const hour = Math.floor((H - 30 * 3_600_000) / 1000);
    await h().ctx.ch.client.command({
      query: `INSERT INTO text_postings SELECT {p:String}, 'qqzzyyxx', toDateTime({h:UInt32}, 'UTC'), sipHash64('prop-1'), 7, 30`,
      query_params: { p: projectId, h: hour },
    });
    await h().ctx.ch.client.command({
      query: `INSERT INTO text_tokens SELECT {p:String}, 'qqzzyyxx', toDateTime({h:UInt32}, 'UTC'), 30`,
      query_params: { p: projectId, h: hour },
    });
    expect(await search('qqzzyyxx', 'all')).toEqual(['prop-1']);
    await h().ctx.ch.client.command({
      query: `INSERT INTO text_index_collisions SELECT {p:String}, toDateTime({h:UInt32}, 'UTC'), 30`,
      query_params: { p: projectId, h: hour },
    });
    expect(await search('qqzzyyxx', 'all')).toEqual([]);
    // The hour's spans are read instead: what they hold is still found.
    const inHour = await scan(['order'], FIELDS.all!);
    expect(await search('order', 'all')).toEqual(inHour);
  });

  it('answers queries of many pieces (one bit each, up to 64; more are scanned)', async () => {
    const words = Array.from({ length: 70 }, (_, i) => `zq${String(i).padStart(3, '0')}x`);
    await send([
      {
        trace_id: 'many',
        span_id: 'many-0',
        name: 'chat',
        kind: 'llm',
        start_time: new Date(H - 3 * 3_600_000).toISOString(),
        input: words.join(' '),
      },
    ]);
    await catchUpTextIndex(h().ctx, { lagMs: 0 });
    // 60 words: bits up to 2^59 of the mask.
    expect(await search(words.slice(0, 60).join(' '), 'all')).toEqual(['many']);
    expect(await search(`${words.slice(0, 59).join(' ')} zq999x`, 'all')).toEqual([]);
    // A phrase of 70 pieces: past the mask, scanned.
    expect(await search(quote(words.join(' ')), 'all')).toEqual(['many']);
    expect(await search(quote(`${words.join(' ')} zq999x`), 'all')).toEqual([]);
  });

  /** A project of its own with one span of `input` in trace `traceId`, started at `startMs`. */
  async function projectWithSpan(traceId: string, startMs: number, input: string) {
    const p = await projectWithKey(h());
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/traces`,
      token: p.key.key,
      payload: {
        spans: [
          {
            trace_id: traceId,
            span_id: `${traceId}-0`,
            name: 'chat',
            kind: 'llm',
            start_time: new Date(startMs).toISOString(),
            input,
          },
        ],
      },
    });
    expect(res.statusCode).toBe(200);
    return p;
  }

  /** The postings stored for a project. */
  async function postingsOf(projectId: string): Promise<number> {
    const rows = await h().ctx.ch.rows<{ n: string }>({
      query: 'SELECT count() AS n FROM text_postings WHERE project_id = {p:String}',
      query_params: { p: projectId },
    });
    return Number(rows[0]!.n);
  }

  it('does not index the spans of a deleted project', async () => {
    const other = await projectWithSpan('gone', H - 3_600_000, 'a deleted xenolith');
    await h().ctx.pg.pool.query('UPDATE projects SET deleted_at = now() WHERE id = $1', [other.project.id]);
    await catchUpTextIndex(h().ctx, { lagMs: 0 });
    expect(await postingsOf(other.project.id)).toBe(0);
  });

  it('leaves the spans of the last 5 s to the tail in a default pass (the lag was 30 s)', async () => {
    const fresh = await projectWithSpan('fresh', Date.now(), 'a fresh quokka');
    const { now, upper } = await visibleStampsUpTo(h().ctx.ch, TEXT_INDEX_LAG_MS);
    expect(TEXT_INDEX_LAG_MS).toBe(5_000);
    expect(now - upper).toBe(5_000);
    await runTextIndexPass(h().ctx);
    expect(await postingsOf(fresh.project.id)).toBe(0);
    await catchUpTextIndex(h().ctx, { lagMs: 0 });
    expect(await postingsOf(fresh.project.id)).toBeGreaterThan(0);
  });
});
