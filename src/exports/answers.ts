import { z } from 'zod';
import { Count, DateTime, page } from '../answer-schemas.js';
import { PredicateSchema } from '../query/predicates.js';
import { EXPORT_FORMATS, EXPORT_KINDS } from '../query/exports.js';

/** The answers of the export routes (docs/exports.md; quality.md §6). */

export const EXPORT_STATUSES = ['queued', 'running', 'completed', 'failed'] as const;

export const ExportCreatedAnswer = z
  .object({ export_id: z.string(), status: z.enum(EXPORT_STATUSES) })
  .meta({ id: 'ExportCreated' });

export const ExportAnswer = z
  .object({
    export_id: z.string(),
    kind: z.enum(EXPORT_KINDS),
    format: z.enum(EXPORT_FORMATS),
    status: z.enum(EXPORT_STATUSES),
    start_time: DateTime,
    end_time: DateTime,
    filters: z.array(PredicateSchema),
    destination: z
      .object({ bucket_id: z.string().nullable().describe('null once the bucket was deleted') })
      .nullable()
      .describe('null: a download'),
    schedule_id: z.string().nullable().describe('the schedule that started it, if one did'),
    rows: Count.describe('the rows the export holds, counted when it was planned'),
    bytes: Count.describe('the bytes written so far'),
    objects: z
      .array(z.string())
      .describe(
        "the objects' keys written so far (bucket), or the download's part files; emptied when a download expires",
      ),
    error: z.string().nullable().describe('a fixed sentence when it failed'),
    created_at: DateTime,
    finished_at: DateTime.nullable(),
    expires_at: DateTime.nullable().describe('when a download is deleted (24 hours after it completed)'),
  })
  .meta({ id: 'Export' });

export const ExportListAnswer = page(ExportAnswer).meta({ id: 'ExportList' });

/** A bucket: never its access key id or secret. */
export const ExportBucketAnswer = z
  .object({
    id: z.string(),
    project_id: z.string(),
    name: z.string(),
    endpoint: z.string(),
    region: z.string(),
    bucket: z.string(),
    prefix: z.string(),
    force_path_style: z.boolean(),
    created_at: DateTime,
  })
  .meta({ id: 'ExportBucket' });

export const ExportBucketListAnswer = page(ExportBucketAnswer).meta({ id: 'ExportBucketList' });

export const ExportScheduleAnswer = z
  .object({
    id: z.string(),
    kind: z.enum(EXPORT_KINDS),
    format: z.enum(EXPORT_FORMATS),
    filters: z.array(PredicateSchema),
    bucket_id: z.string(),
    hour_utc: z.number().int().min(0).max(23),
    last_day: z.string().nullable().describe('the last UTC day exported (YYYY-MM-DD)'),
    created_at: DateTime,
  })
  .meta({ id: 'ExportSchedule' });

export const ExportScheduleListAnswer = page(ExportScheduleAnswer).meta({ id: 'ExportScheduleList' });
