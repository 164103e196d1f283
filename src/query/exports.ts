import { traceCondition } from './conditions.js';
import {
  FINAL_SETTINGS,
  ROOT_HEAD_JSON,
  ROOT_NAME,
  SESSION,
  traceHourBefore,
  traceHourFrom,
  USER,
} from './expressions.js';
import { paramBuilder, timeParam, type Param, type Query } from './params.js';
import type { Predicate } from './predicates.js';
import { currentScores } from './scores.js';

/**
 * The SQL of exports (docs/exports.md; quality.md §6). An export is written in parts, each one query
 * whose answer ClickHouse writes in the export's format (FORMAT Parquet / JSONEachRow / CSVWithNames):
 * the embedded engine answers a query whole, so a part's rows bound the memory an export takes.
 *
 * `planQuery` counts the export's rows by hour; src/exports/plan.ts groups consecutive hours into
 * parts of at most the part size, and splits an hour holding more into `shards` parts by a hash of
 * the row's id. A part is then `partQuery`: the window's conditions, the part's hours, its shard.
 * The parts of one plan are disjoint and cover the window, so every row is written once.
 *
 * Rows by kind:
 * - spans: the spans that start in the window; with filters, only those of the traces the filters
 *   select (the trace list's predicates on the trace rollup, over the window with the late-root
 *   slack and a day's lookback: a trace that started the day before may have spans in the window).
 *   Hours: the span's start hour. Shard: its span id.
 * - traces: the merged trace rows that start in the window and match the filters. Hours: the hour a
 *   trace is filed under (`trace_start_hour`; every row of a trace carries it). Shard: its trace id.
 * - scores: the current scores created in the window; with filters, only those of the traces the
 *   filters select. Hours: the creation hour. Shard: the score id.
 */

