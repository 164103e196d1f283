import { RequestValidationError } from '../errors.js';

/** `{{name}}` placeholders (spaces inside the braces allowed): letters, digits, `_`, `.` and `-`. */
const PLACEHOLDER = /\{\{\s*([\w.-]+)\s*\}\}/g;

export type PromptValue = string | { role: string; content: string }[];

/** A variable's text: a string as it is, anything else as its JSON. */
function asText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The variables a prompt names, in order of first use. */
export function variablesOf(prompt: PromptValue): string[] {
  const texts = typeof prompt === 'string' ? [prompt] : prompt.map((m) => m.content);
  const names = new Set<string>();
  for (const text of texts) for (const match of text.matchAll(PLACEHOLDER)) names.add(match[1]!);
  return [...names];
}

/**
 * The prompt with its placeholders filled. A variable the prompt names and `variables` lacks is a 422
 * naming it (the validation envelope, at `body.variables.<name>`); extra variables are ignored.
 */
export function compilePrompt(prompt: PromptValue, variables: Record<string, unknown>): PromptValue {
  const missing = variablesOf(prompt).filter((name) => !Object.hasOwn(variables, name));
  if (missing.length) {
    throw new RequestValidationError(
      missing.map((name) => ({
        loc: ['body', 'variables', name],
        msg: `missing variable '${name}'`,
        type: 'missing',
      })),
    );
  }
  const fill = (text: string) => text.replace(PLACEHOLDER, (_, name: string) => asText(variables[name]));
  return typeof prompt === 'string' ? fill(prompt) : prompt.map((m) => ({ ...m, content: fill(m.content) }));
}
