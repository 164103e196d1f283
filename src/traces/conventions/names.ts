import type { OtlpAttributes } from '../otlp-types.js';

/**
 * Span names the conventions say better than the span's own (docs/integrations/mapping.md, "Names").
 * OTel span names are operation names (`ai.streamText`, `ai.toolCall`); the conventions carry what a
 * user named things in attributes:
 *
 * - A root span carrying a trace-name attribute is named by it, so the trace (named after its root)
 *   is: Sightline's `sightline.trace.name`, Langfuse's `langfuse.trace.name` (`traceName`,
 *   `updateActiveTrace({name})`), the Vercel AI SDK's `ai.telemetry.functionId`.
 * - A tool span is named after its tool: the Vercel AI SDK's `ai.toolCall.name` (GenAI's
 *   `execute_tool {gen_ai.tool.name}` names are already so).
 *
 * The span's own name then stays in its metadata as `otel.span.name`.
 */
export const TRACE_NAME_KEYS = ['sightline.trace.name', 'langfuse.trace.name', 'ai.telemetry.functionId'] as const;
export const TOOL_NAME_KEYS = ['ai.toolCall.name'] as const;

/** The metadata key that keeps a renamed span's own name. */
export const OWN_NAME_KEY = 'otel.span.name';

/** The name the conventions give the span, or undefined when its own name stands. */
export function conventionalName(name: string, attrs: OtlpAttributes, isRoot: boolean): string | undefined {
  const keys = isRoot ? [...TRACE_NAME_KEYS, ...TOOL_NAME_KEYS] : TOOL_NAME_KEYS;
  for (const key of keys) {
    const value = attrs.get(key);
    if (typeof value === 'string' && value.trim() !== '') return value.trim() === name ? undefined : value.trim();
  }
  return undefined;
}
