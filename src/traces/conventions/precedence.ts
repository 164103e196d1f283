import {
  amount,
  content,
  count,
  instantAfterStart,
  kindFrom,
  secondsAsMs,
  text,
  versionNumber,
  type Reader,
} from './values.js';
import { langfuseCost, langfuseUsage } from './usage.js';
import { vercelKind } from './vercel.js';
import { traceloopEntity } from './messages.js';

/**
 * Which attribute fills which span field, per instrumentation convention, in precedence order
 * (docs/integrations/mapping.md). For each field the first row whose attribute is present and whose
 * value fits wins; rows that lost keep their attribute in metadata unless they said the same.
 *
 * The order of conventions, and why:
 * 1. `sightline.*`: the producer addressed us by name.
 * 2. Langfuse (`langfuse.*`): set by hand through the Langfuse SDK (`asType`, `model`, `usageDetails`,
 *    `costDetails`), so it states intent where the others are inferred by an instrumentation.
 * 3. OpenInference (`openinference.*`, `llm.*`, `input.value`): one coherent scheme per span, with
 *    structured messages; Phoenix-style producers often add `gen_ai.*` copies of less detail.
 * 4. OTel GenAI (`gen_ai.*`): the standard; Traceloop and Vercel write their model-call spans in it.
 * 5. Traceloop (`traceloop.*`, `llm.usage.*`, `llm.request.type`): workflow structure and entity I/O.
 * 6. Vercel AI SDK (`ai.*`): the last, as its model-call spans repeat their usage in `gen_ai.*`,
 *    which then wins when both agree and leaves the `ai.*` copy out of metadata.
 * General OTel attributes (`user.id`, `session.id`, `deployment.environment*`) sit with OpenInference,
 * which uses the same names.
 *
 * Rows named `….N.*` are indexed attributes rebuilt into a messages array, and rows named `event …`
 * come from span events (messages.ts).
 */

export type Convention = 'sightline' | 'langfuse' | 'openinference' | 'otel' | 'gen_ai' | 'traceloop' | 'vercel';

/** The order above; within a field, rows never go back up it (test/traces/conventions/precedence.test.ts). */
export const CONVENTION_ORDER: Readonly<Record<Convention, number>> = {
  sightline: 0,
  langfuse: 1,
  openinference: 2,
  otel: 2,
  gen_ai: 3,
  traceloop: 4,
  vercel: 5,
};

export interface Row {
  key: string;
  from: Convention;
  read: Reader;
}

const row = (key: string, from: Convention, read: Reader): Row => ({ key, from, read });

/** Our kinds: llm, embedding, tool, agent, chain, retriever, reranker, guardrail, evaluator, http, custom. */
const LANGFUSE_TYPES = {
  generation: 'llm',
  embedding: 'embedding',
  agent: 'agent',
  tool: 'tool',
  chain: 'chain',
  retriever: 'retriever',
  evaluator: 'evaluator',
  guardrail: 'guardrail',
  // Langfuse's untyped defaults say nothing about the work: a lower convention may, else `custom`.
  span: '',
  event: '',
};
const OPENINFERENCE_KINDS = {
  llm: 'llm',
  embedding: 'embedding',
  chain: 'chain',
  tool: 'tool',
  agent: 'agent',
  retriever: 'retriever',
  reranker: 'reranker',
  guardrail: 'guardrail',
  evaluator: 'evaluator',
  unknown: '',
};
const GEN_AI_OPERATIONS = {
  chat: 'llm',
  text_completion: 'llm',
  generate_content: 'llm',
  embeddings: 'embedding',
  retrieval: 'retriever',
  execute_tool: 'tool',
  create_agent: 'agent',
  invoke_agent: 'agent',
  invoke_workflow: 'chain',
};
const TRACELOOP_KINDS = {
  workflow: 'chain',
  task: 'chain',
  agent: 'agent',
  tool: 'tool',
  session: 'chain',
  unknown: '',
};
/** Traceloop's model-call spans carry `llm.request.type` and no `traceloop.span.kind`. */
const TRACELOOP_REQUEST_TYPES = {
  chat: 'llm',
  completion: 'llm',
  embedding: 'embedding',
  rerank: 'reranker',
  unknown: '',
};

