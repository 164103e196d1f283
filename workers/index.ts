import type { AppContext } from '../src/context.js';
import { startDeletionsWorker } from './deletions.js';
import { startAlertWorkers } from './alerts.js';
import { startDetectionWorkers } from './detection.js';
import { startTextIndexWorker } from './text-index.js';
import { startRollupSealWorker } from './rollup-seal.js';
import { startMonthMergeWorker } from './month-merge.js';
import { startEvaluatorWorkers } from './evaluators.js';
import { startExportWorkers } from './exports.js';

/** Starts every queue processor of the worker process. */
export function startWorkers(ctx: AppContext) {
  return [
    startDeletionsWorker(ctx),
    ...startAlertWorkers(ctx),
    ...startDetectionWorkers(ctx),
    startTextIndexWorker(ctx),
    startRollupSealWorker(ctx),
    startMonthMergeWorker(ctx),
    ...startEvaluatorWorkers(ctx),
    ...startExportWorkers(ctx),
  ];
}
