import type { SpanPart } from '../span-parts.js';
import { isLangChainKey } from '../framework-keys.js';
import type { SpanInput } from '../../traces/span-input.js';
import {
  MAX_ERROR_MESSAGE_LENGTH,
  MAX_METADATA_KEY_LENGTH,
  MAX_METADATA_KEYS,
  MAX_METADATA_VALUE_LENGTH,
  MAX_NAME_LENGTH,
  MAX_SHORT_TEXT_LENGTH,
  MAX_TAG_LENGTH,
  MAX_TAGS,
} from '../../traces/span-input.js';

/**
 * A LangSmith run (its post, its patch, or both merged) as the native span fields of one span part
 * (quality.md §5; docs/langsmith-protocol.md has the table). Pure: no I/O.
 *
 * - Ids: `id` is the span; the trace is `trace_id`, else the first segment of `dotted_order`; the
 *   parent is `parent_run_id`, else the second-to-last segment (each segment is a
 *   `YYYYMMDDTHHMMSSffffffZ` stamp followed by the run's UUID).
 * - Times: ISO strings (Python, and JS's `start_time`, with microseconds) or epoch milliseconds (JS's
 *   `end_time`).
 * - `session_name` (the LangSmith project) is kept in metadata as `langsmith.project`: Sightline's
 *   environment is a deployment stage, and a LangSmith project is usually an app; the Sightline
 *   project is the API key's.
 */

export type RunPayload = Record<string, unknown>;

const RUN_KINDS = new Set(['llm', 'chain', 'tool', 'retriever', 'prompt', 'parser', 'embedding']);
/** Run fields read into span fields; the other plain ones go to metadata. */
const CONSUMED = new Set([
  'id',
  'trace_id',
  'dotted_order',
  'parent_run_id',
  'name',
  'run_type',
  'start_time',
  'end_time',
  'inputs',
  'outputs',
  'error',
  'extra',
  'events',
  'tags',
  'session_name',
  'session_id',
  'serialized',
  'child_runs',
  'attachments',
  'inputs_s3_urls',
  'outputs_s3_urls',
]);
/** Metadata keys LangSmith groups runs into threads by, in its order of preference. */
const THREAD_KEYS = ['session_id', 'thread_id', 'conversation_id'] as const;

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const count = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined;

/** `YYYYMMDDTHHMMSSffffffZ<uuid>` segments joined by dots: the run UUIDs from root to the run. */
export function dottedOrderIds(dotted: unknown): string[] {
  if (typeof dotted !== 'string' || dotted === '') return [];
  return dotted.split('.').map((segment) => {
    const z = segment.indexOf('Z');
    return z >= 0 ? segment.slice(z + 1) : segment;
  });
}

/** A run time as ISO 8601: epoch ms (JS `end_time`) or an ISO string (a zone-less one is UTC). */
export function runTime(v: unknown): string | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) {
    const d = new Date(v);
    return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
  }
  if (typeof v !== 'string' || v === '') return undefined;
  return /([zZ]|[+-]\d\d:?\d\d)$/.test(v) ? v : `${v}Z`;
}

const ms = (iso: string | undefined): number | undefined => {
  if (iso === undefined) return undefined;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? undefined : t;
};

export type RunIds = { span_id: string; trace_id: string; parent_span_id: string | undefined };

/** The run's ids, or an error sentence when it has none to file it under. */
export function runIds(run: RunPayload): RunIds | string {
  const id = str(run.id);
  if (!id) return 'id: a run needs its id';
  if (id.length > 128) return 'id: at most 128 characters';
  const chain = dottedOrderIds(run.dotted_order);
  const traceId = str(run.trace_id) ?? chain[0] ?? id;
  const parent = str(run.parent_run_id) ?? (chain.length >= 2 ? chain[chain.length - 2] : undefined);
  return { span_id: id, trace_id: traceId, parent_span_id: parent };
}

type Usage = {
  input_tokens?: number;
  output_tokens?: number;
  total_tokens?: number;
  cache_read_tokens?: number;
  cache_write_tokens?: number;
  reasoning_tokens?: number;
};

