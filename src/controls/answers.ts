import { z } from 'zod';
import { Count } from '../answer-schemas.js';
import { MaskingSetting } from './masking.js';
import { QuotasSetting } from './quota-setting.js';
import { SamplingSetting } from './sampling.js';

/** The answers of the producer-control routes (docs/producer-controls.md). */

export const SamplingAnswer = SamplingSetting.meta({ id: 'SamplingSetting' });
export const MaskingAnswer = MaskingSetting.meta({ id: 'MaskingSetting' });
export const QuotasAnswer = QuotasSetting.meta({ id: 'QuotasSetting' });

const UsageDay = z.object({
  date: z.string().describe('the UTC day, YYYY-MM-DD'),
  spans: Count.describe('spans ingest stored (a held span counts when a keep rule takes it out)'),
  traces: Count.describe('traces that started that day'),
  bytes: Count.describe('ingest request bytes as sent (compressed when sent compressed)'),
  sampled_out_spans: Count.describe('spans sampling held at ingest (docs/producer-controls.md, "Sampling")'),
  masked_values: Count.describe('values masking replaced or dropped'),
  scores: Count.describe('scores written'),
  judge_calls: Count.describe("online evaluators' judge calls"),
  judge_cost: z.number().describe("the judge calls' cost, priced by the model price table"),
});

export const ProjectUsageAnswer = z
  .object({
    data: z.array(UsageDay).describe('every UTC day of the window, oldest first'),
    storage_bytes: Count.describe("the project's share of the span and score tables on disk, now"),
  })
  .meta({ id: 'ProjectUsage' });

export const WorkspaceUsageAnswer = z
  .object({
    data: z.array(UsageDay).describe("every UTC day of the window, the workspace's projects summed"),
    storage_bytes: Count,
    projects: z.array(
      z.object({
        project_id: z.string(),
        name: z.string(),
        data: z.array(UsageDay),
        storage_bytes: Count,
      }),
    ),
  })
  .meta({ id: 'WorkspaceUsage' });
