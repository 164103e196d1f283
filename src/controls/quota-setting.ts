import { z } from 'zod';

/** A project's ingest quotas (quality.md §6): absent means no quota. */
export const QuotasSetting = z
  .object({
    spans_per_day: z.number().int().min(1).max(1e12).optional().describe('spans accepted per UTC day'),
    ingest_requests_per_minute: z
      .number()
      .int()
      .min(1)
      .max(1e9)
      .optional()
      .describe('ingest requests per minute (every protocol counts)'),
  })
  .strict();
export type QuotasSetting = z.infer<typeof QuotasSetting>;