/** LangChain's `usage_metadata` (input/output/total, cache and reasoning details). */
function fromUsageMetadata(u: unknown): Usage | undefined {
  if (!isRecord(u)) return undefined;
  const inputDetails = isRecord(u.input_token_details) ? u.input_token_details : {};
  const outputDetails = isRecord(u.output_token_details) ? u.output_token_details : {};
  const usage: Usage = {
    input_tokens: count(u.input_tokens),
    output_tokens: count(u.output_tokens),
    total_tokens: count(u.total_tokens),
    cache_read_tokens: count(inputDetails.cache_read),
    cache_write_tokens: count(inputDetails.cache_creation),
    reasoning_tokens: count(outputDetails.reasoning),
  };
  return usage.input_tokens !== undefined || usage.output_tokens !== undefined ? usage : undefined;
}

/** The older `llm_output.token_usage` (Python: snake case; JS `tokenUsage`: camel case). */
function fromTokenUsage(llmOutput: unknown): Usage | undefined {
  if (!isRecord(llmOutput)) return undefined;
  const u = isRecord(llmOutput.token_usage) ? llmOutput.token_usage : llmOutput.tokenUsage;
  if (!isRecord(u)) return undefined;
  const input = count(u.prompt_tokens) ?? count(u.promptTokens);
  const output = count(u.completion_tokens) ?? count(u.completionTokens);
  if (input === undefined && output === undefined) return undefined;
  return { input_tokens: input, output_tokens: output, total_tokens: count(u.total_tokens) ?? count(u.totalTokens) };
}

/** A chat model's generations carry their message, whose kwargs hold `usage_metadata` (LangChain JS). */
function fromGenerations(outputs: Record<string, unknown>): Usage | undefined {
  const generations = outputs.generations;
  if (!Array.isArray(generations)) return undefined;
  for (const group of generations.flat()) {
    if (!isRecord(group) || !isRecord(group.message)) continue;
    const message = group.message;
    const kwargs = isRecord(message.kwargs) ? message.kwargs : message;
    const usage = fromUsageMetadata(kwargs.usage_metadata);
    if (usage) return usage;
  }
  return undefined;
}

export function runUsage(run: RunPayload): Usage | undefined {
  const outputs = isRecord(run.outputs) ? run.outputs : {};
  const metadata = isRecord(run.extra) && isRecord(run.extra.metadata) ? run.extra.metadata : {};
  return (
    fromUsageMetadata(outputs.usage_metadata) ??
    fromUsageMetadata(metadata.usage_metadata) ??
    fromTokenUsage(outputs.llm_output) ??
    fromGenerations(outputs)
  );
}

function runModel(extra: Record<string, unknown>): string | undefined {
  const metadata = isRecord(extra.metadata) ? extra.metadata : {};
  const params = isRecord(extra.invocation_params) ? extra.invocation_params : {};
  return str(metadata.ls_model_name) ?? str(params.model) ?? str(params.model_name) ?? str(params.modelName);
}

/** Plain values as metadata strings; objects and arrays are dropped (quality.md §5). */
function plainValue(v: unknown): string | undefined {
  if (typeof v === 'string') return v.slice(0, MAX_METADATA_VALUE_LENGTH);
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v === 'boolean') return String(v);
  return undefined;
}

/**
 * The run's metadata (the user's: `extra.metadata` but the frameworks' keys, and the LangSmith
 * project) and attributes (the frameworks' keys, and the run's other plain top-level fields such as
 * `reference_example_id`).
 */
function runMetadata(
  run: RunPayload,
  extra: Record<string, unknown>,
): { metadata: Record<string, string>; attributes: Record<string, string> } {
  const metadata: Record<string, string> = {};
  const attributes: Record<string, string> = {};
  const put = (out: Record<string, string>, key: string, value: unknown) => {
    const text = plainValue(value);
    if (text === undefined || key === '' || key.length > MAX_METADATA_KEY_LENGTH || key === '__proto__') return;
    if (Object.keys(out).length >= MAX_METADATA_KEYS && !(key in out)) return;
    out[key] = text;
  };
  if (isRecord(extra.metadata))
    for (const [k, v] of Object.entries(extra.metadata)) put(isLangChainKey(k) ? attributes : metadata, k, v);
  for (const [k, v] of Object.entries(run)) if (!CONSUMED.has(k)) put(attributes, k, v);
  put(metadata, 'langsmith.project', run.session_name);
  return { metadata, attributes };
}

