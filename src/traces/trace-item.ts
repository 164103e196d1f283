import type { StoredSpanRow, TraceAggregateRow } from './queries.js';
import type { AnswerOf } from '../answer-schemas.js';
import type { SpanAnswer, SpanEventAnswer, SpanLinkAnswer, TraceListItemAnswer } from './answers.js';

/**
 * The trace list item (docs/traces.md, "Trace list item") and the span records of the detail read,
 * built from ClickHouse rows. Pure.
 */

/** Inferred from the answer schemas (answers.ts): the shapes are declared once, in zod. */
export type TraceListItem = AnswerOf<typeof TraceListItemAnswer>;
export type SpanRecord = AnswerOf<typeof SpanAnswer>;
export type SpanEventRecord = AnswerOf<typeof SpanEventAnswer>;
export type SpanLinkRecord = AnswerOf<typeof SpanLinkAnswer>;

/** `{WEB_URL}/projects/{project_id}/traces/{trace_id}` (docs/concepts.md, trace fields). */
export function traceUrl(webUrl: string, projectId: string, traceId: string): string {
  return `${webUrl.replace(/\/+$/, '')}/projects/${encodeURIComponent(projectId)}/traces/${encodeURIComponent(traceId)}`;
}

/** Costs are sums of floats; rounding to nano-units keeps 0.1 + 0.2 from answering 0.30000000000000004. */
export function roundCost(value: number): number {
  return Math.round(value * 1e9) / 1e9;
}

export function isoOf(ms: string | number): string {
  return new Date(Number(ms)).toISOString();
}

function orNull(value: string): string | null {
  return value === '' ? null : value;
}

/** All spans' metadata, the root's winning; among other spans the earliest-sorted pair wins. */
export function mergeMetadata(pairs: [string, string][], root: Record<string, string>): Record<string, string> {
  const merged: Record<string, string> = {};
  for (const [key, value] of [...pairs].sort((a, b) =>
    a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0,
  )) {
    if (!(key in merged)) merged[key] = value;
  }
  return Object.assign(merged, root);
}

export function listItemOf(row: TraceAggregateRow, projectId: string, webUrl: string): TraceListItem {
  const start = Number(row.start_ms);
  return {
    trace_id: row.trace_id,
    project_id: projectId,
    name: row.name,
    trace_start_time: isoOf(start),
    user_id: orNull(row.trace_user),
    session_id: orNull(row.trace_session),
    span_count: Number(row.span_count),
    duration_ms: row.end_ms === null ? null : Number(row.end_ms) - start,
    error_count: Number(row.error_count),
    input: row.input,
    output: row.output,
    trace_url: traceUrl(webUrl, projectId, row.trace_id),
    metadata_map: mergeMetadata(row.metadata_pairs, row.root_metadata),
    total_cost: roundCost(row.total_cost),
    total_input_tokens: Number(row.input_tokens),
    total_output_tokens: Number(row.output_tokens),
    tags: [...row.tags].sort(),
    model_names: [...row.model_names].sort(),
  };
}

export function spanRecordOf(row: StoredSpanRow): SpanRecord {
  const start = Number(row.start_ms);
  const end = row.end_ms === null ? null : Number(row.end_ms);
  return {
    trace_id: row.trace_id,
    span_id: row.span_id,
    parent_span_id: orNull(row.parent_span_id),
    name: row.name,
    kind: row.kind,
    start_time: isoOf(start),
    end_time: end === null ? null : isoOf(end),
    duration_ms: end === null ? null : end - start,
    // Ingest stores only the three (span-input.ts, otlp mapping); the column is a plain string.
    status: row.status as SpanRecord['status'],
    error_type: orNull(row.error_type),
    error_message: orNull(row.error_message),
    model_name: orNull(row.model_name),
    environment: orNull(row.environment),
    user_id: orNull(row.user_id),
    session_id: orNull(row.session_id),
    input: row.input,
    output: row.output,
    metadata: row.metadata,
    cost: row.cost,
    input_tokens: Number(row.input_tokens),
    output_tokens: Number(row.output_tokens),
    total_tokens: Number(row.total_tokens),
    evaluation_run_id: orNull(row.evaluation_run_id),
    cost_source: row.cost_source as SpanRecord['cost_source'],
    cache_read_tokens: Number(row.cache_read_tokens),
    cache_write_tokens: Number(row.cache_write_tokens),
    reasoning_tokens: Number(row.reasoning_tokens),
    time_to_first_token_ms: row.time_to_first_token_ms,
    output_tokens_per_second: row.output_tokens_per_second,
    events: eventsOf(row.events),
    links: linksOf(row.links),
    resource: row.resource,
    attributes: row.attributes,
    dropped_attributes_count: Number(row.dropped_attributes_count),
    tags: row.tags,
    prompt_name: orNull(row.prompt_name),
    prompt_version: Number(row.prompt_version) || null,
  };
}

type StoredEvent = { name: string; time: number; attributes: Record<string, string> };

/** The stored events (span-writer.ts: epoch-ms times) with ISO times, as every other time is answered. */
function eventsOf(text: string): SpanEventRecord[] {
  if (text === '[]') return [];
  return (JSON.parse(text) as StoredEvent[]).map((e) => ({
    name: e.name,
    time: isoOf(e.time),
    attributes: e.attributes,
  }));
}

function linksOf(text: string): SpanLinkRecord[] {
  return text === '[]' ? [] : (JSON.parse(text) as SpanLinkRecord[]);
}

/**
 * The trace-level values (docs/concepts.md, "How trace fields are derived") computed from a trace's spans directly (the detail read's answer,
 * and the definition the rollup must agree with).
 */
export function deriveTrace(spans: SpanRecord[], projectId: string, webUrl: string): TraceListItem {
  const ms = (iso: string) => Date.parse(iso);
  const byStart = [...spans].sort((a, b) => ms(a.start_time) - ms(b.start_time));
  const roots = byStart.filter((s) => s.parent_span_id === null);
  const head = roots[0] ?? byStart[0]!;
  const firstWith = (field: 'user_id' | 'session_id') =>
    head[field] ?? byStart.find((s) => s[field] !== null)?.[field] ?? null;
  const start = ms(byStart[0]!.start_time);
  const ends = spans.filter((s) => s.end_time !== null).map((s) => ms(s.end_time!));
  const pairs: [string, string][] = spans.filter((s) => s !== head).flatMap((s) => Object.entries(s.metadata));
  const sum = (pick: (s: SpanRecord) => number) => spans.reduce((acc, s) => acc + pick(s), 0);
  return {
    trace_id: head.trace_id,
    project_id: projectId,
    name: head.name,
    trace_start_time: isoOf(start),
    user_id: firstWith('user_id'),
    session_id: firstWith('session_id'),
    span_count: spans.length,
    duration_ms: ends.length ? Math.max(...ends) - start : null,
    error_count: spans.filter((s) => s.status === 'error').length,
    input: head.input,
    output: head.output,
    trace_url: traceUrl(webUrl, projectId, head.trace_id),
    metadata_map: mergeMetadata(pairs, head.metadata),
    total_cost: roundCost(sum((s) => s.cost)),
    total_input_tokens: sum((s) => s.input_tokens),
    total_output_tokens: sum((s) => s.output_tokens),
    tags: sortedUnion(spans.map((s) => s.tags)),
    model_names: sortedUnion(spans.map((s) => (s.model_name === null ? [] : [s.model_name]))),
  };
}

function sortedUnion(lists: string[][]): string[] {
  return [...new Set(lists.flat())].sort();
}
