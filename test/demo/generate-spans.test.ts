import { describe, expect, it } from 'vitest';
import { generateSpans, generateTraces, type GenerateOptions } from '../../src/demo/generate-spans.js';
import { validateSpans, type SpanInput } from '../../src/traces/span-input.js';

const START = Date.parse('2024-05-01T00:00:00.000Z');
const END = Date.parse('2024-05-08T00:00:00.000Z');
const BASE: GenerateOptions = { traces: 2000, startMs: START, endMs: END, seed: 42 };

// Generated once: every test below reads the same 2,000 traces.
const traces = [...generateTraces(BASE)];
const ms = (iso: string | null | undefined): number => Date.parse(iso as string);
const isError = (trace: SpanInput[]): boolean => trace.some((s) => s.status === 'error');
const isEvaluation = (trace: SpanInput[]): boolean => trace[0].evaluation_run_id != null;

describe('generateTraces', () => {
  it('gives the same output for the same seed and a different one for another seed', () => {
    const options = { ...BASE, traces: 200 };
    expect(generateSpans(options)).toEqual(generateSpans(options));
    const other = generateSpans({ ...options, seed: 43 });
    expect(other[0].trace_id).not.toBe(generateSpans(options)[0].trace_id);
    expect(generateSpans({ ...options, seed: undefined })).toEqual(generateSpans({ ...options, seed: 1 }));
  });

  it('yields the asked number of traces in ascending start order, inside the range', () => {
    expect(traces).toHaveLength(2000);
    const starts = traces.map((t) => ms(t[0].start_time));
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    expect(Math.min(...starts)).toBeGreaterThanOrEqual(START);
    expect(Math.max(...starts)).toBeLessThan(END);
    expect(generateSpans(BASE)).toHaveLength(traces.reduce((n, t) => n + t.length, 0));
    expect([...generateTraces({ ...BASE, traces: 0 })]).toEqual([]);
  });

  it('produces spans that all pass validateSpans', () => {
    const spans = traces.flat();
    const { accepted, rejected } = validateSpans(spans);
    expect(rejected).toEqual([]);
    expect(accepted).toHaveLength(spans.length);
    // total_tokens is left out, so it defaults to input + output.
    for (const span of accepted) expect(span.total_tokens).toBe(span.input_tokens + span.output_tokens);
  });

  it('gives each trace exactly one root, first, and 2–12 children in start order', () => {
    const wrong = traces.filter((trace) => {
      const [root, ...children] = trace;
      const oneRoot =
        root.kind === 'agent' && root.parent_span_id == null && children.every((s) => s.parent_span_id != null);
      const ordered = children.every((s, i) => i === 0 || ms(s.start_time) >= ms(children[i - 1].start_time));
      const shared = trace.every((s) => s.trace_id === root.trace_id && s.environment === root.environment);
      return !oneRoot || !ordered || !shared || children.length < 2 || children.length > 12;
    });
    expect(wrong).toEqual([]);
  });

  it('nests every child inside its parent in time', () => {
    const misplaced: string[] = [];
    for (const trace of traces) {
      const byId = new Map(trace.map((s) => [s.span_id, s]));
      for (const span of trace.slice(1)) {
        const parent = byId.get(span.parent_span_id as string);
        const inside = parent && ms(span.start_time) > ms(parent.start_time) && ms(span.end_time) < ms(parent.end_time);
        if (!inside || ms(span.end_time) < ms(span.start_time)) misplaced.push(span.span_id);
      }
    }
    expect(misplaced).toEqual([]);
  });

  it('uses unique OTel-style ids', () => {
    const spans = traces.flat();
    const traceIds = new Set(traces.map((t) => t[0].trace_id));
    const spanIds = new Set(spans.map((s) => s.span_id));
    expect(traceIds.size).toBe(traces.length);
    expect(spanIds.size).toBe(spans.length);
    expect([...traceIds].filter((id) => !/^[0-9a-f]{32}$/.test(id))).toEqual([]);
    expect([...spanIds].filter((id) => !/^[0-9a-f]{16}$/.test(id))).toEqual([]);
  });

  it('roughly respects the default evaluation and error shares', () => {
    const evaluation = traces.filter(isEvaluation).length / traces.length;
    const errors = traces.filter(isError).length / traces.length;
    expect(evaluation).toBeGreaterThan(0.005); // 0.02 expected; binomial sd ≈ 0.003
    expect(evaluation).toBeLessThan(0.04);
    expect(errors).toBeGreaterThan(0.03); // 0.05 expected; sd ≈ 0.005
    expect(errors).toBeLessThan(0.07);
  });

  it('respects asked-for shares, marking every span of an evaluation trace and none of the others', () => {
    const custom = [...generateTraces({ ...BASE, evaluationShare: 0.3, errorShare: 0.2 })];
    expect(custom.filter(isEvaluation).length / custom.length).toBeCloseTo(0.3, 1);
    expect(custom.filter(isError).length / custom.length).toBeCloseTo(0.2, 1);
    for (const trace of custom) {
      const marked = trace.filter((s) => s.evaluation_run_id != null).length;
      expect([0, trace.length]).toContain(marked);
    }
    expect([...generateTraces({ ...BASE, traces: 300, errorShare: 0 })].some(isError)).toBe(false);
    expect([...generateTraces({ ...BASE, traces: 300, errorShare: 1 })].every(isError)).toBe(true);
  });

  it('fails error traces in one or two steps, with an error type and message', () => {
    for (const trace of traces.filter(isError)) {
      const failed = trace.slice(1).filter((s) => s.status === 'error');
      expect(failed.length).toBeGreaterThanOrEqual(1);
      expect(failed.length).toBeLessThanOrEqual(2);
      for (const span of [...failed, ...(trace[0].status === 'error' ? [trace[0]] : [])]) {
        expect(span.error_type).toMatch(
          /^(RateLimitError|TimeoutError|ToolExecutionError|ValidationError|ContextLengthExceeded)$/,
        );
        expect(span.error_message).toBeTruthy();
      }
    }
  });

  it('prices LLM calls and shapes their payloads like chat messages', () => {
    const prices: Record<string, [number, number]> = {
      'gpt-4o': [2.5, 10],
      'gpt-4o-mini': [0.15, 0.6],
      'claude-3-5-sonnet': [3, 15],
      'claude-3-haiku': [0.25, 1.25],
      'llama-3.1-70b': [0.88, 0.88],
    };
    const llm = traces.flat().filter((s) => s.kind === 'llm' && s.status !== 'error');
    expect(llm.length).toBeGreaterThan(2000);
    let textBytes = 0;
    const wrong = llm.filter((span) => {
      const [inPrice, outPrice] = prices[span.model_name as string];
      const cost = ((span.input_tokens ?? 0) * inPrice + (span.output_tokens ?? 0) * outPrice) / 1e6;
      const duration = ms(span.end_time) - ms(span.start_time);
      const input = span.input as { role: string; content: string }[];
      const output = span.output as { role: string; content: string };
      textBytes += input.reduce((n, m) => n + m.content.length, 0) + output.content.length;
      const chat = input.every((m) => ['system', 'user'].includes(m.role)) && output.role === 'assistant';
      return (
        Math.abs(span.cost! - cost) > 1e-12 || 'total_tokens' in span || duration < 300 || duration > 8000 || !chat
      );
    });
    expect(wrong).toEqual([]);
    const average = textBytes / llm.length;
    expect(average).toBeGreaterThan(1200 * 0.7);
    expect(average).toBeLessThan(1200 * 1.3);
  });

  it('puts user, session and metadata on the root; sessions group traces of one user', () => {
    const roots = traces.map((t) => t[0]).filter((r) => r.evaluation_run_id == null);
    for (const root of roots) {
      expect(root.user_id).toMatch(/^user_\d{4}$/);
      expect(Object.keys(root.metadata ?? {}).sort()).toEqual(['app_version', 'customer_tier', 'region']);
    }
    const sessions = new Map<string, SpanInput[]>();
    for (const root of roots)
      if (root.session_id) sessions.set(root.session_id, [...(sessions.get(root.session_id) ?? []), root]);
    for (const members of sessions.values()) {
      expect(members.length).toBeLessThanOrEqual(6);
      expect(new Set(members.map((r) => r.user_id)).size).toBe(1);
    }
    const withoutSession = roots.filter((r) => !r.session_id).length / roots.length;
    expect(withoutSession).toBeGreaterThan(0.3);
    expect(withoutSession).toBeLessThan(0.5);
    expect(new Set(roots.map((r) => r.environment))).toEqual(new Set(['production', 'staging', 'development']));
  });

  it('rejects options it cannot honour', () => {
    expect(() => generateTraces({ ...BASE, endMs: START })).toThrow(RangeError);
    expect(() => generateTraces({ ...BASE, traces: -1 })).toThrow(RangeError);
    expect(() => generateTraces({ ...BASE, errorShare: 2 })).toThrow(RangeError);
  });
});
