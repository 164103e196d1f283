import { z } from 'zod';
import { BadRequestError } from '../errors.js';
import { PredicateSchema, PROMPT_FIELDS, SET_FIELDS, TIMING_FIELDS, type Predicate } from '../query/predicates.js';

export type { Predicate } from '../query/predicates.js';

/**
 * The `filters` parameter of list traces (docs/filters.md, the predicate table): a JSON-encoded array
 * of at most 20 predicates (src/query/predicates.ts), each with exactly the keys of its row. Anything wrong with it is a 400
 * ("invalid filters parameter"), not a 422: the documented errors set the two apart.
 */

export const MAX_FILTERS = 20;
/**
 * The raw parameter's length: 20 predicates of 1,024-character values, with room to spare. Over
 * HTTP the request line's 16 KiB limit comes first; this bounds the parse wherever the text comes from.
 */
export const MAX_FILTERS_PARAM_LENGTH = 64 * 1024;
const FiltersSchema = z.array(PredicateSchema).max(MAX_FILTERS);

/** Parses the raw query value; throws 400 with a detail naming the first problem. */
export function parseFilters(raw: string | undefined): Predicate[] {
  if (raw === undefined || raw.trim() === '') return [];
  if (raw.length > MAX_FILTERS_PARAM_LENGTH)
    throw new BadRequestError(`invalid filters parameter: longer than ${MAX_FILTERS_PARAM_LENGTH} characters`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new BadRequestError('invalid filters parameter: not valid JSON');
  }
  if (!Array.isArray(parsed))
    throw new BadRequestError('invalid filters parameter: expected a JSON array of predicates');
  if (parsed.length > MAX_FILTERS)
    throw new BadRequestError(`invalid filters parameter: at most ${MAX_FILTERS} predicates are allowed`);
  const result = FiltersSchema.safeParse(parsed);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  throw new BadRequestError(`invalid filters parameter: ${describe(issue)}`);
}

function describe(issue: z.core.$ZodIssue): string {
  const where = issue.path.length
    ? `filters[${String(issue.path[0])}]${issue.path
        .slice(1)
        .map((p) => `.${String(p)}`)
        .join('')}`
    : 'filters';
  switch (issue.code) {
    case 'invalid_union':
      return `${where}: unknown field; expected one of trace_id, signal_id, tags, score, ${SET_FIELDS.join(', ')}, cost, total_tokens, duration_ms, errors, ${TIMING_FIELDS.join(', ')}, metadata, ${PROMPT_FIELDS.join(', ')}`;
    case 'unrecognized_keys':
      return `${where}: unexpected key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')}`;
    case 'invalid_value':
      return `${where}: expected ${issue.values.map((v) => `'${String(v)}'`).join(' or ')}`;
    case 'invalid_type':
      return `${where}: expected ${issue.expected}`;
    case 'too_small':
      return `${where}: ${issue.origin === 'array' ? 'needs at least 1 item' : issue.origin === 'string' ? 'must not be empty' : `must be at least ${String(issue.minimum)}`}`;
    case 'too_big':
      return `${where}: ${issue.origin === 'string' ? `at most ${String(issue.maximum)} characters` : `must be at most ${String(issue.maximum)}`}`;
    default:
      return `${where}: ${issue.message}`;
  }
}
