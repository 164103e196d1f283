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

/**
 * What the search needs to know of the index, read once per request (`textIndexState` in
 * src/traces/text-index.ts), so its conditions are constants the engine prunes by: the watermark
 * (epoch ms; 0 when the indexer never ran) and the project's hours whose postings are not trusted
 * (epoch s). Without it the conditions read both from their tables (the same answers, a little slower).
 */
export type TextIndexState = { watermarkMs: number; collisionHours: number[] };

export type TextSearch = { terms: string[]; scope: TextScope; index?: TextIndexState };

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
 * The ASCII characters ClickHouse's `splitByNonAlpha` splits at (measured: tab, line feed, vertical
 * tab, form feed, carriage return, space and ASCII punctuation except `~`); every other character,
 * all of non-ASCII included, belongs to a token. The index's tokens (src/traces/text-index.ts) and a
 * term's pieces are cut by this one rule.
 */
const SEPARATORS = /[\t\n\v\f\r !-/:-@[-`{-}]/u;

/** A term's pieces as the index cuts text: the runs between separators (empty ones dropped). */
export function runsOf(term: string): string[] {
  return term.split(new RegExp(SEPARATORS.source, 'gu')).filter((r) => r !== '');
}

/**
 * The index leaves out tokens shorter than this (in UTF-8 bytes of the lowered text), and the search
 * looks up no piece shorter: one or two Latin letters lie inside most tokens. A CJK character
 * (3 bytes) is looked up.
 */
export const MIN_TOKEN_BYTES = 3;

const CASED = /\p{Cased}/u;

/**
 * The fewest UTF-8 bytes `piece` can have once ClickHouse lowers it: lowering maps each code point
 * to one code point and leaves characters without case alone, but a cased one may shrink (the Kelvin
 * sign's 3 bytes become `k`), so each cased character counts 1. A piece counted at 3 or more is at
 * least that long as the engine lowers it, so it can only lie inside indexed tokens.
 */
function loweredBytesAtLeast(piece: string): number {
  let n = 0;
  for (const c of piece) n += CASED.test(c) ? 1 : Buffer.byteLength(c);
  return n;
}

/**
 * How the index serves one term: `pieces` are its pieces long enough to look up (their positions,
 * 1-based, among `splitByNonAlpha(lowerUTF8(term))`, which ClickHouse computes, so the lowered
 * pieces are the engine's, byte for byte); `exact` when the term is one such piece and nothing
 * else: then the traces holding a token that contains it are exactly the traces whose text does.
 */
export type TermPlan = { term: string; pieces: number[]; exact: boolean };

export function planTerm(term: string): TermPlan {
  const runs = runsOf(term);
  const pieces = runs.flatMap((r, i) => (loweredBytesAtLeast(r) >= MIN_TOKEN_BYTES ? [i + 1] : []));
  return { term, pieces, exact: pieces.length === 1 && runs.length === 1 && !SEPARATORS.test(term) };
}

/** The most pieces the index looks up for one query: one bit each in a UInt64 mask. */
export const MAX_INDEXED_PIECES = 64;

const SCOPE_BITS: Record<TextScope, number> = { all: 7, input: 1, output: 2, error: 4 };

/**
 * A trace's key in the index: its rollup hour and this 64-bit hash of its id
 * (clickhouse/0012_text_index.sql). Every text condition names traces by the pair.
 */
export const traceKeyOf = (traceId: string) => `sipHash64(${traceId})`;

/** The indexer's watermark (`ingested_at`, at or below which every span has its postings); 1970 when none. */
export const TEXT_WATERMARK = "(SELECT max(watermark) FROM text_index_marks WHERE project_id = '')";

/** The project's hours whose postings the search does not trust (two traces share a key there). */
const COLLISION_HOURS = '(SELECT trace_start_hour FROM text_index_collisions WHERE project_id = {project:String})';

/**
 * The keys `(trace_start_hour, key)` of the traces whose spans hold every term (each term in some
 * span of the trace, within the scope), among the spans matching `spanWindow` (conditions on
 * `spans`: the list's window) and the traces filed under the hours `hourWindow` allows (conditions
 * on `trace_start_hour` alone, which the index files traces by too). Params: project.
 *
 * Through the index (clickhouse/0012_text_index.sql) whenever a term has a piece to look up: the
 * postings answer for the spans at or below the indexer's watermark, a scan of the text answers for
 * the spans above it (and for an hour the index can't tell apart), and the two are merged per trace,
 * so a trace whose spans were indexed in part is judged on all of them. When every term is one
 * piece, that is the answer; otherwise it gives the candidates, and their spans are checked for the
 * terms the index can't answer alone (phrases, terms with punctuation, short terms) with the same
 * conditions as the scan. Without a piece to look up, a scan of the window's spans.
 */
export function textTraceKeysSubquery(
  s: TextSearch,
  param: Param,
  spanWindow: string[],
  hourWindow: string[] = [],
): string {
  const plans = s.terms.map(planTerm);
  const indexed = plans.filter((p) => p.pieces.length > 0);
  const unchecked = plans.filter((p) => !p.exact).map((p) => p.term);
  const pieces = indexed.reduce((n, p) => n + p.pieces.length, 0);
  // Each piece is a bit of a UInt64 mask; a query of more pieces (a long pasted text) is scanned.
  if (indexed.length === 0 || pieces > MAX_INDEXED_PIECES)
    return scanTraceKeys(s, param, [...spanWindow, ...hourWindow]);
  const candidates = indexedTraceKeys(indexed, s, param, spanWindow, hourWindow);
  if (unchecked.length === 0) return candidates;
  return scanTraceKeys({ terms: unchecked, scope: s.scope }, param, [
    ...spanWindow,
    ...hourWindow,
    `(trace_start_hour, ${traceKeyOf('trace_id')}) IN (${candidates})`,
  ]);
}

/**
 * The index's answer, merged with the scan of the tail: the keys of the traces having, for every
 * piece of every planned term, a span whose scoped text contains it (read from the postings: a token
 * in the scope's fields containing the piece; or from the text of the spans the postings don't
 * cover). One scan of the project's dictionary finds the tokens holding any piece; their postings,
 * read by token over the window's hours, give the traces. Params: project.
 */
function indexedTraceKeys(
  plans: TermPlan[],
  s: TextSearch,
  param: Param,
  spanWindow: string[],
  hourWindow: string[],
): string {
  const pieces: string[] = [];
  for (const p of plans) {
    const runs = `splitByNonAlpha(lowerUTF8(${param('String', p.term)}))`;
    for (const i of p.pieces) pieces.push(`${runs}[${i}]`);
  }
  const unique = [...new Set(pieces)];
  const all = ((1n << BigInt(unique.length)) - 1n).toString();
  const bits = (has: (piece: string) => string) =>
    unique.length === 1
      ? '1'
      : `${unique.map((p, i) => `if(${has(p)}, ${(1n << BigInt(i)).toString()}, 0)`).join(' + ')}`;
  const state = s.index;
  const watermark = state ? `fromUnixTimestamp64Milli(${param('Int64', state.watermarkMs)}, 'UTC')` : TEXT_WATERMARK;
  const collisions = !state
    ? COLLISION_HOURS
    : state.collisionHours.length
      ? param("Array(DateTime('UTC'))", state.collisionHours)
      : undefined;
  const postings = [
    'project_id = {project:String}',
    ...hourWindow,
    `bitAnd(fields, ${SCOPE_BITS[s.scope]}) != 0`,
    `token IN (SELECT token FROM text_tokens WHERE project_id = {project:String} AND multiSearchAny(token, [${unique.join(', ')}]))`,
    ...(collisions ? [`trace_start_hour NOT IN ${collisions}`] : []),
  ];
  const fromPostings = `SELECT trace_start_hour AS h, trace_key AS k, ${bits((p) => `position(token, ${p}) > 0`)} AS m
    FROM text_postings WHERE ${postings.join('\n      AND ')}`;
  // The same pieces in the spans the postings don't cover, lowered and scoped as the scan does.
  const scoped = s.scope === 'all' ? [SPAN_TEXT_EXPR] : scopeFields(s.scope).map((f) => `lowerUTF8(${FIELD_SQL[f]})`);
  const has = (p: string) => `(${scoped.map((t) => `position(${t}, ${p}) > 0`).join(' OR ')})`;
  const tail = (where: string) => `SELECT trace_start_hour AS h, ${traceKeyOf('trace_id')} AS k, ${bits(has)} AS m
    FROM spans WHERE ${['project_id = {project:String}', ...spanWindow, ...hourWindow, where, `(${unique.map(has).join(' OR ')})`].join('\n      AND ')}`;
  const branches = [fromPostings, tail(`ingested_at > ${watermark}`)];
  if (collisions) branches.push(tail(`trace_start_hour IN ${collisions}`));
  const union = `SELECT h, k FROM (\n    ${branches.join('\n    UNION ALL\n    ')}\n  )`;
  // One piece: every row found is a match (`IN` drops repeated keys), so no grouping.
  return unique.length === 1 ? union : `${union} GROUP BY h, k HAVING groupBitOr(m) = ${all}`;
}

/** The keys of the traces whose spans (among those matching `spanWindow`) hold every term, read from the spans. */
function scanTraceKeys(s: TextSearch, param: Param, spanWindow: string[]): string {
  const hits = termHits(s, param);
  const where = [
    'project_id = {project:String}',
    ...spanWindow,
    hits.length === 1 ? hits[0]! : `(${hits.join('\n    OR ')})`,
  ];
  const select = `SELECT trace_start_hour, ${traceKeyOf('trace_id')} FROM spans WHERE ${where.join(' AND ')}`;
  if (hits.length === 1) return select;
  return `${select}\n  GROUP BY trace_start_hour, trace_id HAVING ${hits.map((h) => `max(${h})`).join(' AND ')}`;
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
  // The match's position in the text as stored: lowering can lengthen text before the match (İ is
  // two code points lowered), so the position found in the lowered text can lie past it. The
  // case-insensitive search of the stored text finds it where the two foldings agree; where they
  // don't (Greek final sigma), the lowered position stands.
  const storedPos = `arrayMin(arrayMap(p -> if(p = 0, 4294967295, p), multiSearchAllPositionsCaseInsensitiveUTF8(text, {terms:Array(String)})))`;
  return {
    query: `SELECT trace_id, span_id, field, pos, greatest(1, toInt64(pos) - ${SNIPPET_LENGTH}) AS from,
  substringUTF8(text, from, ${SNIPPET_LENGTH * 2 + 64}) AS around
FROM (
  SELECT trace_id, span_id, start_time, ${positions} AS positions,
    arrayFirstIndex(p -> p != 4294967295, positions) AS which,
    [${fields.map((f) => `'${f}'`).join(', ')}][which] AS field,
    ${texts}[which] AS text,
    ${storedPos} AS stored_pos,
    if(stored_pos != 4294967295, stored_pos, positions[which]) AS pos
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
