import { describe, expect, it } from 'vitest';
import { projectWithKey, useHarness } from '../support/harness.js';
import { waitUntil } from '../support/wait.js';
import { purgeProjects } from '../../src/deletions/service.js';
import { writeScores } from '../../src/scores/service.js';

/**
 * Scores follow the project's retention and its deletion (quality.md §1): each row carries the
 * project's trace_ttl_days and the table's TTL drops it that many days after `created_at`; the purge
 * of a deleted project removes its scores and no one else's.
 */
const h = useHarness();

async function scoreIds(projectId: string): Promise<string[]> {
  const rows = await h().ctx.ch.rows<{ score_id: string }>({
    query: 'SELECT score_id FROM scores WHERE project_id = {p:String} ORDER BY score_id',
    query_params: { p: projectId },
  });
  return rows.map((r) => r.score_id);
}

describe('score retention and deletion', () => {
  it("stamps each score with the project's retention, and the TTL drops one older than it", async () => {
    const t = await projectWithKey(h());
    const project = { projectId: t.project.id, traceTtlDays: 3 };
    await writeScores(h().ctx, project, [{ score_id: 'fresh', trace_id: 'x', name: 'q', value: 1 }], { source: 'api' });
    const stored = await h().ctx.ch.rows<{ ttl_days: number }>({
      query: 'SELECT ttl_days FROM scores WHERE project_id = {p:String}',
      query_params: { p: t.project.id },
    });
    expect(stored.map((r) => Number(r.ttl_days))).toEqual([3]);
    // The same score written two and four days ago: the second is past its 3 days.
    const [fresh] = await h().ctx.ch.rows<Record<string, unknown> & { created_at: string }>({
      query: `SELECT * FROM scores WHERE project_id = {p:String} AND score_id = 'fresh'`,
      query_params: { p: t.project.id },
    });
    const daysAgo = (days: number) =>
      new Date(Date.parse(`${fresh!.created_at.replace(' ', 'T')}Z`) - days * 86_400_000)
        .toISOString()
        .replace('T', ' ')
        .replace('Z', '');
    await h().ctx.ch.client.insert({
      table: 'scores',
      values: [
        { ...fresh, score_id: 'two-days', created_at: daysAgo(2) },
        { ...fresh, score_id: 'four-days', created_at: daysAgo(4) },
      ],
      format: 'JSONEachRow',
    });
    // TTL is applied as parts are written and merged; a final merge leaves no expired row behind.
    await h().ctx.ch.client.command({ query: 'OPTIMIZE TABLE scores FINAL' });
    expect(await scoreIds(t.project.id)).toEqual(['fresh', 'two-days']);
  });

  it("the purge of a deleted project removes its scores and keeps another project's", async () => {
    const [gone, kept] = [await projectWithKey(h()), await projectWithKey(h())];
    for (const t of [gone, kept])
      await writeScores(
        h().ctx,
        { projectId: t.project.id, traceTtlDays: 30 },
        [{ score_id: 's', trace_id: 'x', name: 'q', value: 1 }],
        { source: 'api' },
      );
    await purgeProjects(h().ctx, [gone.project.id]);
    await waitUntil(async () => (await scoreIds(gone.project.id)).length === 0, 'the purge mutation to finish');
    expect(await scoreIds(kept.project.id)).toEqual(['s']);
  });
});