export const PRECEDENCE = {
  kind: [
    row('sightline.span.kind', 'sightline', kindFrom({}, true)),
    row('langfuse.observation.type', 'langfuse', kindFrom(LANGFUSE_TYPES)),
    row('openinference.span.kind', 'openinference', kindFrom(OPENINFERENCE_KINDS, true)),
    // An operation outside the list is kept, lowercased: it names the work better than `custom`.
    row('gen_ai.operation.name', 'gen_ai', kindFrom(GEN_AI_OPERATIONS, true)),
    row('traceloop.span.kind', 'traceloop', kindFrom(TRACELOOP_KINDS)),
    row('llm.request.type', 'traceloop', kindFrom(TRACELOOP_REQUEST_TYPES)),
    row('ai.operationId', 'vercel', vercelKind),
  ],
  model_name: [
    row('langfuse.observation.model.name', 'langfuse', text),
    row('llm.model_name', 'openinference', text),
    row('embedding.model_name', 'openinference', text),
    row('reranker.model_name', 'openinference', text),
    row('gen_ai.request.model', 'gen_ai', text),
    row('gen_ai.response.model', 'gen_ai', text),
    row('ai.model.id', 'vercel', text),
  ],
  environment: [
    row('langfuse.environment', 'langfuse', text),
    row('deployment.environment.name', 'otel', text),
    row('deployment.environment', 'otel', text),
  ],
  user_id: [
    row('langfuse.user.id', 'langfuse', text),
    // Written by hand-made Langfuse exporters (the SDK itself sends `user.id`).
    row('langfuse.trace.user_id', 'langfuse', text),
    row('user.id', 'otel', text),
    row('enduser.id', 'otel', text),
    row('traceloop.association.properties.userId', 'traceloop', text),
    row('traceloop.association.properties.user_id', 'traceloop', text),
    row('ai.telemetry.metadata.userId', 'vercel', text),
    row('ai.telemetry.metadata.user_id', 'vercel', text),
  ],
  session_id: [
    row('langfuse.session.id', 'langfuse', text),
    row('langfuse.trace.session_id', 'langfuse', text),
    row('session.id', 'otel', text),
    row('gen_ai.conversation.id', 'gen_ai', text),
    row('traceloop.association.properties.sessionId', 'traceloop', text),
    row('traceloop.association.properties.session_id', 'traceloop', text),
    row('ai.telemetry.metadata.sessionId', 'vercel', text),
    row('ai.telemetry.metadata.session_id', 'vercel', text),
  ],
  input: [
    row('langfuse.observation.input', 'langfuse', content),
    row('langfuse.trace.input', 'langfuse', content),
    row('llm.input_messages.N.*', 'openinference', content),
    row('input.value', 'openinference', content),
    row('gen_ai.input.messages', 'gen_ai', content),
    row('gen_ai.system_instructions', 'gen_ai', content),
    row('gen_ai.prompt', 'gen_ai', content),
    row('gen_ai.prompt.N.*', 'gen_ai', content),
    row('event gen_ai.*.message', 'gen_ai', content),
    row('gen_ai.tool.call.arguments', 'gen_ai', content),
    row('traceloop.entity.input', 'traceloop', traceloopEntity('inputs')),
    row('ai.prompt.messages', 'vercel', content),
    row('ai.prompt', 'vercel', content),
    row('ai.toolCall.args', 'vercel', content),
    row('ai.value', 'vercel', content),
    row('ai.values', 'vercel', content),
  ],
  output: [
    row('langfuse.observation.output', 'langfuse', content),
    row('langfuse.trace.output', 'langfuse', content),
    row('llm.output_messages.N.*', 'openinference', content),
    row('output.value', 'openinference', content),
    row('gen_ai.output.messages', 'gen_ai', content),
    row('gen_ai.completion', 'gen_ai', content),
    row('gen_ai.completion.N.*', 'gen_ai', content),
    row('event gen_ai.choice', 'gen_ai', content),
    row('gen_ai.tool.call.result', 'gen_ai', content),
    row('traceloop.entity.output', 'traceloop', traceloopEntity('outputs')),
    row('ai.response.text', 'vercel', content),
    row('ai.response.object', 'vercel', content),
    row('ai.response.toolCalls', 'vercel', content),
    row('ai.toolCall.result', 'vercel', content),
  ],
  cost: [
    row('sightline.cost', 'sightline', amount),
    row('langfuse.observation.cost_details', 'langfuse', langfuseCost),
    row('llm.cost.total', 'openinference', amount),
    row('gen_ai.usage.cost', 'gen_ai', amount),
  ],
  // Token counts: usage.ts reads Langfuse's usage_details first and makes the parts fit the totals.
  usage: [row('langfuse.observation.usage_details', 'langfuse', langfuseUsage)],
  input_tokens: [
    row('llm.token_count.prompt', 'openinference', count),
    row('gen_ai.usage.input_tokens', 'gen_ai', count),
    row('gen_ai.usage.prompt_tokens', 'gen_ai', count),
    row('llm.usage.prompt_tokens', 'traceloop', count),
    row('ai.usage.inputTokens', 'vercel', count),
    row('ai.usage.promptTokens', 'vercel', count),
    row('ai.usage.tokens', 'vercel', count),
  ],
  output_tokens: [
    row('llm.token_count.completion', 'openinference', count),
    row('gen_ai.usage.output_tokens', 'gen_ai', count),
    row('gen_ai.usage.completion_tokens', 'gen_ai', count),
    row('llm.usage.completion_tokens', 'traceloop', count),
    row('ai.usage.outputTokens', 'vercel', count),
    row('ai.usage.completionTokens', 'vercel', count),
  ],
  total_tokens: [
    row('llm.token_count.total', 'openinference', count),
    row('gen_ai.usage.total_tokens', 'gen_ai', count),
    row('llm.usage.total_tokens', 'traceloop', count),
    row('ai.usage.totalTokens', 'vercel', count),
  ],
  cache_read_tokens: [
    row('llm.token_count.prompt_details.cache_read', 'openinference', count),
    row('gen_ai.usage.cache_read.input_tokens', 'gen_ai', count),
    row('gen_ai.usage.input_tokens.cached', 'gen_ai', count),
    row('gen_ai.usage.cache_read_input_tokens', 'traceloop', count),
    row('ai.usage.inputTokenDetails.cacheReadTokens', 'vercel', count),
    row('ai.usage.cachedInputTokens', 'vercel', count),
  ],
  cache_write_tokens: [
    row('llm.token_count.prompt_details.cache_write', 'openinference', count),
    row('gen_ai.usage.cache_creation.input_tokens', 'gen_ai', count),
    row('gen_ai.usage.input_tokens.cache_write', 'gen_ai', count),
    row('gen_ai.usage.cache_creation_input_tokens', 'traceloop', count),
    row('ai.usage.inputTokenDetails.cacheWriteTokens', 'vercel', count),
  ],
  reasoning_tokens: [
    row('llm.token_count.completion_details.reasoning', 'openinference', count),
    row('gen_ai.usage.reasoning.output_tokens', 'gen_ai', count),
    row('gen_ai.usage.output_tokens.reasoning', 'gen_ai', count),
    row('gen_ai.usage.reasoning_tokens', 'traceloop', count),
    row('ai.usage.outputTokenDetails.reasoningTokens', 'vercel', count),
    row('ai.usage.reasoningTokens', 'vercel', count),
  ],
  time_to_first_token_ms: [
    row('sightline.time_to_first_token_ms', 'sightline', amount),
    row('langfuse.observation.completion_start_time', 'langfuse', instantAfterStart),
    // A histogram in the GenAI conventions, in seconds; some producers set it on the span.
    row('gen_ai.server.time_to_first_token', 'gen_ai', secondsAsMs),
    row('ai.response.msToFirstChunk', 'vercel', amount),
    row('ai.stream.msToFirstChunk', 'vercel', amount),
  ],
  output_tokens_per_second: [
    row('sightline.output_tokens_per_second', 'sightline', amount),
    row('ai.response.avgOutputTokensPerSecond', 'vercel', amount),
    row('ai.response.avgCompletionTokensPerSecond', 'vercel', amount),
  ],
  evaluation_run_id: [row('sightline.evaluation_run_id', 'sightline', text)],
  // The prompt version a span used (docs/prompts.md, "Linking spans"): Langfuse's SDK sets these on a
  // generation made with a fetched prompt; OpenInference names a prompt by id and its template's
  // version; Traceloop's prompt registry by key and version.
  prompt_name: [
    row('sightline.prompt_name', 'sightline', text),
    row('langfuse.observation.prompt.name', 'langfuse', text),
    row('prompt.id', 'openinference', text),
    row('traceloop.prompt.key', 'traceloop', text),
  ],
  prompt_version: [
    row('sightline.prompt_version', 'sightline', versionNumber),
    row('langfuse.observation.prompt.version', 'langfuse', versionNumber),
    row('llm.prompt_template.version', 'openinference', versionNumber),
    row('traceloop.prompt.version', 'traceloop', versionNumber),
  ],
} satisfies Record<string, readonly Row[]>;

