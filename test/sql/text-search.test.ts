import { beforeAll, describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';

/**
 * The SQL way of text search (docs/sql.md, "Searching text"): the case-insensitive substring
 * functions over the `spans` view's input, output and error_message, under the same guard.
 */

const h = useHarness();

describe('public SQL: searching span text', () => {
  let key: string;
  let other: string;
  beforeAll(async () => {
    key = (await projectWithKey(h())).key.key;
    other = (await projectWithKey(h(), 'other')).key.key;
    const t = new Date().toISOString();
    const spans = [
      { trace_id: 'zh', span_id: 's', name: 'n', start_time: t, input: '请帮我查询北京明天的天气' },
      { trace_id: 'ru', span_id: 's', name: 'n', start_time: t, output: 'Ваш ЗАКАЗ отправлен' },
      {
        trace_id: 'err',
        span_id: 's',
        name: 'n',
        start_time: t,
        status: 'error',
        error_message: 'KeyError: get_weather(city)',
      },
      { trace_id: 'el', span_id: 's', name: 'n', start_time: t, output: 'Ο καιρός σήμερα' },
    ];
    for (const token of [key, other]) {
      const res = await call(h().api, { method: 'POST', url: `${PUBLIC}/traces`, token, payload: { spans } });
      expect(res.json()).toMatchObject({ accepted: 4 });
    }
  });
  const sql = (query: string) =>
    call(h().api, { method: 'POST', url: `${PUBLIC}/sql`, token: key, payload: { query } });
  const traces = async (query: string) => {
    const res = await sql(query);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().rows.map((r: unknown[]) => r[0]);
  };

  it('finds spans by a case-insensitive substring in any script, in the caller project only', async () => {
    expect(await traces("SELECT trace_id FROM spans WHERE positionCaseInsensitiveUTF8(input, '天气') > 0")).toEqual([
      'zh',
    ]);
    expect(await traces("SELECT trace_id FROM spans WHERE positionCaseInsensitiveUTF8(output, 'заказ') > 0")).toEqual([
      'ru',
    ]);
    expect(await traces("SELECT trace_id FROM spans WHERE output ILIKE '%заказ%'")).toEqual(['ru']);
    const any =
      "SELECT trace_id FROM spans WHERE multiSearchAnyCaseInsensitiveUTF8(concat(ifNull(input, ''), ' ', ifNull(output, ''), ' ', error_message), array('ЗАКАЗ', 'GET_WEATHER(')) ORDER BY trace_id";
    expect(await traces(any)).toEqual(['err', 'ru']);
    expect(
      await traces("SELECT DISTINCT trace_id FROM spans WHERE lowerUTF8(error_message) LIKE '%get_weather(%'"),
    ).toEqual(['err']);
  });

  it("reads like the list's text_query: every word in some span of the trace, phrases whole (docs/sql.md)", async () => {
    const hay = "lowerUTF8(concat(ifNull(input, ''), ' ', ifNull(output, ''), ' ', error_message))";
    const having = (...needles: string[]) =>
      `SELECT trace_id FROM spans WHERE start_time >= now() - INTERVAL 7 DAY GROUP BY trace_id HAVING ${needles
        .map((n) => `max(positionUTF8(${hay}, '${n}') > 0)`)
        .join(' AND ')} ORDER BY trace_id`;
    expect(await traces(having('北京', '天气'))).toEqual(['zh']);
    expect(await traces(having('заказ', 'отправлен'))).toEqual(['ru']);
    expect(await traces(having('заказ отправлен'))).toEqual(['ru']);
    expect(await traces(having('отправлен заказ'))).toEqual([]);
    expect(await traces(having('заказ', '天气'))).toEqual([]);
    expect(await traces(having('get_weather('))).toEqual(['err']);
    expect(await traces(having('get%weather('))).toEqual([]);
    // Greek: lowering the whole word makes its final Σ a ς, as the list does; letter-by-letter folding does not.
    expect(await traces(having('καιρός'))).toEqual(['el']);
    expect(await traces("SELECT trace_id FROM spans WHERE positionCaseInsensitiveUTF8(output, 'ΚΑΙΡΌΣ') > 0")).toEqual(
      [],
    );
    expect(await traces("SELECT trace_id FROM spans WHERE positionUTF8(lowerUTF8(output), 'καιρός') > 0")).toEqual([
      'el',
    ]);
  });

  it('keeps the guard: no table functions or system tables through a search', async () => {
    const res = await sql(
      'SELECT trace_id FROM spans WHERE positionCaseInsensitiveUTF8(input, (SELECT name FROM system.tables LIMIT 1)) > 0',
    );
    expect(res.statusCode).toBe(400);
    // A needle computed per row costs haystack × needle: the UTF8 and case-insensitive forms of the
    // search functions need literals like the plain ones (docs/sql.md, "Per-row cost").
    for (const q of [
      'SELECT trace_id FROM spans WHERE multiSearchAnyCaseInsensitiveUTF8(input, array(output))',
      "SELECT trace_id FROM spans WHERE multiSearchAnyUTF8(input, splitByChar(' ', output))",
      'SELECT multiSearchAllPositionsCaseInsensitiveUTF8(input, array(name)) AS p FROM spans',
      'SELECT trace_id FROM spans WHERE positionCaseInsensitiveUTF8(input, output) > 0',
      'SELECT trace_id FROM spans WHERE output ILIKE input',
    ]) {
      const refused = await sql(q);
      expect(refused.statusCode, q).toBe(400);
      expect(refused.json().detail, q).toMatch(/must be (a string literal|array\('…', '…'\) of string literals)/);
    }
    // Nothing else opens up: other tables, system tables and writes stay refused.
    for (const q of [
      "SELECT trace_id FROM system.query_log WHERE positionCaseInsensitiveUTF8(query, 'x') > 0",
      "SELECT * FROM url('http://127.0.0.1/', 'CSV', 'a String') WHERE positionCaseInsensitiveUTF8(a, 'x') > 0",
      "SELECT input FROM sightline.spans WHERE positionCaseInsensitiveUTF8(input, 'x') > 0",
      "INSERT INTO spans SELECT * FROM spans WHERE positionCaseInsensitiveUTF8(input, 'x') > 0",
    ])
      expect((await sql(q)).statusCode, q).toBe(400);
    // The same search in another project finds nothing of this one's.
    const theirs = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/sql`,
      token: other,
      payload: { query: "SELECT count() FROM spans WHERE positionCaseInsensitiveUTF8(output, 'заказ') > 0" },
    });
    expect(theirs.json().rows).toEqual([[1]]);
  });
});
