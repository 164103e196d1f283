import type { AppContext } from '../context.js';

export const DELETIONS_QUEUE = 'deletions';
export type PurgeProjectsJob = { project_ids: string[] };

/** Asks the worker to remove the ClickHouse rows of hard-deleted projects. */
export async function enqueueProjectPurge(ctx: AppContext, projectIds: string[]): Promise<void> {
  if (projectIds.length === 0) return;
  // The job id makes a repeated enqueue of the same purge a no-op.
  await ctx.queue.queue<PurgeProjectsJob>(DELETIONS_QUEUE).add(
    'purge-projects',
    { project_ids: projectIds },
    {
      jobId: `purge-${[...projectIds].sort().join(',').slice(0, 200)}`,
      attempts: 5,
      backoff: { type: 'exponential', delay: 5_000 },
      removeOnComplete: 1000,
      removeOnFail: 1000,
    },
  );
}

/**
 * Deletes every row of the given projects from each ClickHouse table that has a `project_id`
 * column. Running it twice deletes nothing more, so a retried job is harmless.
 */
export async function purgeProjects(ctx: AppContext, projectIds: string[]): Promise<number> {
  if (projectIds.length === 0) return 0;
  const stored = await ctx.ch.rows<{ table: string }>({
    query: `SELECT DISTINCT c.table AS table FROM system.columns c
             JOIN system.tables t ON t.database = c.database AND t.name = c.table
            WHERE c.database = currentDatabase() AND c.name = 'project_id' AND t.engine LIKE '%MergeTree'`,
  });
  const tables = stored.map((r) => r.table);
  for (const table of tables) {
    const name = `\`${table.replace(/`/g, '')}\``;
    if (ctx.ch.cluster) {
      // On a cluster the rows live in the replicated `*_local` tables of every shard (the Distributed
      // ones are not MergeTree, so the list above skips them): ON CLUSTER reaches each shard once. The
      // ids are spelled out: an ON CLUSTER query travels as text to the other nodes.
      const ids = projectIds.map((id) => {
        if (!/^[0-9A-Za-z-]{1,64}$/.test(id)) throw new Error('unexpected project id');
        return `'${id}'`;
      });
      await ctx.ch.client.command({
        query: `ALTER TABLE ${name} ON CLUSTER '${ctx.ch.cluster}' DELETE WHERE project_id IN (${ids.join(', ')})`,
      });
      continue;
    }
    await ctx.ch.client.command({
      query: `ALTER TABLE ${name} DELETE WHERE project_id IN {ids:Array(String)}`,
      query_params: { ids: projectIds },
    });
  }
  return tables.length;
}
