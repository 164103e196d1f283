import type { OtlpAttributes, OtlpValue } from '../otlp-types.js';
import { MAX_TAG_LENGTH, MAX_TAGS } from '../span-input.js';
import { parseJson } from './values.js';

/**
 * A span's tags (docs/integrations/mapping.md, "Tags"), from the first of these attributes present,
 * as a string array or a JSON array in a string: `sightline.tags`; Langfuse's `langfuse.trace.tags`
 * (`propagateAttributes({tags})`, `updateActiveTrace({tags})`); the Vercel AI SDK's
 * `ai.telemetry.metadata.tags` (`experimental_telemetry: {metadata: {tags}}`). The attribute used
 * leaves the metadata, where it was one string. Empty, overlong or non-string entries are left out.
 */
export const TAG_KEYS = ['sightline.tags', 'langfuse.trace.tags', 'ai.telemetry.metadata.tags'] as const;

export function tagsOf(attrs: OtlpAttributes, consumed: Set<string>): string[] | undefined {
  for (const key of TAG_KEYS) {
    const list = asList(attrs.get(key));
    if (!list) continue;
    consumed.add(key);
    const tags = new Set<string>();
    for (const tag of list) {
      if (typeof tag !== 'string') continue;
      const trimmed = tag.trim();
      if (trimmed !== '' && trimmed.length <= MAX_TAG_LENGTH) tags.add(trimmed);
      if (tags.size >= MAX_TAGS) break;
    }
    return [...tags];
  }
  return undefined;
}

function asList(value: OtlpValue | undefined): unknown[] | undefined {
  if (Array.isArray(value)) return value;
  if (typeof value !== 'string' || !value.startsWith('[')) return undefined;
  const parsed = parseJson(value);
  return Array.isArray(parsed) ? parsed : undefined;
}