export const EXPORT_KINDS = ['spans', 'traces', 'scores'] as const;
export type ExportKind = (typeof EXPORT_KINDS)[number];
export const EXPORT_FORMATS = ['parquet', 'jsonl', 'csv'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** A part's rows: the hours `[from_hour, to_hour)` (epoch seconds) and, for a busy hour, one shard of it. */
export type PartWindow = { from_hour: number; to_hour: number; shards: number; shard: number };

export type ExportSelection = {
  projectId: string;
  kind: ExportKind;
  /** Epoch ms, start inclusive, end exclusive. */
  startMs: number;
  endMs: number;
  filters: readonly Predicate[];
};

/** The ClickHouse output format of each export format; a CSV part after the first has no header. */
export function clickhouseFormat(format: ExportFormat, firstPart: boolean): string {
  if (format === 'parquet') return 'Parquet';
  if (format === 'jsonl') return 'JSONEachRow';
  return firstPart ? 'CSVWithNames' : 'CSV';
}

/**
 * Output settings: ISO 8601 times (UTC, as every answer of the API), Parquet strings as UTF-8 strings
 * rather than bytes, and FINAL not merging across month partitions (FINAL_SETTINGS).
 *
 * Blocks of 8,192 rows and Parquet row groups of 10,000 keep what a part holds in flight small: with
 * the defaults (65,536-row blocks, one row group for the whole part) a worker exporting 1M spans in
 * parts of 100,000 peaked at 1.68 GB, with these at 1.31 GB (0.80 GB of it the embedded engines held
 * before the export began), and finished in 12 s instead of 18; the files are 8% larger.
 */
const OUTPUT_SETTINGS = [
  "date_time_output_format = 'iso'",
  'output_format_parquet_string_as_string = 1',
  'max_block_size = 8192',
  'output_format_parquet_row_group_size = 10000',
  ...FINAL_SETTINGS,
];

const SPAN_COLUMNS = `trace_id, span_id, parent_span_id, name, kind, start_time, end_time, status, error_type, error_message,
  model_name, environment, user_id, session_id, input, output, metadata, attributes, tags, cost, input_tokens, output_tokens,
  total_tokens, prompt_name, prompt_version, evaluation_run_id`;

const TRACE_COLUMNS = `trace_id, start_time, end_time, ${ROOT_NAME} AS name, ${USER} AS user_id, ${SESSION} AS session_id,
  span_count, error_count, total_cost, input_tokens, output_tokens, total_tokens,
  root_span.5 AS input, root_span.6 AS output,
  JSONExtract(${ROOT_HEAD_JSON}, 2, 'Map(String, String)') AS metadata,
  model_names, environments, tags`;

const SCORE_EXPORT_COLUMNS = `score_id, trace_id, span_id, session_id, name, data_type, value, string_value, comment, source,
  evaluator_id, evaluator_version, config_id, metadata, environment, created_at, updated_at`;

/** The ids of the traces the filters select, for spans and scores (see above). */
function filteredTraceIds(filters: readonly Predicate[], param: Param): string {
  const conditions = [
    'project_id = {project:String}',
    `trace_start_hour >= toStartOfHour({from:DateTime64(3, 'UTC')}) - INTERVAL 24 HOUR`,
    traceHourBefore(`{to:DateTime64(3, 'UTC')}`),
    ...filters.map((f) => traceCondition(f, param, undefined, { project: '{project:String}' })),
  ];
  return `trace_id IN (SELECT trace_id FROM traces FINAL WHERE ${conditions.join(' AND ')})`;
}

type Source = {
  /** `FROM ... WHERE ...` with the window's conditions and `extra`. */
  fromWhere: (extra: string[]) => string;
  hour: string;
  shardKey: string;
  columns: string;
  order: string;
  /** The time the rows are ordered by first (chunks of a part are ranges of it). */
  time: string;
};

function source(s: ExportSelection, param: Param): Source {
  const from = `{from:DateTime64(3, 'UTC')}`;
  const to = `{to:DateTime64(3, 'UTC')}`;
  const byTraces = s.filters.length ? [filteredTraceIds(s.filters, param)] : [];
  const plain = (table: string, where: string[]) => (extra: string[]) =>
    `FROM ${table} WHERE ${[...where, ...extra].join(' AND ')}`;
  switch (s.kind) {
    case 'spans':
      return {
        fromWhere: plain('spans', [
          'project_id = {project:String}',
          `start_time >= ${from}`,
          `start_time < ${to}`,
          ...byTraces,
        ]),
        hour: 'toStartOfHour(start_time)',
        shardKey: 'span_id',
        columns: SPAN_COLUMNS,
        order: 'start_time, trace_id, span_id',
        time: 'start_time',
      };
    case 'traces':
      return {
        fromWhere: plain('traces FINAL', [
          'project_id = {project:String}',
          traceHourFrom(from),
          traceHourBefore(to),
          `start_time >= ${from}`,
          `start_time < ${to}`,
          ...s.filters.map((f) => traceCondition(f, param, undefined, { project: '{project:String}', from })),
        ]),
        hour: 'trace_start_hour',
        shardKey: 'trace_id',
        columns: TRACE_COLUMNS,
        order: 'start_time, trace_id',
        time: 'start_time',
      };
    case 'scores':
      // currentScores applies its conditions to every row of a score and again to the newest one.
      return {
        fromWhere: (extra) =>
          `FROM ${currentScores('{project:String}', [`created_at >= ${from}`, `created_at < ${to}`, ...byTraces, ...extra])}`,
        hour: 'toStartOfHour(created_at)',
        shardKey: 'score_id',
        columns: SCORE_EXPORT_COLUMNS,
        order: 'created_at, score_id',
        time: 'created_at',
      };
  }
}

const TIME = "DateTime64(3, 'UTC')";

function baseParams(s: ExportSelection): Record<string, unknown> {
  return { project: s.projectId, from: timeParam(TIME, s.startMs / 1000), to: timeParam(TIME, s.endMs / 1000) };
}

/** The export's rows by hour: `[{hour (epoch s), rows}]`, oldest first. */
export function planQuery(s: ExportSelection): Query {
  const params = baseParams(s);
  const { param } = paramBuilder(params);
  const src = source(s, param);
  return {
    query: `SELECT toUnixTimestamp(${src.hour}) AS hour, count() AS rows ${src.fromWhere([])}
GROUP BY hour ORDER BY hour
SETTINGS ${FINAL_SETTINGS.join(', ')}`,
    query_params: params,
  };
}

/** The conditions of a part's rows: its hours and, for a busy hour, its shard. */
function partConditions(src: Source, part: PartWindow, params: Record<string, unknown>): string[] {
  params.part_from = part.from_hour;
  params.part_to = part.to_hour;
  const where = [
    `${src.hour} >= toDateTime({part_from:UInt32}, 'UTC')`,
    `${src.hour} < toDateTime({part_to:UInt32}, 'UTC')`,
  ];
  if (part.shards > 1) {
    params.shards = part.shards;
    params.shard = part.shard;
    where.push(`cityHash64(${src.shardKey}) % {shards:UInt32} = {shard:UInt32}`);
  }
  return where;
}

/**
 * A part's rows by minute of the time they are ordered by: `[{minute (epoch s), rows}]`, oldest
 * first. The runner cuts a JSON lines or CSV part on the embedded engine into chunks of consecutive
 * minutes (`chunk`), one query each, written one after the other into the part's file: that engine
 * answers a query whole, and a chunk's answer is a fraction of the part's.
 */
export function partMinutesQuery(s: ExportSelection, part: PartWindow): Query {
  const params = baseParams(s);
  const { param } = paramBuilder(params);
  const src = source(s, param);
  const where = partConditions(src, part, params);
  return {
    query: `SELECT toUnixTimestamp(toStartOfMinute(${src.time})) AS minute, count() AS rows ${src.fromWhere(where)}
GROUP BY minute ORDER BY minute
SETTINGS ${FINAL_SETTINGS.join(', ')}`,
    query_params: params,
  };
}

/** A range of a part's rows by their time, epoch seconds: `[from, to)`, either end open when absent. */
export type PartChunk = { from?: number; to?: number };

/** One part's rows (or one chunk of them) in the export's format, ordered by time. */
export function partQuery(s: ExportSelection, part: PartWindow, format: string, chunk: PartChunk = {}): Query {
  const params = baseParams(s);
  const { param } = paramBuilder(params);
  const src = source(s, param);
  const where = partConditions(src, part, params);
  if (chunk.from !== undefined) {
    params.chunk_from = chunk.from;
    where.push(`${src.time} >= toDateTime({chunk_from:UInt32}, 'UTC')`);
  }
  if (chunk.to !== undefined) {
    params.chunk_to = chunk.to;
    where.push(`${src.time} < toDateTime({chunk_to:UInt32}, 'UTC')`);
  }
  const withRoot = s.kind === 'traces' ? 'WITH finalizeAggregation(root) AS root_span\n' : '';
  return {
    query: `${withRoot}SELECT ${src.columns}
${src.fromWhere(where)}
ORDER BY ${src.order}
SETTINGS ${OUTPUT_SETTINGS.join(', ')}
FORMAT ${format}`,
    query_params: params,
  };
}
