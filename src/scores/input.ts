import { z } from 'zod';
import { issueLines } from '../zod-issues.js';
import { SCORE_DATA_TYPES, type SCORE_SOURCES } from './answers.js';
import type { ScoreConfig } from './configs.js';

/** A score as `POST /scores` takes it (quality.md §1), validated one by one (partial success). */

export const MAX_SCORES_PER_REQUEST = 1_000;
export const MAX_COMMENT_LENGTH = 4_096;

const Id = z.string().min(1).max(128);
const Metadata = z
  .record(z.string().min(1).max(256), z.string().max(4_096))
  .refine((m) => Object.keys(m).length <= 50, 'at most 50 keys');

export const ScoreInput = z
  .object({
    score_id: Id.optional(),
    trace_id: z.string().min(1).max(256).optional(),
    span_id: z.string().min(1).max(256).optional(),
    session_id: z.string().min(1).max(256).optional(),
    name: z.string().trim().min(1).max(128),
    data_type: z.enum(SCORE_DATA_TYPES).optional(),
    value: z.number().refine(Number.isFinite, 'Input should be a finite number').optional(),
    string_value: z.string().min(1).max(256).optional(),
    comment: z.string().max(MAX_COMMENT_LENGTH).optional(),
    config_id: z.string().min(1).max(128).optional(),
    metadata: Metadata.optional(),
    environment: z.string().max(256).optional(),
  })
  .superRefine((s, ctx) => {
    if (s.trace_id === undefined && s.session_id === undefined)
      ctx.addIssue({ code: 'custom', path: ['trace_id'], message: 'trace_id is required unless session_id is given' });
    if (s.span_id !== undefined && s.trace_id === undefined)
      ctx.addIssue({ code: 'custom', path: ['span_id'], message: 'span_id needs the trace_id of its trace' });
  });
export type ScoreInput = z.infer<typeof ScoreInput>;

/** Who writes: the source and the author or evaluator the server sets (never the caller's body). */
export type ScoreOrigin = {
  source: (typeof SCORE_SOURCES)[number];
  authorUserId?: string;
  evaluatorId?: string;
  executionId?: string;
  evaluatorVersion?: number;
};

/** A score ready to store: every field filled, as the table holds it. */
export type ResolvedScore = {
  score_id: string | undefined;
  trace_id: string;
  span_id: string;
  session_id: string;
  name: string;
  data_type: (typeof SCORE_DATA_TYPES)[number];
  value: number;
  string_value: string;
  comment: string;
  config_id: string;
  metadata: Record<string, string>;
  environment: string;
};

/**
 * The score's type and values checked against its config (the one it names, else the one of its
 * name): errors as sentences, or the score with its type, value and label filled in.
 */
export function resolveScore(
  s: ScoreInput,
  configs: { byId: Map<string, ScoreConfig>; byName: Map<string, ScoreConfig> },
): { errors: string[] } | { score: ResolvedScore } {
  const errors: string[] = [];
  let config: ScoreConfig | undefined;
  if (s.config_id !== undefined) {
    config = configs.byId.get(s.config_id);
    if (!config) errors.push(`config_id: no score config '${s.config_id}' in this project`);
    else if (config.name !== s.name)
      errors.push(`name: the config '${config.id}' is for scores named '${config.name}'`);
  } else config = configs.byName.get(s.name);
  if (config?.archived) errors.push(`config_id: the score config '${config.name}' is archived`);
  if (errors.length) return { errors };

  const dataType =
    s.data_type ??
    config?.data_type ??
    (s.string_value !== undefined && s.value === undefined ? 'categorical' : 'numeric');
  if (config && dataType !== config.data_type)
    return { errors: [`data_type: the score config '${config.name}' is ${config.data_type}`] };
  let value = s.value;
  let label = s.string_value ?? '';
  switch (dataType) {
    case 'numeric':
      if (value === undefined) errors.push('value: a numeric score needs a value');
      else if (s.string_value !== undefined) errors.push('string_value: a numeric score has no string_value');
      else if (config?.min_value != null && value < config.min_value)
        errors.push(`value: below the config's min_value ${config.min_value}`);
      else if (config?.max_value != null && value > config.max_value)
        errors.push(`value: above the config's max_value ${config.max_value}`);
      break;
    case 'boolean': {
      const fromLabel = s.string_value === 'true' ? 1 : s.string_value === 'false' ? 0 : undefined;
      if (s.string_value !== undefined && fromLabel === undefined)
        errors.push('string_value: a boolean score\'s string_value is "true" or "false"');
      else if (value !== undefined && value !== 0 && value !== 1) errors.push('value: a boolean score is 0 or 1');
      else if (value === undefined && fromLabel === undefined)
        errors.push('value: a boolean score needs a value (0 or 1)');
      else if (value !== undefined && fromLabel !== undefined && value !== fromLabel)
        errors.push('value: value and string_value disagree');
      value = value ?? fromLabel;
      label = value === 1 ? 'true' : 'false';
      break;
    }
    case 'categorical': {
      if (s.string_value === undefined) {
        errors.push('string_value: a categorical score needs its label');
        break;
      }
      if (config?.categories) {
        const category = config.categories.find((c) => c.label === s.string_value);
        if (!category)
          errors.push(
            `string_value: '${s.string_value}' is not a category of '${config.name}' (${config.categories.map((c) => c.label).join(', ')})`,
          );
        else if (value !== undefined && value !== category.value)
          errors.push(`value: the category '${category.label}' has the value ${category.value}`);
        else value = category.value;
      }
      value ??= 0;
      break;
    }
  }
  if (errors.length) return { errors };
  return {
    score: {
      score_id: s.score_id,
      trace_id: s.trace_id ?? '',
      span_id: s.span_id ?? '',
      session_id: s.session_id ?? '',
      name: s.name,
      data_type: dataType,
      value: value!,
      string_value: dataType === 'numeric' ? '' : label,
      comment: s.comment ?? '',
      config_id: config?.id ?? '',
      metadata: s.metadata ?? {},
      environment: s.environment ?? '',
    },
  };
}

/** The zod issues of one score as the sentences of a `rejected` entry. */
export function scoreIssues(error: z.ZodError, item: unknown): string[] {
  return issueLines(error.issues, item, 'span');
}
