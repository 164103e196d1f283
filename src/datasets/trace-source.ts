import { TupleParam } from '@clickhouse/client';
import type { AppContext } from '../context.js';
import { NotFoundError } from '../errors.js';
import { MIB, settingsClause, withinLimits, type QueryLimits } from '../query-limits.js';
import { parseJsonKeepingRaw, RawJson } from './raw-json.js';

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
export type CopiedCase = { input: RawJson; expected: RawJson; spanId: string };

/** A version's trace copies read at most this much text; past it the caller is told to split the version. */
const LIMITS: QueryLimits = { maxExecutionSeconds: 30, maxMemoryBytes: 1_000_000_000, maxResultRows: 20_000, maxResultBytes: 256 * MIB };
const ADVICE = 'the traces to copy hold too much input and output for one version; create it from fewer traces';

type SourceRow = { trace_id: string; span_id: string; input: string | null; output: string | null };

/** The copied input/expected of each reference, by its index in the request; 404 names the first missing one. */
export async function copyFromTraces(ctx: AppContext, projectId: string, refs: TraceRef[]): Promise<Map<number, CopiedCase>> {
  const out = new Map<number, CopiedCase>();
  if (refs.length === 0) return out;
  const roots = refs.filter((r) => r.spanId === null);
  const spans = refs.filter((r) => r.spanId !== null);
  const rootRows = roots.length ? await query(ctx, rootQuery(projectId, [...new Set(roots.map((r) => r.traceId))])) : [];
  const spanRows = spans.length ? await query(ctx, spanQuery(projectId, spans.map((r) => [r.traceId, r.spanId!]))) : [];
  const rootOf = new Map(rootRows.map((r) => [r.trace_id, r]));
  const spanOf = new Map(spanRows.map((r) => [`${r.trace_id}\u0001${r.span_id}`, r]));
  for (const ref of refs) {
    const row = ref.spanId === null ? rootOf.get(ref.traceId) : spanOf.get(`${ref.traceId}\u0001${ref.spanId}`);
    if (!row) {
      const what = ref.spanId === null ? `trace '${ref.traceId}'` : `span '${ref.spanId}' of trace '${ref.traceId}'`;
      throw new NotFoundError(`test_cases[${ref.index}]: source ${what} not found in this project`);
    }
    out.set(ref.index, { input: jsonOfText(row.input), expected: jsonOfText(row.output), spanId: row.span_id });
  }
  return out;
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

async function query(ctx: AppContext, q: { query: string; query_params: Record<string, unknown> }): Promise<SourceRow[]> {
  return withinLimits(LIMITS, ADVICE, async () => {
    const result = await ctx.ch.client.query({ ...q, format: 'JSONEachRow' });
    return result.json<SourceRow>();
  });
}

/**
 * The root span of each trace as the trace list has it (the rollup's `root`: the span without a
 * parent, else the earliest). Tuple: (name, span_id, start, metadata, input, output).
 * Params: project (String), traces (Array(String)).
 */
function rootQuery(projectId: string, traceIds: string[]) {
  return {
    query: `SELECT trace_id, r.2 AS span_id, r.5 AS input, r.6 AS output
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
function spanQuery(projectId: string, pairs: [string, string][]) {
  return {
    query: `SELECT trace_id, span_id, input, output FROM spans
             WHERE project_id = {project:String} AND trace_id IN {traces:Array(String)}
               AND (trace_id, span_id) IN {spans:Array(Tuple(String, String))}
             LIMIT 1 BY trace_id, span_id
            ${settingsClause(LIMITS)}`,
    query_params: { project: projectId, traces: [...new Set(pairs.map((p) => p[0]))], spans: pairs.map((p) => new TupleParam(p)) },
  };
}
