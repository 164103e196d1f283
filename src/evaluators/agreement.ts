import { z } from 'zod';
import type { AppContext } from '../context.js';
import { Count, DateTime } from '../answer-schemas.js';
import { paramBuilder } from '../query/params.js';
import { settingsClause, withinLimits, type QueryLimits } from '../query/limits.js';
import { scoreConditions } from '../query/scores.js';
import { agreementPairsQuery } from '../query/score-agreement.js';
import { traceUrl } from '../traces/trace-item.js';
import { getEvaluator } from './service.js';

/**
 * How far an evaluator agrees with people (issue 33 item 5; docs/evaluators.md, "Agreement with
 * people"): its scores beside the annotation scores of the same name about the same traces. Categorical
 * and boolean scores: the share of pairs with the same label and Cohen's kappa; numeric ones: Pearson's
 * correlation and the mean difference (evaluator minus person).
 */

/** Pairs read at most; past it the answer says `truncated` and measures the first ones (by trace id). */
export const MAX_AGREEMENT_PAIRS = 10_000;
/** The disagreeing pairs listed, the widest apart first. */
export const MAX_DISAGREEMENTS = 100;
export const DEFAULT_AGREEMENT_WINDOW_MS = 30 * 24 * 3600_000;

const READ_LIMITS: QueryLimits = {
  maxExecutionSeconds: 10,
  maxMemoryBytes: 1_000_000_000,
  maxResultBytes: 64 * 1024 * 1024,
  maxResultRows: MAX_AGREEMENT_PAIRS + 1,
};

export type Pair = {
  trace_id: string;
  span_id: string;
  data_type: string;
  evaluator_value: number;
  evaluator_label: string;
  annotation_value: number;
  annotation_label: string;
};

/** Observed agreement and Cohen's kappa of two raters' labels; kappa is null where chance agreement is 1. */
export function cohensKappa(pairs: readonly [string, string][]): { agreement: number | null; kappa: number | null } {
  const n = pairs.length;
  if (n === 0) return { agreement: null, kappa: null };
  const a = new Map<string, number>();
  const b = new Map<string, number>();
  let same = 0;
  for (const [x, y] of pairs) {
    if (x === y) same++;
    a.set(x, (a.get(x) ?? 0) + 1);
    b.set(y, (b.get(y) ?? 0) + 1);
  }
  const observed = same / n;
  let expected = 0;
  for (const [label, count] of a) expected += (count / n) * ((b.get(label) ?? 0) / n);
  return { agreement: observed, kappa: expected === 1 ? null : (observed - expected) / (1 - expected) };
}

/** Pearson's correlation (null under two pairs or with a constant side) and the mean of x - y. */
export function correlation(pairs: readonly [number, number][]): {
  correlation: number | null;
  mean_difference: number | null;
} {
  const n = pairs.length;
  if (n === 0) return { correlation: null, mean_difference: null };
  const mx = pairs.reduce((s, [x]) => s + x, 0) / n;
  const my = pairs.reduce((s, [, y]) => s + y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (const [x, y] of pairs) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) ** 2;
    syy += (y - my) ** 2;
  }
  const r = n < 2 || sxx === 0 || syy === 0 ? null : sxy / Math.sqrt(sxx * syy);
  return { correlation: r, mean_difference: mx - my };
}

const Side = z.object({
  value: z.number().describe('the score’s value (booleans 1/0; categories their configured value or 0)'),
  label: z.string().nullable().describe('categorical and boolean scores: the label; numeric: null'),
});

export const AgreementAnswer = z
  .object({
    evaluator_id: z.string(),
    score_name: z.string(),
    start_time: DateTime,
    end_time: DateTime,
    data_type: z
      .enum(['numeric', 'categorical', 'boolean'])
      .nullable()
      .describe('the data type measured: that of most pairs; null when there are none'),
    pairs: Count.describe('evaluator scores in the window with an annotation score beside them'),
    agreement: z.number().nullable().describe('categorical/boolean: share of pairs with the same label'),
    kappa: z
      .number()
      .nullable()
      .describe("categorical/boolean: Cohen's kappa; null without pairs or when chance agreement is 1"),
    correlation: z
      .number()
      .nullable()
      .describe("numeric: Pearson's correlation; null under 2 pairs or a constant side"),
    mean_difference: z.number().nullable().describe('numeric: mean of evaluator minus annotation'),
    truncated: z
      .boolean()
      .describe(`more than ${MAX_AGREEMENT_PAIRS} pairs: the first ones (by trace id) are measured`),
    disagreements: z
      .array(
        z.object({
          trace_id: z.string(),
          span_id: z.string().nullable(),
          trace_url: z.string(),
          evaluator: Side,
          annotation: Side,
        }),
      )
      .describe(`the pairs that differ, the widest apart first (numeric), at most ${MAX_DISAGREEMENTS}`),
  })
  .meta({ id: 'EvaluatorAgreement' });
