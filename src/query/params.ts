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
      params[name] = value;
      return `{${name}:${type}}`;
    },
  };
}
