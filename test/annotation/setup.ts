import { expect } from 'vitest';
import { call, createProject, projectWithKey, PUBLIC, type Harness } from '../support/harness.js';
import { memberWithRole } from '../support/accounts.js';
import { ingestSpans, iso } from '../support/ingest.js';

/** A project with three traces, two score configs, two reviewers (MEMBER) and a VIEWER. */
export async function annotationProject(h: Harness) {
  const t = await projectWithKey(h);
  const projectId = t.project.id;
  const t0 = Date.now() - 10 * 60_000;
  const trace = (id: string, offset: number, environment: string) => ({
    trace_id: id,
    span_id: `${id}-root`,
    name: 'chat',
    kind: 'llm',
    start_time: iso(t0 + offset),
    end_time: iso(t0 + offset + 100),
    environment,
    input: `question of ${id}`,
    output: `answer of ${id}`,
  });
  await ingestSpans(h, t.key.key, [
    trace('tr-1', 0, 'prod'),
    trace('tr-2', 1_000, 'prod'),
    trace('tr-3', 2_000, 'staging'),
  ]);
  const config = async (body: Record<string, unknown>) => {
    const res = await call(h.api, { method: 'POST', url: `${PUBLIC}/score-configs`, token: t.key.key, payload: body });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: string; name: string };
  };
  const quality = await config({
    name: 'quality',
    data_type: 'categorical',
    categories: [
      { label: 'good', value: 1 },
      { label: 'bad', value: 0 },
    ],
  });
  const accuracy = await config({ name: 'accuracy', data_type: 'numeric', min_value: 0, max_value: 10 });
  const reviewerA = await memberWithRole(h, t.owner, t.owner.workspace.id, 'MEMBER');
  const reviewerB = await memberWithRole(h, t.owner, t.owner.workspace.id, 'MEMBER');
  const viewer = await memberWithRole(h, t.owner, t.owner.workspace.id, 'VIEWER');
  return { ...t, projectId, quality, accuracy, reviewerA, reviewerB, viewer };
}

/** Another user's own project, for cross-project checks. */
export async function otherProject(h: Harness) {
  const other = await projectWithKey(h, 'other');
  return other;
}

export { createProject };