/**
 * Attributes that only describe another one: they leave metadata with it (a MIME type with its
 * value, Vercel's uncached input and text output with the usage they are the rest of).
 */
export const COMPANIONS: ReadonlyMap<string, readonly string[]> = new Map([
  ['input.value', ['input.mime_type']],
  ['output.value', ['output.mime_type']],
  ['ai.usage.inputTokens', ['ai.usage.inputTokenDetails.noCacheTokens']],
  ['ai.usage.outputTokens', ['ai.usage.outputTokenDetails.textTokens']],
]);

export type Field = keyof typeof PRECEDENCE;
export const FIELDS = Object.keys(PRECEDENCE) as Field[];
export const TOKEN_FIELDS = [
  'input_tokens',
  'output_tokens',
  'total_tokens',
  'cache_read_tokens',
  'cache_write_tokens',
  'reasoning_tokens',
] as const;

/** Attribute key → its field and rank, for the one pass over a span's attributes. */
export interface Source {
  field: Field;
  rank: number;
  row: Row;
}

export const SOURCES: ReadonlyMap<string, Source> = (() => {
  const sources = new Map<string, Source>();
  for (const field of FIELDS) {
    PRECEDENCE[field].forEach((r: Row, rank: number) => {
      // One attribute feeds one field: a key listed twice would make its consumption ambiguous.
      if (sources.has(r.key)) throw new Error(`convention table: ${r.key} is listed twice`);
      sources.set(r.key, { field, rank, row: r });
    });
  }
  return sources;
})();
