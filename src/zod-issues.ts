import type { z } from 'zod';

/**
 * The one formatter of zod issues: as 422 entries in the shape FastAPI/pydantic clients parse
 * (`zodIssuesToValidation`, used by src/http.ts and services that validate beyond the route schema),
 * and as `field.path: message` lines for the items a batch rejects (`issueLines`). Lines are worded
 * like the 422 entries, except span ingest's, whose wording predates them and stays as clients know it
 * (docs/spans.md): see `IssueWording`.
 */

/** One entry of a 422 body, in the shape FastAPI/pydantic clients already parse. */
export type ValidationIssue = {
  loc: (string | number)[];
  msg: string;
  type: string;
  ctx?: Record<string, unknown>;
  input?: unknown;
};

/** Fastify's names for the parts of a request, mapped to the `loc` roots clients expect. */
const LOC_ROOT: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

/** Turns zod issues for one part of a request into 422 entries. */
export function zodIssuesToValidation(
  part: string,
  issues: readonly z.core.$ZodIssue[],
  data: unknown,
): ValidationIssue[] {
  const root = LOC_ROOT[part] ?? part;
  return issues.map((issue) => {
    const path = issue.path.map((p) => (typeof p === 'number' ? p : String(p)));
    const input = valueAt(data, path);
    const { type, msg, ctx } = describeIssue(issue, input);
    const entry: ValidationIssue = { loc: [root, ...path], msg, type };
    if (ctx) entry.ctx = ctx;
    // A secret the caller mistyped is not echoed back.
    if (
      input !== undefined &&
      !path.some((p) => typeof p === 'string' && /password|secret|token|api_key|headers/i.test(p))
    )
      entry.input = input;
    return entry;
  });
}

function valueAt(data: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = data;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
}

function describeIssue(
  issue: z.core.$ZodIssue,
  input: unknown,
): { type: string; msg: string; ctx?: Record<string, unknown> } {
  switch (issue.code) {
    case 'invalid_type':
      if (input === undefined) return { type: 'missing', msg: 'Field required' };
      return { type: `${issue.expected}_type`, msg: `Input should be a valid ${issue.expected}` };
    case 'too_small': {
      const min = Number(issue.minimum);
      if (issue.origin === 'string')
        return {
          type: 'string_too_short',
          msg: `String should have at least ${min} character${min === 1 ? '' : 's'}`,
          ctx: { min_length: min },
        };
      if (issue.origin === 'array')
        return {
          type: 'too_short',
          msg: `List should have at least ${min} item${min === 1 ? '' : 's'}`,
          ctx: { min_length: min },
        };
      return issue.inclusive
        ? { type: 'greater_than_equal', msg: `Input should be greater than or equal to ${min}`, ctx: { ge: min } }
        : { type: 'greater_than', msg: `Input should be greater than ${min}`, ctx: { gt: min } };
    }
    case 'too_big': {
      const max = Number(issue.maximum);
      if (issue.origin === 'string')
        return {
          type: 'string_too_long',
          msg: `String should have at most ${max} character${max === 1 ? '' : 's'}`,
          ctx: { max_length: max },
        };
      if (issue.origin === 'array')
        return {
          type: 'too_long',
          msg: `List should have at most ${max} item${max === 1 ? '' : 's'}`,
          ctx: { max_length: max },
        };
      return issue.inclusive
        ? { type: 'less_than_equal', msg: `Input should be less than or equal to ${max}`, ctx: { le: max } }
        : { type: 'less_than', msg: `Input should be less than ${max}`, ctx: { lt: max } };
    }
    case 'invalid_value':
      return {
        type: 'enum',
        msg: `Input should be ${issue.values.map((v) => `'${String(v)}'`).join(', ')}`,
        ctx: { expected: issue.values.map(String).join(', ') },
      };
    case 'invalid_format':
      return { type: `${issue.format}_parsing`, msg: issue.message || `Input should be a valid ${issue.format}` };
    case 'unrecognized_keys':
      return { type: 'extra_forbidden', msg: `Extra inputs are not permitted: ${issue.keys.join(', ')}` };
    default:
      return { type: issue.code, msg: issue.message };
  }
}

/**
 * The wording of `issueLines`. `validation`: the 422 entries' messages (evaluation results).
 * `span`: span ingest's rejections (docs/spans.md), which differ in four places: an `int` is
 * "a valid integer"; a list's size bounds read like a number's ("greater than or equal to 1");
 * unknown keys say zod's own message; and a record's bad key says why after "Invalid key:".
 */
export type IssueWording = 'validation' | 'span';

/** `field.path: message` for each issue of one rejected item (just the message at the item's root). */
export function issueLines(
  issues: readonly z.core.$ZodIssue[],
  item: unknown,
  wording: IssueWording = 'validation',
): string[] {
  if (wording === 'validation') {
    return zodIssuesToValidation('item', issues, item).map((v) => {
      const path = v.loc.slice(1).join('.');
      return path ? `${path}: ${v.msg}` : v.msg;
    });
  }
  return issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    const message = spanMessage(issue, valueAt(item, issue.path));
    return path ? `${path}: ${message}` : message;
  });
}

function spanMessage(issue: z.core.$ZodIssue, input: unknown): string {
  switch (issue.code) {
    case 'invalid_type':
      if (input !== undefined && issue.expected === 'int') return 'Input should be a valid integer';
      break;
    case 'too_small':
      if (issue.origin !== 'string')
        return `Input should be greater than ${issue.inclusive ? 'or equal to ' : ''}${Number(issue.minimum)}`;
      break;
    case 'too_big':
      if (issue.origin !== 'string')
        return `Input should be less than ${issue.inclusive ? 'or equal to ' : ''}${Number(issue.maximum)}`;
      break;
    case 'invalid_key':
      return `Invalid key: ${issue.issues.map((inner) => spanMessage(inner as z.core.$ZodIssue, issue.path.at(-1))).join('; ')}`;
    case 'unrecognized_keys':
    case 'invalid_format':
      return issue.message;
  }
  return describeIssue(issue, input).msg;
}
