import { z } from 'zod';
import { AnyJson, Count, DateTime, page } from '../answer-schemas.js';

/** The answers of the prompt routes (docs/prompts.md). */

const ChatMessage = z.object({ role: z.string(), content: z.string() });
/** A text prompt's string, or a chat prompt's messages. */
export const PromptBody = z.union([z.string(), z.array(ChatMessage)]);

export const PromptVersionAnswer = z
  .object({
    name: z.string(),
    version: Count,
    type: z.enum(['text', 'chat']),
    prompt: PromptBody,
    config: z.record(z.string(), AnyJson),
    labels: z.array(z.string()).describe('the labels on this version; `latest` on the newest one'),
    commit_message: z.string().nullable(),
    created_at: DateTime,
    created_by: z.string().describe("who created the version: 'user:<user id>' or 'api_key:<key id>'"),
  })
  .meta({ id: 'PromptVersion' });

const PromptListItem = z.object({
  name: z.string(),
  type: z.enum(['text', 'chat']).describe('the type of the newest version'),
  latest_version: Count,
  labels: z.array(z.string()).describe('every label on a version of the name, `latest` included'),
  updated_at: DateTime,
});
export const PromptListAnswer = page(PromptListItem).meta({ id: 'PromptList' });
export const PromptVersionListAnswer = page(PromptVersionAnswer).meta({ id: 'PromptVersionList' });

export const CompiledPromptAnswer = z
  .object({ prompt: PromptBody.describe('the prompt with every `{{variable}}` filled') })
  .meta({ id: 'CompiledPrompt' });

const VersionMetrics = z.object({
  version: z
    .number()
    .int()
    .min(0)
    .describe('the version the spans named; 0 for spans naming the prompt without a version'),
  traces: Count,
  spans: Count,
  latency_p50_ms: z.number().nullable().describe('of the spans that ended; null when none did'),
  latency_p95_ms: z.number().nullable(),
  cost: z.number(),
  input_tokens: Count,
  output_tokens: Count,
  total_tokens: Count,
  error_rate: z.number().min(0).max(1).describe('the share of the spans in error'),
  scores: z
    .array(z.object({ name: z.string(), avg: z.number().nullable(), count: Count }))
    .describe("the average of each numeric or boolean score of the version's traces (trace and span level), by name"),
});

export const PromptMetricsAnswer = z
  .object({
    name: z.string(),
    start_time: DateTime,
    end_time: DateTime,
    versions: z
      .array(VersionMetrics)
      .describe('newest version first; versions without spans in the window are left out'),
  })
  .meta({ id: 'PromptMetrics' });
