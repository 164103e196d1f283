import { z } from 'zod';
import { issueLines } from '../zod-issues.js';
import { RawJsonValue, type JsonPath } from '../raw-json.js';
import { StoredText } from '../edge-schemas.js';

/**
 * The request contract of `POST /evaluation-runs/{id}/results` (docs/datasets.md, "Runs and results") and what one result
 * contributes to its run's counts. Pure: validation and derivation only, no I/O.
 *
 * Like span ingest (docs/spans.md), each result is judged on its own: valid ones are stored, the others come back
 * in `rejected: [{index, test_case_id, errors}]`.
 *
 * How the counts of the summary are derived (README, "Datasets and evaluations"):
 * - a result with a non-empty `error` is a task error;
 * - a score with a non-empty `error` is a scorer error; its value and verdict are ignored;
 * - a result is scored when at least one score has a value (number or boolean) and no error;
 * - a result passed when at least one score without error gives `passed` and all of those are true;
 *   it failed when any of them is false; with no verdict it is neither ("passed comes from the
 *   scores' passed, else from nothing");
 * - a result errored when it has a task error or any scorer error.
 */

export const MAX_RESULTS_PER_REQUEST = 10_000;
/** Whole request body of a results write: 10,000 results of a few KB each (docs/limits.md). */
export const MAX_RESULTS_BODY_BYTES = 64 * 1024 * 1024;
export const MAX_SCORES_PER_RESULT = 100;
const ErrorText = StoredText(0, 32_768);
const Name = StoredText(1, 200);
const Label = StoredText(0, 64);

const ScoreInput = z.object({
  name: Name,
  value: z.union([z.number(), z.boolean()]).nullish(),
  direction: Label.nullish(),
  unit: Label.nullish(),
  passed: z.boolean().nullish(),
  error: ErrorText.nullish(),
});

const MetricInput = z.object({ name: Name, value: z.number(), unit: Label.nullish(), direction: Label.nullish() });

const uniqueNames = (entries: { name: string }[] | null | undefined, field: string, ctx: z.RefinementCtx) => {
  const seen = new Set<string>();
  entries?.forEach((e, i) => {
    if (seen.has(e.name))
      ctx.addIssue({
        code: 'custom',
        path: [field, i, 'name'],
        message: `a result names each ${field.slice(0, -1)} once; '${e.name}' repeats`,
      });
    seen.add(e.name);
  });
};

export const ResultInput = z
  .object({
    test_case_id: z.string().min(1).max(64),
    output: RawJsonValue.optional(),
    trace_id: StoredText(1, 128).nullish(),
    error: ErrorText.nullish(),
    scores: z.array(ScoreInput).max(MAX_SCORES_PER_RESULT).nullish(),
    metrics: z.array(MetricInput).max(MAX_SCORES_PER_RESULT).nullish(),
  })
  .superRefine((r, ctx) => {
    uniqueNames(r.scores, 'scores', ctx);
    uniqueNames(r.metrics, 'metrics', ctx);
  });

export const ResultsBody = z.object({ results: z.array(z.unknown()).min(1) });

/** `output` of each result is kept as the caller's JSON text (datasets/raw-json.ts). */
export function keepsResultValue(path: JsonPath): boolean {
  return path.length === 3 && path[0] === 'results' && typeof path[1] === 'number' && path[2] === 'output';
}

/** A score as stored: absent and empty fields dropped, so `error` present means a scorer error. */
export type StoredScore = {
  name: string;
  value: number | boolean | null;
  direction?: string;
  unit?: string;
  passed?: boolean;
  error?: string;
};
export type StoredMetric = { name: string; value: number; unit?: string; direction?: string };

export type NormalizedResult = {
  index: number;
  testCaseId: string;
  /** The caller's JSON text; null when no output was sent. */
  output: string | null;
  traceId: string | null;
  error: string | null;
  scores: StoredScore[];
  metrics: StoredMetric[];
  passed: boolean | null;
  scored: boolean;
  taskError: boolean;
  scorerErrors: number;
};

export type RejectedResult = { index: number; test_case_id: string | null; errors: string[] };

/** Validates each result on its own and derives its contribution to the counts. */
export function validateResults(raw: readonly unknown[]): { accepted: NormalizedResult[]; rejected: RejectedResult[] } {
  const accepted: NormalizedResult[] = [];
  const rejected: RejectedResult[] = [];
  raw.forEach((item, index) => {
    const parsed = ResultInput.safeParse(item);
    if (parsed.success) accepted.push(normalize(index, parsed.data));
    else rejected.push({ index, test_case_id: testCaseIdOf(item), errors: issueLines(parsed.error.issues, item) });
  });
  return { accepted, rejected };
}

function normalize(index: number, r: z.output<typeof ResultInput>): NormalizedResult {
  const scores = (r.scores ?? []).map((s): StoredScore => {
    const out: StoredScore = { name: s.name, value: s.value ?? null };
    if (s.direction) out.direction = s.direction;
    if (s.unit) out.unit = s.unit;
    if (s.passed != null) out.passed = s.passed;
    if (s.error) out.error = s.error;
    return out;
  });
  const metrics = (r.metrics ?? []).map((m): StoredMetric => {
    const out: StoredMetric = { name: m.name, value: m.value };
    if (m.unit) out.unit = m.unit;
    if (m.direction) out.direction = m.direction;
    return out;
  });
  const sound = scores.filter((s) => s.error === undefined);
  const verdicts = sound.filter((s) => s.passed !== undefined).map((s) => s.passed!);
  return {
    index,
    testCaseId: r.test_case_id.toLowerCase(),
    output: r.output?.text ?? null,
    traceId: r.trace_id ?? null,
    error: r.error || null,
    scores,
    metrics,
    passed: verdicts.length === 0 ? null : verdicts.every(Boolean),
    scored: sound.some((s) => s.value !== null),
    taskError: !!r.error,
    scorerErrors: scores.length - sound.length,
  };
}

function testCaseIdOf(item: unknown): string | null {
  if (item === null || typeof item !== 'object') return null;
  const id = (item as Record<string, unknown>).test_case_id;
  return typeof id === 'string' ? id : null;
}
