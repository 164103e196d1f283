import type { OutputSpec } from './schema.js';
import type { ScoreValue } from './checks.js';

/**
 * An LLM judge's answer checked against the evaluator's `output` (docs/evaluators.md, "LLM judge"):
 * the score the judge was asked for, and the fixed sentence when its answer is not one. The reasoning
 * becomes the score's comment (at most MAX_COMMENT_CHARS, the score field's own bound).
 */

export const MAX_COMMENT_CHARS = 4096;

/** The JSON schema of `score` the judge is asked to fill (providers.ts wraps it with `reasoning`). */
export function scoreSchemaOf(output: OutputSpec): Record<string, unknown> {
  if (output.data_type === 'boolean') return { type: 'boolean' };
  if (output.data_type === 'categorical') return { type: 'string', enum: output.categories };
  const bounds = [
    output.min_value !== undefined ? `at least ${output.min_value}` : null,
    output.max_value !== undefined ? `at most ${output.max_value}` : null,
  ].filter(Boolean);
  // Bounds as words: structured output modes don't all take minimum/maximum; the answer is checked anyway.
  return bounds.length ? { type: 'number', description: `a number ${bounds.join(' and ')}` } : { type: 'number' };
}

export const JUDGE_ANSWER_ERRORS = {
  notObject: 'the judge answered without a score and reasoning',
  reasoning: "the judge's reasoning is not text",
  numeric: "the judge's score is not a number",
  range: "the judge's score is outside the output's range",
  boolean: "the judge's score is not true or false",
  category: "the judge's score is not one of the output's categories",
} as const;

export function readJudgement(
  answer: unknown,
  output: OutputSpec,
): { ok: true; score: ScoreValue } | { ok: false; error: string } {
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer) || !('score' in answer))
    return { ok: false, error: JUDGE_ANSWER_ERRORS.notObject };
  const { score, reasoning = '' } = answer as { score: unknown; reasoning?: unknown };
  if (typeof reasoning !== 'string') return { ok: false, error: JUDGE_ANSWER_ERRORS.reasoning };
  const comment = reasoning.length > MAX_COMMENT_CHARS ? reasoning.slice(0, MAX_COMMENT_CHARS) : reasoning;
  switch (output.data_type) {
    case 'numeric':
      if (typeof score !== 'number' || !Number.isFinite(score))
        return { ok: false, error: JUDGE_ANSWER_ERRORS.numeric };
      if (
        (output.min_value !== undefined && score < output.min_value) ||
        (output.max_value !== undefined && score > output.max_value)
      )
        return { ok: false, error: JUDGE_ANSWER_ERRORS.range };
      return { ok: true, score: { value: score, string_value: null, comment } };
    case 'boolean':
      if (typeof score !== 'boolean') return { ok: false, error: JUDGE_ANSWER_ERRORS.boolean };
      return { ok: true, score: { value: score ? 1 : 0, string_value: String(score), comment } };
    case 'categorical': {
      // The category's value is its position in `categories` (a score config may give values of its own later).
      const index = typeof score === 'string' ? (output.categories ?? []).indexOf(score) : -1;
      if (index < 0) return { ok: false, error: JUDGE_ANSWER_ERRORS.category };
      return { ok: true, score: { value: index, string_value: score as string, comment } };
    }
  }
}
