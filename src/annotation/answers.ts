import { z } from 'zod';
import { Count, DateTime, page } from '../answer-schemas.js';
import { ScoreAnswer } from '../scores/answers.js';
import { TraceDetailAnswer } from '../traces/answers.js';

/** The answers of the annotation queue routes (quality.md §3, docs/annotation.md). */

export const ITEM_STATUSES = ['pending', 'completed'] as const;

export const AnnotationQueueAnswer = z
  .object({
    id: z.string(),
    project_id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    score_config_ids: z.array(z.string()).describe('the score configs a reviewer fills for each item, in order'),
    pending: Count.describe('items not completed yet'),
    completed: Count.describe('items completed'),
    created_at: DateTime,
    updated_at: DateTime,
  })
  .meta({ id: 'AnnotationQueue' });

export const AnnotationQueueListAnswer = page(AnnotationQueueAnswer).meta({ id: 'AnnotationQueueList' });

export const AnnotationItemAnswer = z
  .object({
    id: z.string(),
    queue_id: z.string(),
    trace_id: z.string(),
    span_id: z.string().nullable().describe('the span of the trace to review; null for the trace itself'),
    status: z.enum(ITEM_STATUSES),
    held_by: z.string().nullable().describe('the user id holding the item now; null when no hold is live'),
    held_until: DateTime.nullable().describe('when the live hold ends'),
    completed_by: z.string().nullable(),
    completed_at: DateTime.nullable(),
    created_at: DateTime,
  })
  .meta({ id: 'AnnotationQueueItem' });

export const AnnotationItemListAnswer = page(AnnotationItemAnswer).meta({ id: 'AnnotationQueueItemList' });

const ItemRef = z.object({ item_id: z.string(), trace_id: z.string(), span_id: z.string().nullable() });

export const AnnotationItemsAddAnswer = z
  .object({
    added: z.array(ItemRef).describe('items new to the queue, in the order given (or listed)'),
    existing: z.array(ItemRef).describe('traces or spans already in the queue: left as they were'),
  })
  .meta({ id: 'AnnotationQueueItemsAdded' });

export const AnnotationNextAnswer = z
  .object({
    item: AnnotationItemAnswer,
    trace: TraceDetailAnswer.nullable().describe(
      'the trace as GET /traces/{trace_id} answers it; null when not stored',
    ),
  })
  .meta({ id: 'AnnotationQueueNext' });

export const AnnotationCompleteAnswer = z
  .object({
    item: AnnotationItemAnswer,
    scores: z.array(ScoreAnswer).describe('the scores stored (source annotation, the reviewer as author)'),
    comment_id: z.string().nullable().describe('the comment stored on the trace (or span), when one was given'),
  })
  .meta({ id: 'AnnotationQueueCompleted' });

export const AnnotationDatasetAnswer = z
  .object({
    dataset_id: z.string(),
    dataset_version_id: z.string().describe('the new version: the previous newest version’s cases and this one'),
    version_number: Count,
    test_case_count: Count,
  })
  .meta({ id: 'AnnotationDatasetVersion' });
