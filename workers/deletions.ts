import type { Job } from 'bullmq';
import type { AppContext } from '../src/context.js';
import { DELETIONS_QUEUE, purgeProjects, type PurgeProjectsJob } from '../src/deletions/service.js';

/** Purges the ClickHouse rows of hard-deleted projects. */
export function startDeletionsWorker(ctx: AppContext) {
  return ctx.queue.worker<PurgeProjectsJob>(DELETIONS_QUEUE, async (job: Job<PurgeProjectsJob>) => {
    await purgeProjects(ctx, job.data.project_ids);
  });
}
