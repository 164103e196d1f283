/**
 * Full-text search over span inputs, outputs and error messages (`text_query`, `text_scope`;
 * docs/traces.md, "Text search"). Pure: parsing the query into terms, the SQL conditions, and the
 * snippet of `text_match`.
 *
 * Substring semantics, no tokenizer: a term matches where its characters appear in that order in a
 * field, after both are lowercased by ClickHouse's `lowerUTF8` (so case folds where the script has
 * case, and scripts without spaces between words – Chinese, Japanese, Thai – or code and JSON are
 * found like any other text). Every condition compares lowered text with lowered terms, so the
 * whole-span condition and the per-field ones agree.
 */

export const TEXT_SCOPES = ['all', 'input', 'output', 'error'] as const;
export type TextScope = (typeof TEXT_SCOPES)[number];
export type TextField = 'input' | 'output' | 'error_message';

export const MAX_TEXT_QUERY_LENGTH = 512;
/** ClickHouse's multi-search functions take at most 255 needles; far more than anyone types. */
export const MAX_TEXT_TERMS = 64;
export const SNIPPET_LENGTH = 300;

export type TextSearch = { terms: string[]; scope: TextScope };

/**
 * The terms of a query: words separated by whitespace, and text in double quotes as one term (a
 * phrase: those characters in that order, its spaces included, even at its ends; `\"` in it is a
 * literal quote and `\\` a backslash, so JSON can be searched). An unclosed quote runs to the end;
 * empty or blank quotes are dropped. Repeated terms count once.
 * Returns [] when nothing is left (`""`).
 */
export function parseTextQuery(raw: string): string[] {
  const terms: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)(?:"|$)|([^\s"]+)/gsu;
  for (const m of raw.matchAll(re)) {
    const term = m[1] !== undefined ? m[1].replace(/\\(.)/gsu, '$1') : m[2]!;
    if (term.trim() !== '' && !terms.includes(term)) terms.push(term);
  }
  return terms;
}

/** The fields a scope searches, in the order `text_match` prefers them. */
export function scopeFields(scope: TextScope): TextField[] {
  if (scope === 'input') return ['input'];
  if (scope === 'output') return ['output'];
  if (scope === 'error') return ['error_message'];
  return ['input', 'output', 'error_message'];
}

const FIELD_SQL: Record<TextField, string> = {
  input: "ifNull(input, '')",
  output: "ifNull(output, '')",
  error_message: 'error_message',
};

/**
 * The lowered text of a span's three fields, one string: one pass of LIKE for the `all` scope. Spelled
 * once here, so a skip index on this expression (measured in bench/text-search.ts; not kept, see
 * clickhouse/0008_text_search.sql) would be used by every query without changing them.
 */
export const SPAN_TEXT_EXPR = "lowerUTF8(concat(ifNull(input, ''), '\\n', ifNull(output, ''), '\\n', error_message))";

/** A LIKE pattern matching `term` anywhere, its wildcards escaped. */
export function likeAnywhere(term: string): string {
  return `%${term.replace(/[\\%_]/g, '\\$&')}%`;
}

type Param = (type: string, value: unknown) => string;

/** Per term: does a span's scoped text contain it (one boolean expression per term, in order)? */
function termHits(s: TextSearch, param: Param): string[] {
  return s.terms.map((term) => {
    const pattern = `lowerUTF8(${param('String', likeAnywhere(term))})`;
    // All three fields in one pass, unless the term holds a line break and could span two of them.
    if (s.scope === 'all' && !term.includes('\n')) return `${SPAN_TEXT_EXPR} LIKE ${pattern}`;
    return `(${scopeFields(s.scope)
      .map((f) => `lowerUTF8(${FIELD_SQL[f]}) LIKE ${pattern}`)
      .join(' OR ')})`;
  });
}

/**
 * The ids of the traces whose spans hold every term (each term in some span of the trace, within
 * the scope), among the spans matching `spanWindow` (conditions on `spans`: the list's window).
 * Params: project.
 */
