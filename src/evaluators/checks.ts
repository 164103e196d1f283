import RE2 from 're2';
import { compileJsonSchema } from './json-schema.js';
import type { CheckScorer } from './schema.js';
import { MAX_PARSE_CHARS, parsePath, readPath, type ScoredTarget } from './template.js';

/**
 * Check scorers (docs/evaluators.md, "Checks"): a boolean score computed from the target, no model
 * call. Pure and bounded: a regex runs on the linear-time engine (RE2), JSON is parsed only up to
 * MAX_PARSE_CHARS. The comment is a fixed sentence saying why, never the target's text.
 */

export type ScoreValue = { value: number; string_value: string | null; comment: string };

const verdict = (pass: boolean, comment: string): ScoreValue => ({
  value: pass ? 1 : 0,
  string_value: pass ? 'true' : 'false',
  comment,
});

function fieldOf(target: ScoredTarget, field: string): string | undefined {
  const path = parsePath(field);
  return typeof path === 'string' ? undefined : readPath(target, path);
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; why: string } {
  if (text.length > MAX_PARSE_CHARS) return { ok: false, why: `is longer than ${MAX_PARSE_CHARS} characters` };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, why: 'is not valid JSON' };
  }
}

export function runCheck(scorer: CheckScorer, target: ScoredTarget): ScoreValue {
  switch (scorer.check) {
    case 'latency_ms':
      if (target.duration_ms === null) return verdict(false, 'the target has no duration');
      return verdict(
        target.duration_ms <= scorer.params.max,
        `latency ${target.duration_ms} ms, at most ${scorer.params.max}`,
      );
    case 'cost':
      return verdict(target.cost <= scorer.params.max, `cost ${target.cost}, at most ${scorer.params.max}`);
    case 'total_tokens':
      return verdict(
        target.total_tokens <= scorer.params.max,
        `${target.total_tokens} tokens, at most ${scorer.params.max}`,
      );
    default:
      break;
  }
  const field = scorer.params.field;
  const text = fieldOf(target, field);
  if (text === undefined) return verdict(scorer.check === 'not_contains', `${field} is empty`);
  switch (scorer.check) {
    case 'json_valid': {
      const parsed = parseJson(text);
      return verdict(parsed.ok, parsed.ok ? `${field} is valid JSON` : `${field} ${parsed.why}`);
    }
    case 'json_schema': {
      const parsed = parseJson(text);
      if (!parsed.ok) return verdict(false, `${field} ${parsed.why}`);
      const valid = compileJsonSchema(scorer.params.schema)(parsed.value);
      return verdict(valid, valid ? `${field} fits the schema` : `${field} does not fit the schema`);
    }
    case 'regex': {
      const found = new RE2(scorer.params.pattern, 'u').test(text);
      return verdict(found, found ? `${field} matches the pattern` : `${field} does not match the pattern`);
    }
    case 'contains': {
      const found = text.includes(scorer.params.text);
      return verdict(found, found ? `${field} contains the text` : `${field} does not contain the text`);
    }
    case 'not_contains': {
      const found = text.includes(scorer.params.text);
      return verdict(!found, found ? `${field} contains the text` : `${field} does not contain the text`);
    }
    case 'length': {
      // Characters as people count them (code points), not UTF-16 units.
      let length = text.length;
      for (let i = 0; i < text.length; i++) {
        const unit = text.charCodeAt(i);
        if (
          unit >= 0xdc00 &&
          unit <= 0xdfff &&
          i > 0 &&
          text.charCodeAt(i - 1) >= 0xd800 &&
          text.charCodeAt(i - 1) <= 0xdbff
        )
          length--;
      }
      const { min, max } = scorer.params;
      const pass = (min === undefined || length >= min) && (max === undefined || length <= max);
      const bounds = [min !== undefined ? `at least ${min}` : null, max !== undefined ? `at most ${max}` : null]
        .filter(Boolean)
        .join(' and ');
      return verdict(pass, `${field} has ${length} characters, ${bounds}`);
    }
  }
}