/** `Error: boom` (JS) or `ValueError('boom')` (Python): the type before the message. */
function errorType(error: string): string | undefined {
  const match = /^([A-Za-z_][\w.]*)(?=[:(])/.exec(error);
  return match ? match[1]!.slice(0, MAX_SHORT_TEXT_LENGTH) : undefined;
}

/** Milliseconds from the run's start to its first `new_token` event (streaming). */
function timeToFirstToken(events: unknown, start: number | undefined): number | undefined {
  if (!Array.isArray(events) || start === undefined) return undefined;
  for (const e of events) {
    if (!isRecord(e) || e.name !== 'new_token') continue;
    const at = ms(runTime(e.time));
    return at === undefined || at < start ? undefined : Math.min(at - start, 2_147_483_647);
  }
  return undefined;
}

/**
 * The span fields a run operation carries. A post is the span's create (name, kind, start, inputs);
 * a patch its update (end, outputs, error, events); the SDK merges them into one post when both are
 * queued together. Only what the operation sent is set, so a patch never blanks what its post said.
 */
export function runToSpanFields(run: RunPayload): Partial<SpanInput> {
  const fields: Partial<SpanInput> = {};
  const ids = runIds(run);
  if (typeof ids !== 'string' && ids.parent_span_id) fields.parent_span_id = ids.parent_span_id.slice(0, 128);
  const name = str(run.name);
  if (name) fields.name = name.slice(0, MAX_NAME_LENGTH);
  const runType = str(run.run_type);
  if (runType) fields.kind = RUN_KINDS.has(runType) ? runType : 'custom';
  const start = runTime(run.start_time);
  const end = runTime(run.end_time);
  if (start) fields.start_time = start;
  if (end) fields.end_time = end;
  if (run.inputs !== undefined && run.inputs !== null) fields.input = run.inputs;
  if (run.outputs !== undefined && run.outputs !== null) fields.output = run.outputs;

  const error = str(run.error);
  if (error) {
    fields.status = 'error';
    fields.error_message = error.slice(0, MAX_ERROR_MESSAGE_LENGTH);
    const type = errorType(error);
    if (type) fields.error_type = type;
  } else if (end) fields.status = 'ok';

  const extra = isRecord(run.extra) ? run.extra : {};
  const model = runModel(extra);
  if (model) fields.model_name = model.slice(0, MAX_SHORT_TEXT_LENGTH);
  const usage = runUsage(run);
  if (usage)
    for (const [k, v] of Object.entries(usage)) if (v !== undefined) (fields as Record<string, unknown>)[k] = v;

  const { metadata, attributes } = runMetadata(run, extra);
  if (Object.keys(metadata).length) fields.metadata = metadata;
  if (Object.keys(attributes).length) fields.attributes = attributes;
  const rawMetadata = isRecord(extra.metadata) ? extra.metadata : {};
  for (const key of THREAD_KEYS) {
    const session = str(rawMetadata[key]);
    if (session) {
      fields.session_id = session.slice(0, MAX_SHORT_TEXT_LENGTH);
      break;
    }
  }
  const user = str(rawMetadata.user_id);
  if (user) fields.user_id = user.slice(0, MAX_SHORT_TEXT_LENGTH);

  if (Array.isArray(run.tags)) {
    const tags = run.tags.filter((t): t is string => typeof t === 'string' && t !== '' && t.length <= MAX_TAG_LENGTH);
    if (tags.length) fields.tags = [...new Set(tags)].slice(0, MAX_TAGS);
  }
  const ttft = timeToFirstToken(run.events, ms(start));
  if (ttft !== undefined) fields.time_to_first_token_ms = ttft;
  return fields;
}

/**
 * One run operation as a span part: a post is the create, a patch an update. The part's time is
 * the run's start (post) or end (patch), so pieces merge in the producer's order.
 */
export function runToSpanPart(run: RunPayload, op: 'post' | 'patch', receivedAt: number): SpanPart | string {
  const ids = runIds(run);
  if (typeof ids === 'string') return ids;
  const fields = runToSpanFields(run);
  const at = ms(op === 'post' ? fields.start_time : (fields.end_time ?? fields.start_time));
  return {
    span_id: ids.span_id,
    trace_id: ids.trace_id,
    kind: op === 'post' ? 'create' : 'update',
    fields,
    received_at: receivedAt,
    ...(at === undefined ? {} : { event_time: at }),
  };
}
