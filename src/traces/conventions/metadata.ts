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

/**
 * Attributes naming what the user set on their app, under the plain key the trace header and the
 * metadata filter use: Langfuse's `release` (`LANGFUSE_RELEASE`, `release` on a trace) and `version`
 * (the trace's or observation's `version`). Sightline has no span or trace field for either, so they
 * are the user's metadata `release` and `version`, not a convention attribute.
 */
const RENAMED: ReadonlyMap<string, string> = new Map([
  ['langfuse.release', 'release'],
  ['langfuse.version', 'version'],
]);

/** The plain key of a lifted attribute, or '' when `key` is not one. */
export function liftedKey(key: string): string {
  const c = key.charCodeAt(0);
  // Every lifted prefix starts with `a`, `t` or `l`: most keys stop here.
  if (c !== 97 && c !== 116 && c !== 108) return '';
  for (const prefix of LIFTED_PREFIXES) {
    if (key.length > prefix.length && key.startsWith(prefix)) return key.slice(prefix.length);
  }
  return RENAMED.get(key) ?? '';
}

/**
 * Namespaces of the conventions instrumentations write in (docs/traces.md, "Metadata and
 * attributes"): the LLM conventions Sightline maps (Vercel AI SDK `ai.*` with its `operation.name` /
 * `resource.name`, OTel GenAI, OpenInference, Traceloop, Langfuse, `sightline.*`) and the general
 * OpenTelemetry semantic conventions. An attribute in one of them describes the span, not the user's
 * app: it stays on the span's `attributes` and never reaches the trace's `metadata_map`. Anything
 * else (a key of the user's own, `tenant` or `app.feature`) is the user's metadata.
 */
const CONVENTION_NAMESPACES: ReadonlySet<string> = new Set([
  // The LLM conventions
  ...'ai gen_ai llm langfuse traceloop openinference sightline input output tool tool_call embedding'.split(' '),
  ...'retrieval reranker document prompt graph agent operation resource openai anthropic aws az gcp'.split(' '),
  // OpenTelemetry's semantic conventions
  ...'otel exception error http url server client network net peer db rpc messaging code thread'.split(' '),
  ...'user enduser session user_agent faas cloud deployment service telemetry host process os'.split(' '),
  ...'container k8s event feature_flag graphql destination source log tls dns file system'.split(' '),
]);

/**
 * True when `key` is a convention attribute (its namespace, the part before the first `.`, is one
 * of CONVENTION_NAMESPACES); false for the user's own keys. Called once per attribute left after
 * the fields took theirs: one `indexOf` and one set lookup.
 */
export function isConventionAttribute(key: string): boolean {
  const dot = key.indexOf('.');
  return dot > 0 && CONVENTION_NAMESPACES.has(key.slice(0, dot));
}

/** The entries of a JSON metadata attribute, or undefined when `key` is not one or its value no object. */
export function jsonMetadata(key: string, value: OtlpValue): [string, unknown][] | undefined {
  if (!JSON_METADATA_KEYS.has(key)) return undefined;
  const object = jsonObject(value);
  return object ? Object.entries(object) : undefined;
}
