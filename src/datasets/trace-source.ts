import { TupleParam } from '@clickhouse/client';
import type { AppContext } from '../context.js';
import { NotFoundError } from '../errors.js';
import { MIB, READ_MEMORY_BYTES, settingsClause, withinLimits, type QueryLimits } from '../query/limits.js';
import { parseJsonKeepingRaw, RawJson } from '../raw-json.js';

/**
 * Test cases built from a trace (docs/datasets.md; issue 12): `{source_trace_id, source_span_id?}`
 * without `input` takes that span's (or the trace's root span's) input as `input` and its output as
 * `expected`, from the caller's project only; a trace or span the project doesn't have is a 404.
 *
 * Spans keep input/output as text (docs/spans.md: strings as they are, anything else as JSON), so
 * the original JSON type is gone. The rule back: text that is a JSON object or array becomes that
 * JSON value (its text kept, so numbers keep their digits); any other text stays a JSON string (a
 * span whose input was the string "42" must not come back as the number 42); no input is null.
 */

export type TraceRef = { index: number; traceId: string; spanId: string | null };
/** One distinct span a version copies from; `bytes` is its input and output text, measured before it is read. */
export type SourceSpan = { key: string; traceId: string; spanId: string; root: boolean; bytes: number };
export type CopiedText = { input: RawJson; output: RawJson };

/** A version's trace copies read at most this much text; past it the caller is told to split the version. */
const LIMITS: QueryLimits = {
  maxExecutionSeconds: 30,
  maxMemoryBytes: READ_MEMORY_BYTES,
  maxResultRows: 20_000,
  maxResultBytes: 256 * MIB,
};
const ADVICE = 'the traces to copy hold too much input and output for one version; create it from fewer traces';

type SizeRow = { trace_id: string; span_id: string; bytes: string | number };
type SourceRow = { trace_id: string; span_id: string; input: string | null; output: string | null };

const keyOf = (traceId: string, spanId: string) => `${traceId}\u0001${spanId}`;

/**
 * Step one of a copy: which span each reference names and how large its text is, without reading the
 * text (issue 20: a 3 KB request naming one 4 MiB trace 100 times must be judged by the 400 MB it
 * resolves to before anything is copied). References to the same span share one source. 404 names the
 * first reference the project doesn't have.
 */
export async function measureSources(
  ctx: AppContext,
  projectId: string,
  refs: TraceRef[],
): Promise<{ sources: SourceSpan[]; sourceOf: Map<number, SourceSpan> }> {
  const sourceOf = new Map<number, SourceSpan>();
  if (refs.length === 0) return { sources: [], sourceOf };
  const roots = [...new Set(refs.filter((r) => r.spanId === null).map((r) => r.traceId))];
  const pairs = uniquePairs(refs.filter((r) => r.spanId !== null).map((r) => [r.traceId, r.spanId!]));
  const rootRows = roots.length
    ? await query<SizeRow>(ctx, rootQuery(projectId, roots, 'ifNull(length(r.5), 0) + ifNull(length(r.6), 0) AS bytes'))
    : [];
  const spanRows = pairs.length
    ? await query<SizeRow>(
        ctx,
        spanQuery(projectId, pairs, 'ifNull(length(input), 0) + ifNull(length(output), 0) AS bytes'),
      )
    : [];
  const byKey = new Map<string, SourceSpan>();
  const source = (row: SizeRow, root: boolean) => {
    const key = keyOf(row.trace_id, row.span_id);
    const found = byKey.get(key) ?? { key, traceId: row.trace_id, spanId: row.span_id, root, bytes: Number(row.bytes) };
    byKey.set(key, found);
    return found;
  };
  const rootOf = new Map(rootRows.map((r) => [r.trace_id, source(r, true)]));
  const spanOf = new Map(spanRows.map((r) => [keyOf(r.trace_id, r.span_id), source(r, false)]));
  for (const ref of refs) {
    const found = ref.spanId === null ? rootOf.get(ref.traceId) : spanOf.get(keyOf(ref.traceId, ref.spanId));
    if (!found) {
      const what = ref.spanId === null ? `trace '${ref.traceId}'` : `span '${ref.spanId}' of trace '${ref.traceId}'`;
      throw new NotFoundError(`test_cases[${ref.index}]: source ${what} not found in this project`);
    }
    sourceOf.set(ref.index, found);
  }
  return { sources: [...byKey.values()], sourceOf };
}

