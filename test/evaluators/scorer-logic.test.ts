import { describe, expect, it } from 'vitest';
import {
  MAX_PATH_DEPTH,
  MAX_RENDERED_CHARS,
  MAX_VALUE_CHARS,
  parsePath,
  readPath,
  renderPrompt,
  TRUNCATED,
  type ScoredTarget,
} from '../../src/evaluators/template.js';
import { runCheck } from '../../src/evaluators/checks.js';
import { CreateEvaluatorBody, Scorer, type CheckScorer } from '../../src/evaluators/schema.js';
import { JUDGE_ANSWER_ERRORS, readJudgement, scoreSchemaOf } from '../../src/evaluators/judgement.js';
import { evaluatorScoreId, isSampled } from '../../src/evaluators/identity.js';

const target = (over: Partial<ScoredTarget> = {}): ScoredTarget => ({
  name: 'chat',
  input: JSON.stringify({
    messages: [
      { role: 'system', content: 'be nice' },
      { role: 'user', content: 'hi there' },
    ],
  }),
  output: '{"answer": "hello", "n": 3}',
  error_message: null,
  model_name: 'gpt-4o',
  metadata: { tenant: 'acme', 'a.b': 'dotted' },
  duration_ms: 1200,
  cost: 0.002,
  total_tokens: 350,
  ...over,
});

const read = (path: string, t = target()) => {
  const parsed = parsePath(path);
  if (typeof parsed === 'string') throw new Error(parsed);
  return readPath(t, parsed);
};

describe('variable paths', () => {
  it('read the plain fields, metadata keys and JSON paths into input and output', () => {
    expect(read('name')).toBe('chat');
    expect(read('model_name')).toBe('gpt-4o');
    expect(read('error_message')).toBeUndefined();
    expect(read('metadata.tenant')).toBe('acme');
    expect(read('metadata.a.b')).toBe('dotted');
    expect(read('input.messages[-1].content')).toBe('hi there');
    expect(read('input.messages[0].role')).toBe('system');
    expect(read('input.messages[5]')).toBeUndefined();
    expect(read('output.n')).toBe('3');
    expect(read('output["answer"]')).toBe('hello');
    expect(read('input.messages[1]')).toBe('{"role":"user","content":"hi there"}');
    expect(read('output')).toBe('{"answer": "hello", "n": 3}');
    // A JSON path into text that isn't JSON finds nothing.
    expect(read('output.answer', target({ output: 'plain words' }))).toBeUndefined();
    // Inherited properties are not fields of the value.
    expect(read('output.constructor')).toBeUndefined();
  });

  it('refuse what is not a path, and paths deeper than the bound', () => {
    expect(parsePath('prompt')).toMatch(/starts with input, output/);
    expect(parsePath('metadata.')).toMatch(/needs a key/);
    expect(parsePath('input..x')).toMatch(/cannot be read/);
    expect(parsePath('input' + '.a'.repeat(MAX_PATH_DEPTH))).toEqual({
      root: 'input',
      steps: Array(MAX_PATH_DEPTH).fill('a'),
    });
    expect(parsePath('input' + '.a'.repeat(MAX_PATH_DEPTH + 1))).toMatch(`at most ${MAX_PATH_DEPTH} steps`);
  });
});

describe('prompt rendering', () => {
  it('replaces each placeholder once, leaves values unexpanded, and names the variables that found nothing', () => {
    const t = target({ output: 'use {{Q}} here' });
    const r = renderPrompt(
      'Q: {{Q}}\nA: {{ A }}\nE: {{E}}',
      { Q: 'input.messages[-1].content', A: 'output', E: 'error_message' },
      t,
    );
    expect(r).toEqual({ prompt: 'Q: hi there\nA: use {{Q}} here\nE: ', missing: ['E'], truncated: false });
  });

  it('cuts a long value and a long prompt with a marker', () => {
    const long = 'x'.repeat(MAX_VALUE_CHARS + 10);
    const r = renderPrompt('[{{A}}]', { A: 'output' }, target({ output: long }));
    expect(r.truncated).toBe(true);
    expect(r.prompt.length).toBe(MAX_VALUE_CHARS + 2);
    expect(r.prompt.endsWith(`${TRUNCATED}]`)).toBe(true);
    const many = renderPrompt(
      '{{A}}{{B}}{{C}}{{D}}{{E}}',
      { A: 'output', B: 'output', C: 'output', D: 'output', E: 'output' },
      target({ output: long }),
    );
    expect(many.prompt.length).toBe(MAX_RENDERED_CHARS);
    expect(many.prompt.endsWith(TRUNCATED)).toBe(true);
  });
});

const checkOf = (check: string, params: Record<string, unknown> = {}) =>
  Scorer.parse({ type: 'check', check, params }) as CheckScorer;

