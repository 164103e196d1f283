import type { AppContext } from '../src/context.js';
import { startDeletionsWorker } from './deletions.js';

/** Starts every queue processor of the worker process. */
export function startWorkers(ctx: AppContext) {
  return [startDeletionsWorker(ctx)];
}
