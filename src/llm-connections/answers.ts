import { z } from 'zod';
import { Count, DateTime, page } from '../answer-schemas.js';
import { PROVIDERS } from './providers.js';

/** The answers of the LLM connection routes (docs/evaluators.md, "LLM connections"). */

/** A connection: never its key (only `key_preview`), never its extra headers' values. */
export const LlmConnectionAnswer = z
  .object({
    id: z.string(),
    project_id: z.string(),
    name: z.string(),
    provider: z.enum(PROVIDERS),
    base_url: z.string().nullable().describe('as given; null: the provider’s own address'),
    key_preview: z.string().describe('the last 4 characters of the API key; the key itself is never answered'),
    default_model: z.string().nullable(),
    extra_header_names: z.array(z.string()).describe('the names of the extra headers; their values are not answered'),
    created_at: DateTime,
    updated_at: DateTime,
  })
  .meta({ id: 'LlmConnection' });

export const LlmConnectionListAnswer = page(LlmConnectionAnswer).meta({ id: 'LlmConnectionList' });

export const LlmConnectionTestAnswer = z
  .union([
    z.object({ ok: z.literal(true), model: z.string(), latency_ms: Count }),
    z.object({
      ok: z.literal(false),
      error: z.string().describe("the provider's HTTP status and a fixed sentence; never the provider's answer"),
    }),
  ])
  .meta({ id: 'LlmConnectionTest' });
