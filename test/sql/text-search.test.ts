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
    ];
    for (const token of [key, other]) {
      const res = await call(h().api, { method: 'POST', url: `${PUBLIC}/traces`, token, payload: { spans } });
      expect(res.json()).toMatchObject({ accepted: 3 });
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

  it('keeps the guard: no table functions or system tables through a search', async () => {
    const res = await sql(
      'SELECT trace_id FROM spans WHERE positionCaseInsensitiveUTF8(input, (SELECT name FROM system.tables LIMIT 1)) > 0',
    );
    expect(res.statusCode).toBe(400);
  });
});