export function textTraceIdsSubquery(s: TextSearch, param: Param, spanWindow: string[]): string {
  const hits = termHits(s, param);
  const where = [
    'project_id = {project:String}',
    ...spanWindow,
    hits.length === 1 ? hits[0]! : `(${hits.join('\n    OR ')})`,
  ];
  const select = `SELECT trace_id FROM spans WHERE ${where.join(' AND ')}`;
  if (hits.length === 1) return select;
  return `${select}\n  GROUP BY trace_id HAVING ${hits.map((h) => `max(${h})`).join(' AND ')}`;
}

/**
 * The first match in each of the given traces: its earliest span (by start time, then id) that holds
 * a term in the scope, the first field of the scope that holds one, the code-point position of the
 * earliest term there, and the text around it (the snippet is cut from it in `snippetOf`).
 * Rows: trace_id, span_id, field, pos (1-based), from (1-based code point where `around` starts), around.
 */
export function textMatchQuery(
  s: TextSearch,
  projectId: string,
  page: { trace_id: string; hour: number }[],
  settings: string,
) {
  const fields = scopeFields(s.scope);
  const firstPos = (f: TextField) =>
    `arrayMin(arrayMap(p -> if(p = 0, 4294967295, p), multiSearchAllPositionsUTF8(lowerUTF8(${FIELD_SQL[f]}), arrayMap(t -> lowerUTF8(t), {terms:Array(String)}))))`;
  const positions = `[${fields.map(firstPos).join(', ')}]`;
  const texts = `[${fields.map((f) => FIELD_SQL[f]).join(', ')}]`;
  return {
    query: `SELECT trace_id, span_id, field, pos, greatest(1, toInt64(pos) - ${SNIPPET_LENGTH}) AS from,
  substringUTF8(text, from, ${SNIPPET_LENGTH * 2 + 64}) AS around
FROM (
  SELECT trace_id, span_id, start_time, ${positions} AS positions,
    arrayFirstIndex(p -> p != 4294967295, positions) AS which,
    [${fields.map((f) => `'${f}'`).join(', ')}][which] AS field,
    positions[which] AS pos,
    ${texts}[which] AS text
  FROM spans
  WHERE project_id = {project:String}
    AND trace_start_hour IN {hours:Array(DateTime('UTC'))}
    AND trace_id IN {ids:Array(String)}
    AND which > 0
  ORDER BY start_time, span_id
  LIMIT 1 BY trace_id
)
${settings}`,
    query_params: {
      project: projectId,
      terms: s.terms,
      hours: [...new Set(page.map((r) => r.hour))],
      ids: page.map((r) => r.trace_id),
    },
  };
}

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * At most SNIPPET_LENGTH UTF-16 units of `around` containing the match at code point `offset`
 * (0-based within `around`), about a third of it before the match; cut between graphemes, so never
 * inside a surrogate pair, a combining sequence or an emoji sequence.
 */
export function snippetOf(around: string, offset: number, max = SNIPPET_LENGTH): string {
  const graphemes = [...segmenter.segment(around)].map((g) => g.segment);
  // The grapheme holding the match's first code point.
  let at = 0;
  for (let cps = 0; at < graphemes.length; at++) {
    const next = cps + [...graphemes[at]!].length;
    if (next > offset) break;
    cps = next;
  }
  at = Math.min(at, Math.max(0, graphemes.length - 1));
  let start = at;
  let end = at;
  let used = 0;
  const before = Math.floor(max / 3);
  // Grow left up to a third of the budget, then right, then left again with what is left.
  while (start > 0 && used + graphemes[start - 1]!.length <= before) used += graphemes[--start]!.length;
  while (end < graphemes.length && used + graphemes[end]!.length <= max) used += graphemes[end++]!.length;
  while (start > 0 && used + graphemes[start - 1]!.length <= max) used += graphemes[--start]!.length;
  return graphemes.slice(start, end).join('');
}
