import { paramBuilder, type Query } from '../query/params.js';
import { DURATION_MS_OR_NULL } from '../query/expressions.js';
import { predicateCondition } from '../query/conditions.js';
import type { SpanPredicate } from '../query/predicates.js';
import { MIB, SCAN_MEMORY_BYTES, settingsClause, type QueryLimits } from '../query/limits.js';
import type { ThresholdConfig, ThresholdMeasure } from '../detectors/config.js';

/**
 * The ClickHouse side of detection (pure; src/signals/detection.ts runs them).
 *
 * An error or threshold detector's pass is ONE query over the spans stored since its watermark
 * (`ingested_at`, minmax-indexed: clickhouse/0003_detection.sql), never a scan of history:
 * - the spans that match (status error, or the measure over the line, and the detector's filters),
 *   leaving out those the detector already turned into findings (its lower bound overlaps the last
 *   pass by a lateness margin, so a span whose insert became visible late is still examined);
 * - oldest stored first, at most `limit`, so a backlog is worked off over several passes;
 * - each with its trace's start (the trace rollup, looked up by its key), which the reopen rule needs;
 * - and the newest `ingested_at` of the project's spans in the range: the pass's next watermark.
 * Offline-evaluation spans are left out: an evaluation run fails cases on purpose.
 */

export const DETECTION_LIMITS: QueryLimits = {
  maxExecutionSeconds: 30,
  maxMemoryBytes: SCAN_MEMORY_BYTES,
  maxResultRows: 1,
  maxResultBytes: 64 * MIB,
};

/** What the pass looks for: spans in error, or spans whose measure crosses the line. */
export type Condition = { type: 'error' } | { type: 'threshold'; config: ThresholdConfig };

export type IncrementalInput = {
  projectId: string;
  detectorId: string;
  condition: Condition;
  predicates: SpanPredicate[];
  /** Exclusive lower bound on `ingested_at`, epoch ms (the watermark minus the overlap). */
  fromMs: number;
  limit: number;
};

/** A span's value of a threshold measure (latency is duration_ms, as in widgets). */
export function measureExpression(measure: ThresholdMeasure): string {
  return measure === 'latency' || measure === 'duration_ms' ? DURATION_MS_OR_NULL : `toFloat64(${measure})`;
}

/**
 * One row: `seen` (epoch ms, 0 when nothing was stored in the range) and `rows`, an array of
 * [trace_id, span_id, span_name, error_type, error_message (cut), start ms, ingested ms, measured,
 * trace start ms (0 when the rollup has no row yet)].
 */
export function incrementalQuery(p: IncrementalInput): Query {
  const b = paramBuilder({ project: p.projectId });
  const from = b.param("DateTime64(3, 'UTC')", p.fromMs / 1000);
  const detector = b.param('String', p.detectorId);
  const where = ['project_id = {project:String}', `ingested_at > ${from}`, "evaluation_run_id = ''"];
  let measured = '0';
  if (p.condition.type === 'error') where.push("status = 'error'");
  else {
    const { measure, operator, value } = p.condition.config;
    measured = measureExpression(measure);
    where.push(`${measured} IS NOT NULL`, `${measured} ${operator} ${b.param('Float64', value)}`);
  }
  where.push(...p.predicates.map((predicate) => predicateCondition(predicate, b)));
  // Findings are stored after the spans they name, so found_at >= ingested_at > from.
  where.push(
    `(trace_id, span_id) NOT IN (SELECT trace_id, span_id FROM findings WHERE project_id = {project:String} AND detector_id = ${detector} AND found_at >= ${from})`,
  );
  return {
    query: `WITH cand AS (
  SELECT trace_id, span_id, toString(name) AS span_name, toString(error_type) AS error_type, substring(error_message, 1, 300) AS message,
         start_time, trace_start_hour, ingested_at, ifNull(${measured}, 0) AS measured
  FROM spans
  WHERE ${where.join('\n    AND ')}
  ORDER BY ingested_at, trace_id, span_id
  LIMIT ${b.param('UInt32', p.limit)}
)
SELECT
  (SELECT toUnixTimestamp64Milli(max(ingested_at)) FROM spans WHERE project_id = {project:String} AND ingested_at > ${from}) AS seen,
  groupArray((c.trace_id, c.span_id, c.span_name, c.error_type, c.message, toUnixTimestamp64Milli(c.start_time), toUnixTimestamp64Milli(c.ingested_at), c.measured,
              toUnixTimestamp64Milli(t.trace_start))) AS rows
FROM cand AS c
LEFT JOIN (
  SELECT trace_id, min(start_time) AS trace_start FROM traces
  WHERE project_id = {project:String} AND (trace_start_hour, trace_id) IN (SELECT trace_start_hour, trace_id FROM cand)
  GROUP BY trace_id
) AS t ON t.trace_id = c.trace_id
${settingsClause(DETECTION_LIMITS)}`,
    query_params: b.params,
  };
}

export type CandidateRow = [
  string,
  string,
  string,
  string,
  string,
  number | string,
  number | string,
  number,
  number | string,
];

/**
 * For a sql detector's rows: which (trace, span) pairs the detector already found, and each trace's
 * start. Rows: trace_id, span_id, known (0/1), trace_start (epoch ms, 0 when unknown).
 */
export function knownFindingsQuery(
  projectId: string,
  detectorId: string,
  traceIds: string[],
  spanIds: string[],
): Query {
  return {
    query: `SELECT tupleElement(c, 1) AS trace_id, tupleElement(c, 2) AS span_id,
       (trace_id, span_id) IN (SELECT trace_id, span_id FROM findings WHERE project_id = {project:String} AND detector_id = {detector:String} AND trace_id IN {traces:Array(String)}) AS known,
       toUnixTimestamp64Milli(t.trace_start) AS trace_start
FROM (SELECT arrayJoin(arrayZip({traces:Array(String)}, {spans:Array(String)})) AS c) AS x
LEFT JOIN (
  SELECT trace_id AS tid, min(start_time) AS trace_start FROM traces
  WHERE project_id = {project:String} AND trace_id IN {traces:Array(String)}
  GROUP BY trace_id
) AS t ON t.tid = tupleElement(x.c, 1)
${settingsClause({ ...DETECTION_LIMITS, maxResultRows: Math.max(1, traceIds.length) })}`,
    query_params: { project: projectId, detector: detectorId, traces: traceIds, spans: spanIds },
  };
}
