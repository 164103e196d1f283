import { z } from 'zod';
import { DateTime, page } from '../answer-schemas.js';

/** The answers of the comment routes (quality.md §3, docs/annotation.md). */

export const CommentAnswer = z
  .object({
    id: z.string(),
    project_id: z.string(),
    trace_id: z.string(),
    span_id: z.string().nullable().describe('the span of the trace the comment is about; null for the trace'),
    text: z.string(),
    author_user_id: z.string().nullable().describe('null once the author’s account is deleted'),
    author_name: z.string().nullable(),
    created_at: DateTime,
  })
  .meta({ id: 'Comment' });

export const CommentListAnswer = page(CommentAnswer).meta({ id: 'CommentList' });
