/**
 * The one way a value reaches ClickHouse SQL: a `{name:Type}` parameter, never spliced into the text
 * (only identifiers and expressions chosen by the builders are). Pure.
 */

/** A parameterised query, as `client.query` takes it (with a format) and `ClickHouseStore.rows` runs it. */
export type Query = { query: string; query_params: Record<string, unknown> };

/** Adds a value to a query's parameters and answers its placeholder, e.g. `{p3:String}`. */
export type Param = (type: string, value: unknown) => string;

export type ParamBuilder = { params: Record<string, unknown>; param: Param };

/**
 * Numbers a query's values `p0`, `p1`, ... in the order they are added, into `params`, which may
 * already hold the query's named ones (`project`, `limit`, ...). `param` may be passed on alone.
 */
export function paramBuilder(params: Record<string, unknown> = {}): ParamBuilder {
  let n = 0;
  return {
    params,
    param(type, value) {
      const name = `p${n++}`;
      params[name] = typeof value === 'number' ? timeParam(type, value) : value;
      return `{${name}:${type}}`;
    },
  };
}

/**
 * A number for a DateTime64 or DateTime parameter (epoch seconds) as text ClickHouse always parses,
 * `YYYY-MM-DD hh:mm:ss[.sss]` in UTC. The engine reads a bare number as epoch seconds only when it
 * doesn't look like a year or a short date: `0`, `1`, `3600` and `3600.000` were refused ("cannot be
 * parsed as DateTime64"), so a window or a detector pass starting near the epoch failed.
 */
export function timeParam(type: string, seconds: number): number | string {
  if (!type.startsWith('DateTime')) return seconds;
  const millis = type.startsWith('DateTime64') ? Math.round(seconds * 1000) : Math.floor(seconds) * 1000;
  const text = new Date(millis).toISOString().replace('T', ' ').replace('Z', '');
  return type.startsWith('DateTime64') ? text : text.slice(0, 19);
}
