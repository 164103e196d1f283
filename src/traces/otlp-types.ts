/**
 * The plain shape OTLP trace exports decode into (otlp.ts) and the instrumentation conventions map
 * from (otlp-mapping.ts, conventions/). Apart from both, so the mapping needn't import the decoder
 * that re-exports it.
 */

export type OtlpValue = string | number | boolean | null | OtlpValue[] | { [key: string]: OtlpValue };
/** Attributes in arrival order; a repeated key keeps its last value. */
export type OtlpAttributes = Map<string, OtlpValue>;

export interface OtlpSpan {
  /** Lowercase hex; `''` when absent. */
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  /** 0n when absent. */
  startTimeUnixNano: bigint;
  endTimeUnixNano: bigint;
  attributes: OtlpAttributes;
  events: { name: string; timeUnixNano: bigint; attributes: OtlpAttributes; droppedAttributesCount: number }[];
  links: { traceId: string; spanId: string; attributes: OtlpAttributes; droppedAttributesCount: number }[];
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  /** What the producer's SDK dropped past its own limits (OTLP's dropped_*_count), 0 when absent. */
  droppedAttributesCount: number;
  droppedEventsCount: number;
  droppedLinksCount: number;
}

export interface OtlpTraceRequest {
  resourceSpans: {
    resource: OtlpAttributes;
    scopeSpans: { scope: { name: string; version: string }; spans: OtlpSpan[] }[];
  }[];
}