describe('check scorers', () => {
  it('give a boolean score with a fixed comment', () => {
    const t = target();
    expect(runCheck(checkOf('json_valid'), t)).toEqual({
      value: 1,
      string_value: 'true',
      comment: 'output is valid JSON',
    });
    expect(runCheck(checkOf('json_valid', { field: 'name' }), t)).toMatchObject({
      value: 0,
      comment: 'name is not valid JSON',
    });
    const schema = { type: 'object', required: ['answer'], properties: { n: { type: 'integer', maximum: 2 } } };
    expect(runCheck(checkOf('json_schema', { schema }), t)).toMatchObject({
      value: 0,
      comment: 'output does not fit the schema',
    });
    expect(runCheck(checkOf('json_schema', { schema: { required: ['answer'] } }), t).value).toBe(1);
    expect(runCheck(checkOf('regex', { pattern: '"answer":\\s*"h' }), t).value).toBe(1);
    expect(runCheck(checkOf('regex', { pattern: '^hi', field: 'input.messages[-1].content' }), t).value).toBe(1);
    expect(runCheck(checkOf('contains', { text: 'hello' }), t).value).toBe(1);
    expect(runCheck(checkOf('not_contains', { text: 'hello' }), t).value).toBe(0);
    expect(runCheck(checkOf('not_contains', { text: 'x', field: 'error_message' }), t).value).toBe(1);
    expect(runCheck(checkOf('length', { field: 'name', min: 4, max: 4 }), t)).toMatchObject({
      value: 1,
      comment: 'name has 4 characters, at least 4 and at most 4',
    });
    // Characters, not UTF-16 units: one emoji is one character.
    expect(runCheck(checkOf('length', { field: 'name', max: 1 }), target({ name: '😀' })).value).toBe(1);
    expect(runCheck(checkOf('latency_ms', { max: 1000 }), t)).toMatchObject({
      value: 0,
      comment: 'latency 1200 ms, at most 1000',
    });
    expect(runCheck(checkOf('latency_ms', { max: 1000 }), target({ duration_ms: null })).value).toBe(0);
    expect(runCheck(checkOf('cost', { max: 0.01 }), t).value).toBe(1);
    expect(runCheck(checkOf('total_tokens', { max: 349 }), t).value).toBe(0);
  });

  it('refuse patterns the linear-time engine refuses, and invalid JSON schemas, when defined', () => {
    for (const pattern of ['(a)\\1', '(?=x)', '(?<!y)z']) {
      const res = Scorer.safeParse({ type: 'check', check: 'regex', params: { pattern } });
      expect(res.success, pattern).toBe(false);
      expect(res.error!.issues[0]!.message).toMatch(/RE2/);
    }
    expect(
      Scorer.safeParse({ type: 'check', check: 'json_schema', params: { schema: { type: 'nope' } } }).success,
    ).toBe(false);
    expect(Scorer.safeParse({ type: 'check', check: 'length', params: { min: 5, max: 2 } }).success).toBe(false);
    expect(Scorer.safeParse({ type: 'check', check: 'length', params: {} }).success).toBe(false);
    expect(Scorer.safeParse({ type: 'check', check: 'cost', params: {} }).success).toBe(false);
    expect(Scorer.safeParse({ type: 'check', check: 'contains', params: { text: 'a', extra: 1 } }).success).toBe(false);
  });
});

const judge = (over: Record<string, unknown> = {}) => ({
  type: 'llm_judge',
  connection_id: '00000000-0000-4000-8000-000000000000',
  prompt: 'Rate {{OUT}}',
  variables: { OUT: 'output' },
  output: { data_type: 'numeric', min_value: 0, max_value: 1 },
  ...over,
});

describe('evaluator definitions', () => {
  const base = { name: 'e', target: 'trace', scorer: judge(), score_name: 'quality' };
  it('take defaults and refuse what the spec refuses', () => {
    expect(CreateEvaluatorBody.parse(base)).toMatchObject({
      sampling_rate: 1,
      delay_seconds: 30,
      enabled: true,
      filters: [],
    });
    const refused = (body: Record<string, unknown>, path: string) => {
      const res = CreateEvaluatorBody.safeParse({ ...base, ...body });
      expect(res.success, JSON.stringify(body)).toBe(false);
      expect(res.error!.issues.map((i) => i.path.join('.'))).toContain(path);
    };
    refused({ sampling_rate: 0 }, 'sampling_rate');
    refused({ sampling_rate: 1.5 }, 'sampling_rate');
    refused({ delay_seconds: 86_401 }, 'delay_seconds');
    refused({ span_filter: { kind: ['llm'] } }, 'span_filter');
    refused({ filters: Array(21).fill({ field: 'model_name', op: 'in', value: ['x'] }) }, 'filters');
    refused({ filters: [{ field: 'nope', op: 'eq', value: 1 }] }, 'filters.0.field');
    refused({ scorer: judge({ prompt: 'Rate {{OTHER}}' }) }, 'scorer.prompt');
    refused({ scorer: judge({ variables: { OUT: 'outputs' } }) }, 'scorer.variables.OUT');
    refused({ scorer: judge({ output: { data_type: 'categorical' } }) }, 'scorer.output.categories');
    refused({ scorer: judge({ output: { data_type: 'boolean', min_value: 0 } }) }, 'scorer.output.min_value');
    refused({ scorer: judge({ temperature: 3 }) }, 'scorer.temperature');
    refused({ name: '' }, 'name');
    expect(CreateEvaluatorBody.safeParse({ ...base, target: 'span', span_filter: { kind: ['llm'] } }).success).toBe(
      true,
    );
  });
});