/** Step two: the text of each distinct source (by its key), read once however often it is referenced. */
export async function readSources(
  ctx: AppContext,
  projectId: string,
  sources: SourceSpan[],
): Promise<Map<string, CopiedText>> {
  const out = new Map<string, CopiedText>();
  const roots = sources.filter((s) => s.root).map((s) => s.traceId);
  const spans = sources.filter((s) => !s.root).map((s): [string, string] => [s.traceId, s.spanId]);
  const rows = [
    ...(roots.length ? await query<SourceRow>(ctx, rootQuery(projectId, roots, 'r.5 AS input, r.6 AS output')) : []),
    ...(spans.length ? await query<SourceRow>(ctx, spanQuery(projectId, spans, 'input, output')) : []),
  ];
  for (const row of rows)
    out.set(keyOf(row.trace_id, row.span_id), { input: jsonOfText(row.input), output: jsonOfText(row.output) });
  // A trace deleted between the two steps: the version can't be made as asked.
  for (const s of sources)
    if (!out.has(s.key)) throw new NotFoundError(`source trace '${s.traceId}' not found in this project`);
  return out;
}

function uniquePairs(pairs: [string, string][]): [string, string][] {
  const seen = new Map(pairs.map((p) => [keyOf(p[0], p[1]), p]));
  return [...seen.values()];
}

/** Span text back to JSON (see the module comment). */
export function jsonOfText(text: string | null): RawJson {
  if (text === null) return new RawJson('null');
  const trimmed = text.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      const raw = parseJsonKeepingRaw(trimmed, (path) => path.length === 0) as RawJson;
      if (!raw.problem) return raw;
    } catch {
      // Not JSON after all: a string.
    }
  }
  // Postgres text can't hold U+0000; it is the one character a copied string loses (to U+FFFD).
  return new RawJson(JSON.stringify(text.replaceAll('\u0000', '\uFFFD')));
}

async function query<T>(ctx: AppContext, q: { query: string; query_params: Record<string, unknown> }): Promise<T[]> {
  return withinLimits(LIMITS, ADVICE, () => ctx.ch.rows<T>(q));
}

/**
 * The root span of each trace as the trace list has it (the rollup's `root`: the span without a
 * parent, else the earliest). Tuple: (name, span_id, start, metadata, input, output). `columns` is a
 * fixed select list of this module (text or sizes), never the caller's.
 * Params: project (String), traces (Array(String)).
 */
function rootQuery(projectId: string, traceIds: string[], columns: string) {
  return {
    query: `SELECT trace_id, r.2 AS span_id, ${columns}
              FROM (SELECT trace_id, argMinMerge(root) AS r FROM traces
                     WHERE project_id = {project:String} AND trace_id IN {traces:Array(String)}
                     GROUP BY trace_id)
            ${settingsClause(LIMITS)}`,
    query_params: { project: projectId, traces: traceIds },
  };
}

/**
 * Named spans; a span stored twice (re-sent by two processes at once) answers once.
 * Params: project (String), traces (Array(String)), spans (Array(Tuple(String, String))).
 */
function spanQuery(projectId: string, pairs: [string, string][], columns: string) {
  return {
    query: `SELECT trace_id, span_id, ${columns} FROM spans
             WHERE project_id = {project:String} AND trace_id IN {traces:Array(String)}
               AND (trace_id, span_id) IN {spans:Array(Tuple(String, String))}
             LIMIT 1 BY trace_id, span_id
            ${settingsClause(LIMITS)}`,
    query_params: {
      project: projectId,
      traces: [...new Set(pairs.map((p) => p[0]))],
      spans: pairs.map((p) => new TupleParam(p)),
    },
  };
}
