/**
 * What a scorer reads of its target, and the prompt template (docs/evaluators.md, "Variables"): a
 * variable's PATH is `input`, `output`, `error_message`, `name`, `model_name`, `metadata.KEY`, or a
 * JSON path into input or output (`input.messages[-1].content`). Pure, and bounded by cost: a path
 * has at most MAX_PATH_DEPTH steps, a text is parsed as JSON only up to MAX_PARSE_CHARS, a value
 * renders at most MAX_VALUE_CHARS and a prompt at most MAX_RENDERED_CHARS (cut with a marker).
 */

export const MAX_TEMPLATE_CHARS = 32_768;
export const MAX_VARIABLES = 20;
export const MAX_PATH_CHARS = 512;
export const MAX_PATH_DEPTH = 16;
export const MAX_PARSE_CHARS = 1_048_576;
export const MAX_VALUE_CHARS = 32_768;
export const MAX_RENDERED_CHARS = 131_072;
export const TRUNCATED = '…[truncated]';

/** The fields of a trace or span that paths and checks read. */
export type ScoredTarget = {
  name: string;
  input: string | null;
  output: string | null;
  error_message: string | null;
  model_name: string | null;
  metadata: Record<string, string>;
  duration_ms: number | null;
  cost: number;
  total_tokens: number;
};

type Step = string | number;
export type ParsedPath =
  | { root: 'name' | 'error_message' | 'model_name' }
  | { root: 'metadata'; key: string }
  | { root: 'input' | 'output'; steps: Step[] };

export const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]{0,63})\s*\}\}/g;

/** A path, or the sentence saying why it is not one. */
export function parsePath(path: string): ParsedPath | string {
  if (path.length === 0 || path.length > MAX_PATH_CHARS) return `a path has 1 to ${MAX_PATH_CHARS} characters`;
  if (path === 'name' || path === 'error_message' || path === 'model_name') return { root: path };
  if (path.startsWith('metadata.')) {
    const key = path.slice('metadata.'.length);
    return key.length > 0 ? { root: 'metadata', key } : 'metadata. needs a key: metadata.KEY';
  }
  const root = /^(input|output)/.exec(path)?.[1] as 'input' | 'output' | undefined;
  if (!root) return 'a path starts with input, output, error_message, name, model_name or metadata.KEY';
  const steps: Step[] = [];
  let rest = path.slice(root.length);
  while (rest.length > 0) {
    const m =
      /^\.([A-Za-z_$][A-Za-z0-9_$-]*)/.exec(rest) ??
      /^\[(-?\d{1,9})\]/.exec(rest) ??
      /^\[("(?:[^"\\]|\\.)*")\]/.exec(rest);
    if (!m) return `the path cannot be read from "${rest.slice(0, 40)}": use .key, [n], [-n] or ["key"]`;
    const token = m[1]!;
    steps.push(/^-?\d+$/.test(token) ? Number(token) : token.startsWith('"') ? (JSON.parse(token) as string) : token);
    if (steps.length > MAX_PATH_DEPTH) return `a path has at most ${MAX_PATH_DEPTH} steps`;
    rest = rest.slice(m[0].length);
  }
  return { root, steps };
}

/** The placeholders of a template, in order of first use. */
export function placeholders(template: string): string[] {
  return [...new Set([...template.matchAll(PLACEHOLDER)].map((m) => m[1]!))];
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : text.slice(0, max - TRUNCATED.length) + TRUNCATED;
}

/** The value a path reads as text, or undefined when the target has nothing there. */
export function readPath(target: ScoredTarget, path: ParsedPath): string | undefined {
  if (path.root === 'metadata') return target.metadata[path.key];
  if (path.root !== 'input' && path.root !== 'output') return target[path.root] ?? undefined;
  const text = target[path.root];
  if (text === null) return undefined;
  if (path.steps.length === 0) return text;
  // Input and output are stored as text; a JSON path parses it, within the parse bound.
  if (text.length > MAX_PARSE_CHARS) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  for (const step of path.steps) {
    if (typeof step === 'number') {
      if (!Array.isArray(value)) return undefined;
      value = value[step < 0 ? value.length + step : step];
    } else {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
      if (!Object.prototype.hasOwnProperty.call(value, step)) return undefined;
      value = (value as Record<string, unknown>)[step];
    }
    if (value === undefined) return undefined;
  }
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export type Rendered = {
  prompt: string;
  /** Variables whose path found nothing: rendered as empty text. */
  missing: string[];
  truncated: boolean;
};

/**
 * The prompt with each `{{NAME}}` replaced by its variable's value (each cut at MAX_VALUE_CHARS, the
 * whole at MAX_RENDERED_CHARS). A placeholder without a variable stays as written (definitions refuse
 * those; see schema.ts). Replacement is one pass, so a value holding `{{X}}` is never expanded.
 */
export function renderPrompt(template: string, variables: Record<string, string>, target: ScoredTarget): Rendered {
  const values = new Map<string, string>();
  const missing: string[] = [];
  let truncated = false;
  for (const [name, raw] of Object.entries(variables)) {
    const path = parsePath(raw);
    const value = typeof path === 'string' ? undefined : readPath(target, path);
    if (value === undefined) missing.push(name);
    const text = value ?? '';
    if (text.length > MAX_VALUE_CHARS) truncated = true;
    values.set(name, truncate(text, MAX_VALUE_CHARS));
  }
  let prompt = template.replace(PLACEHOLDER, (whole, name: string) => values.get(name) ?? whole);
  if (prompt.length > MAX_RENDERED_CHARS) {
    truncated = true;
    prompt = truncate(prompt, MAX_RENDERED_CHARS);
  }
  return { prompt, missing, truncated };
}
