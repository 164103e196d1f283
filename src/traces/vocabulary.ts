/**
 * Span words the server's contract and the web app's filters share (docs/spans.md). Pure, no imports:
 * safe in the browser bundle.
 */
export const SPAN_STATUSES = ['ok', 'error', 'unset'] as const;
export type SpanStatusName = (typeof SPAN_STATUSES)[number];

/** The kinds the docs name; a producer may send any other (docs/spans.md: kinds are examples). */
export const COMMON_SPAN_KINDS = ['llm', 'tool', 'agent', 'chain', 'retriever', 'embedding', 'http', 'custom'] as const;

/**
 * The environment of an online evaluator's own judge calls (docs/evaluators.md, "Judge traces"):
 * never evaluated, and left out of trace lists unless a filter on `environment` names it.
 */
export const JUDGE_ENVIRONMENT = 'sightline-evaluator';