export type Agreement = z.infer<typeof AgreementAnswer>;

/** The measures of a set of pairs (pure): the data type most pairs have, and only those pairs. */
export function measure(rows: readonly Pair[]) {
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.data_type, (counts.get(r.data_type) ?? 0) + 1);
  const dataType = [...counts].sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0]))[0]?.[0] ?? null;
  const pairs = rows.filter((r) => r.data_type === dataType);
  const numeric = dataType === 'numeric';
  const differ = (r: Pair) =>
    numeric ? r.evaluator_value !== r.annotation_value : r.evaluator_label !== r.annotation_label;
  const disagreeing = pairs
    .filter(differ)
    .sort((x, y) =>
      numeric ? Math.abs(y.evaluator_value - y.annotation_value) - Math.abs(x.evaluator_value - x.annotation_value) : 0,
    );
  return {
    data_type: dataType as Agreement['data_type'],
    pairs: pairs.length,
    ...(numeric
      ? { agreement: null, kappa: null }
      : cohensKappa(pairs.map((r) => [r.evaluator_label, r.annotation_label]))),
    ...(numeric
      ? correlation(pairs.map((r) => [r.evaluator_value, r.annotation_value]))
      : { correlation: null, mean_difference: null }),
    disagreeing: disagreeing.slice(0, MAX_DISAGREEMENTS),
  };
}

export async function evaluatorAgreement(
  ctx: AppContext,
  projectId: string,
  evaluatorId: string,
  startMs: number,
  endMs: number,
): Promise<Agreement> {
  const evaluator = await getEvaluator(ctx.pg.pool, projectId, evaluatorId);
  const b = paramBuilder({ project: projectId });
  const evaluatorWhere = scoreConditions(
    {
      evaluatorId,
      source: 'evaluator',
      name: evaluator.score_name,
      createdAfterMs: startMs - 1,
      createdBeforeMs: endMs,
    },
    b.param,
  );
  const annotationWhere = scoreConditions({ source: 'annotation', name: evaluator.score_name }, b.param);
  const rows = await withinLimits(READ_LIMITS, 'narrow the window', () =>
    ctx.ch.rows<Pair>({
      query: agreementPairsQuery(
        '{project:String}',
        evaluatorWhere,
        annotationWhere,
        MAX_AGREEMENT_PAIRS + 1,
        settingsClause(READ_LIMITS),
      ),
      query_params: b.params,
    }),
  );
  const truncated = rows.length > MAX_AGREEMENT_PAIRS;
  const m = measure(
    rows.slice(0, MAX_AGREEMENT_PAIRS).map((r) => ({
      ...r,
      evaluator_value: Number(r.evaluator_value),
      annotation_value: Number(r.annotation_value),
    })),
  );
  const label = (r: Pair, side: 'evaluator' | 'annotation') =>
    r.data_type === 'numeric' ? null : side === 'evaluator' ? r.evaluator_label : r.annotation_label;
  return {
    evaluator_id: evaluatorId,
    score_name: evaluator.score_name,
    start_time: new Date(startMs),
    end_time: new Date(endMs),
    data_type: m.data_type,
    pairs: m.pairs,
    agreement: m.agreement,
    kappa: m.kappa,
    correlation: m.correlation,
    mean_difference: m.mean_difference,
    truncated,
    disagreements: m.disagreeing.map((r) => ({
      trace_id: r.trace_id,
      span_id: r.span_id || null,
      trace_url: traceUrl(ctx.config.webUrl, projectId, r.trace_id),
      evaluator: { value: r.evaluator_value, label: label(r, 'evaluator') },
      annotation: { value: r.annotation_value, label: label(r, 'annotation') },
    })),
  };
}
