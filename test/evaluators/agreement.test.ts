import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, PUBLIC, projectWithKey, useHarness } from '../support/harness.js';
import { writeScores } from '../../src/scores/service.js';
import { cohensKappa, correlation } from '../../src/evaluators/agreement.js';

/**
 * An evaluator's agreement with people (issue 33 item 5; docs/evaluators.md, "Agreement with people"):
 * its scores beside the annotation scores of the same name on the same traces, with kappa and
 * correlation computed by hand below.
 */

const h = useHarness();
let a: Awaited<ReturnType<typeof projectWithKey>>;
const run = crypto.randomBytes(4).toString('hex');
const tid = (i: number) => `agree-${run}-${i}`;

let made = 0;
async function evaluator(scoreName: string): Promise<string> {
  const res = await call(h().api, {
    method: 'POST',
    url: `${PUBLIC}/evaluators`,
    token: a.key.key,
    payload: {
      name: `agree-${scoreName}-${run}-${made++}`,
      target: 'trace',
      scorer: { type: 'check', check: 'contains', params: { text: 'x' } },
      score_name: scoreName,
      enabled: false,
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}

async function write(scores: Record<string, unknown>[], origin: Parameters<typeof writeScores>[3]) {
  const project = { projectId: a.project.id, traceTtlDays: 30 };
  const { rejected } = await writeScores(h().ctx, project, scores, origin);
  expect(rejected).toEqual([]);
}

const agreement = (id: string, query: Record<string, string> = {}, token = a.key.key) =>
  call(h().api, { method: 'GET', url: `${PUBLIC}/evaluators/${id}/agreement`, token, query });

let verdict: string;
let accuracy: string;
let other: string;

beforeAll(async () => {
  a = await projectWithKey(h(), 'agree');
  verdict = await evaluator('verdict');
  accuracy = await evaluator('accuracy');
  other = await evaluator('verdict');
  const person = { source: 'annotation' as const, authorUserId: a.owner.user.id };
  // Evaluator vs person on ten traces: 8 agree; evaluator good 6 / bad 4, person good 6 / bad 4.
  const judge = ['good', 'good', 'good', 'good', 'bad', 'bad', 'bad', 'good', 'bad', 'good'];
  const human = ['good', 'good', 'good', 'bad', 'bad', 'bad', 'good', 'good', 'bad', 'good'];
  const cat = (i: number, label: string, more: Record<string, unknown> = {}) => ({
    trace_id: tid(i),
    name: 'verdict',
    data_type: 'categorical',
    string_value: label,
    ...more,
  });
  await write(
    judge.map((l, i) => cat(i, l)),
    { source: 'evaluator', evaluatorId: verdict },
  );
  // The person first said "good" on trace 4, then replaced it with "bad": the newest counts.
  await write([cat(4, 'good', { score_id: `p4-${run}` })], person);
  await write(
    human.map((l, i) => cat(i, l, i === 4 ? { score_id: `p4-${run}` } : {})),
    person,
  );
  // Not counted: another name, an API score, another evaluator's, a person's on a trace the evaluator skipped.
  await write([cat(0, 'bad', { name: 'tone' }), cat(11, 'bad')], person);
  await write([cat(1, 'bad')], { source: 'api' });
  await write([cat(2, 'bad')], { source: 'evaluator', evaluatorId: other });
  // Numeric: evaluator 1, 2, 3, 4 against people's 2, 2, 4, 4.
  const num = (i: number, value: number) => ({ trace_id: tid(i), name: 'accuracy', data_type: 'numeric', value });
  await write(
    [1, 2, 3, 4].map((v, i) => num(i, v)),
    { source: 'evaluator', evaluatorId: accuracy },
  );
  await write(
    [2, 2, 4, 4].map((v, i) => num(i, v)),
    person,
  );
});

describe('evaluator agreement: the measures', () => {
  it("computes Cohen's kappa and observed agreement as by hand", () => {
    // p_o = 3/4; p_e = (2/4)(2/4) + (2/4)(2/4) = 1/2; kappa = (3/4 - 1/2) / (1 - 1/2) = 1/2.
    expect(
      cohensKappa(
        [
          ['a', 'a'],
          ['a', 'b'],
          ['b', 'b'],
          ['b', 'b'],
        ].map(([x, y]) => [x!, y!]),
      ),
    ).toEqual({
      agreement: 0.75,
      kappa: 0.5,
    });
    // Every rating the same label: chance agreement is 1, kappa undefined.
    expect(
      cohensKappa([
        ['a', 'a'],
        ['a', 'a'],
      ]),
    ).toEqual({ agreement: 1, kappa: null });
    expect(cohensKappa([])).toEqual({ agreement: null, kappa: null });
    expect(correlation([[1, 5]])).toEqual({ correlation: null, mean_difference: -4 });
    expect(
      correlation([
        [1, 1],
        [2, 1],
      ]).correlation,
    ).toBeNull();
  });
});

describe('GET /evaluators/{evaluator_id}/agreement', () => {
  it('measures a categorical evaluator against people: agreement, kappa, the disagreeing traces', async () => {
    const res = await agreement(verdict);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    // p_o = 8/10; p_e = 0.6·0.6 + 0.4·0.4 = 0.52; kappa = 0.28 / 0.48 = 7/12.
    expect(body).toMatchObject({
      evaluator_id: verdict,
      score_name: 'verdict',
      data_type: 'categorical',
      pairs: 10,
      agreement: 0.8,
      correlation: null,
      mean_difference: null,
      truncated: false,
    });
    expect(body.kappa).toBeCloseTo(7 / 12, 12);
    expect(
      body.disagreements.map((d: { trace_id: string; evaluator: { label: string }; annotation: { label: string } }) => [
        d.trace_id,
        d.evaluator.label,
        d.annotation.label,
      ]),
    ).toEqual([
      [tid(3), 'good', 'bad'],
      [tid(6), 'bad', 'good'],
    ]);
    expect(body.disagreements[0].trace_url).toMatch(new RegExp(`/projects/${a.project.id}/traces/${tid(3)}$`));
  });

  it('measures a numeric evaluator: correlation and mean difference', async () => {
    const body = (await agreement(accuracy)).json();
    // x = 1,2,3,4; y = 2,2,4,4: Sxy = 4, Sxx = 5, Syy = 4, r = 4/√20; mean x - y = 2.5 - 3.
    expect(body).toMatchObject({ data_type: 'numeric', pairs: 4, agreement: null, kappa: null, mean_difference: -0.5 });
    expect(body.correlation).toBeCloseTo(4 / Math.sqrt(20), 12);
    expect(body.disagreements.map((d: { trace_id: string }) => d.trace_id).sort()).toEqual([tid(0), tid(2)]);
    expect(body.disagreements[0].evaluator.label).toBeNull();
  });

  it('counts only the evaluator scores written in the window', async () => {
    const past = await agreement(verdict, { start_time: '2020-01-01T00:00:00Z', end_time: '2020-02-01T00:00:00Z' });
    expect(past.statusCode).toBe(200);
    expect(past.json()).toMatchObject({ pairs: 0, data_type: null, agreement: null, kappa: null, disagreements: [] });
    expect(past.json().start_time).toBe('2020-01-01T00:00:00.000Z');
    // The other evaluator of the same score name is measured on its own scores: one pair, "bad" vs "good"
    // (p_o = 0, p_e = 1·0 = 0, kappa = 0).
    expect((await agreement(other)).json()).toMatchObject({ pairs: 1, agreement: 0, kappa: 0 });
  });

  it('refuses a window that ends before it starts, and an unknown evaluator', async () => {
    const bad = await agreement(verdict, { start_time: '2024-02-01T00:00:00Z', end_time: '2024-01-01T00:00:00Z' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().detail).toBe('start_time must be before end_time');
    expect((await agreement('no-such-evaluator')).statusCode).toBe(404);
  });

  it("keeps projects apart: project B can't read A's evaluator's agreement", async () => {
    const b = await projectWithKey(h(), 'agree-other');
    const res = await agreement(verdict, {}, b.key.key);
    expect(res.statusCode).toBe(404);
    expect(JSON.stringify(res.json())).not.toContain('verdict');
  });
});
