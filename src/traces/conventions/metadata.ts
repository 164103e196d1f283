import type { OtlpValue } from '../otlp-types.js';
import { jsonObject } from './values.js';

/**
 * User-meant metadata under plain keys: what an SDK nests under its own prefix is what the user passed
 * as metadata (`experimental_telemetry: {metadata: {tenant}}` → `ai.telemetry.metadata.tenant`), so it
 * is lifted to `tenant`, which `metadata tenant eq acme` finds.
 */
const LIFTED_PREFIXES = [
  'ai.telemetry.metadata.',
  'traceloop.association.properties.',
  'langfuse.observation.metadata.',
  'langfuse.trace.metadata.',
];

/** Attributes holding the user's metadata as one JSON object (OpenInference `metadata`, Langfuse's non-flat form). */
const JSON_METADATA_KEYS: ReadonlySet<string> = new Set([
  'metadata',
  'langfuse.observation.metadata',
  'langfuse.trace.metadata',
]);

/** The plain key of a lifted attribute, or '' when `key` is not one. */
export function liftedKey(key: string): string {
  const c = key.charCodeAt(0);
  // Every lifted prefix starts with `a`, `t` or `l`: most keys stop here.
  if (c !== 97 && c !== 116 && c !== 108) return '';
  for (const prefix of LIFTED_PREFIXES) {
    if (key.length > prefix.length && key.startsWith(prefix)) return key.slice(prefix.length);
  }
  return '';
}

/** The entries of a JSON metadata attribute, or undefined when `key` is not one or its value no object. */
export function jsonMetadata(key: string, value: OtlpValue): [string, unknown][] | undefined {
  if (!JSON_METADATA_KEYS.has(key)) return undefined;
  const object = jsonObject(value);
  return object ? Object.entries(object) : undefined;
}