describe('judge answers', () => {
  const numeric = { data_type: 'numeric' as const, min_value: 0, max_value: 1 };
  it('become a score with the reasoning as comment', () => {
    expect(readJudgement({ score: 0.8, reasoning: 'good' }, numeric)).toEqual({
      ok: true,
      score: { value: 0.8, string_value: null, comment: 'good' },
    });
    expect(readJudgement({ score: true, reasoning: 'ok' }, { data_type: 'boolean' })).toMatchObject({
      score: { value: 1, string_value: 'true' },
    });
    expect(
      readJudgement({ score: 'bad', reasoning: '' }, { data_type: 'categorical', categories: ['good', 'bad'] }),
    ).toMatchObject({
      score: { value: 1, string_value: 'bad' },
    });
    expect(readJudgement({ score: 1, reasoning: 'x'.repeat(5000) }, numeric)).toMatchObject({
      score: { comment: 'x'.repeat(4096) },
    });
  });

  it('that do not fit the output are errors with fixed sentences', () => {
    expect(readJudgement({ score: 2, reasoning: '' }, numeric)).toEqual({
      ok: false,
      error: JUDGE_ANSWER_ERRORS.range,
    });
    expect(readJudgement({ score: '0.5' }, numeric)).toEqual({ ok: false, error: JUDGE_ANSWER_ERRORS.numeric });
    expect(readJudgement('0.5', numeric)).toEqual({ ok: false, error: JUDGE_ANSWER_ERRORS.notObject });
    expect(readJudgement({ score: 1, reasoning: 5 }, numeric)).toEqual({
      ok: false,
      error: JUDGE_ANSWER_ERRORS.reasoning,
    });
    expect(readJudgement({ score: 1 }, { data_type: 'boolean' })).toEqual({
      ok: false,
      error: JUDGE_ANSWER_ERRORS.boolean,
    });
    expect(readJudgement({ score: 'meh' }, { data_type: 'categorical', categories: ['good'] })).toEqual({
      ok: false,
      error: JUDGE_ANSWER_ERRORS.category,
    });
  });

  it('are asked for by a schema of the output', () => {
    expect(scoreSchemaOf({ data_type: 'boolean' })).toEqual({ type: 'boolean' });
    expect(scoreSchemaOf({ data_type: 'categorical', categories: ['a', 'b'] })).toEqual({
      type: 'string',
      enum: ['a', 'b'],
    });
    expect(scoreSchemaOf(numeric)).toEqual({ type: 'number', description: 'a number at least 0 and at most 1' });
  });
});

describe('sampling and score ids', () => {
  it('decide a trace in or out for good, near the rate', () => {
    const ids = Array.from({ length: 4000 }, (_, i) => `trace-${i}`);
    const inside = ids.filter((id) => isSampled(id, 'ev-1', 0.25)).length;
    expect(inside).toBeGreaterThan(850);
    expect(inside).toBeLessThan(1150);
    for (const id of ids.slice(0, 50)) expect(isSampled(id, 'ev-1', 0.25)).toBe(isSampled(id, 'ev-1', 0.25));
    expect(ids.every((id) => isSampled(id, 'ev-1', 1))).toBe(true);
    // Another evaluator samples another share of the same traffic.
    const other = ids.filter((id) => isSampled(id, 'ev-2', 0.25));
    expect(other.filter((id) => isSampled(id, 'ev-1', 0.25)).length).toBeLessThan(other.length);
  });

  it('derive one UUID per evaluator and target', () => {
    const a = evaluatorScoreId('ev', 't1', null);
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(evaluatorScoreId('ev', 't1', null)).toBe(a);
    expect(evaluatorScoreId('ev', 't1', 's1')).not.toBe(a);
    expect(evaluatorScoreId('ev2', 't1', null)).not.toBe(a);
  });
});
