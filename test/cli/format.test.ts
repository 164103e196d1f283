import { describe, expect, it } from 'vitest';
import { pageFooter, spanTree, timeFlag } from '../../src/cli/traces.js';
import { usageError } from '../../src/cli/main.js';

/** The CLI's pure formatting: page footers, time flags, the span tree and usage errors (docs/cli.md). */

describe('CLI formatting', () => {
  it('counts pages from 1 in the footer and names the next page flag', () => {
    expect(pageFooter({ page: 0, limit: 50, total: 3100 })).toBe('page 1 of 62 (3100 traces; next: --page 1)');
    expect(pageFooter({ page: 61, limit: 50, total: 3100 })).toBe('page 62 of 62 (3100 traces)');
    expect(pageFooter({ page: 0, limit: 50, total: 0 })).toBe('page 1 of 1 (0 traces)');
    expect(pageFooter({ page: 0, limit: 50, total: 1 })).toBe('page 1 of 1 (1 trace)');
  });

  it('reads ages and ISO 8601 in --since/--until, and hints at both formats otherwise', () => {
    const now = Date.parse('2026-11-25T12:00:00.000Z');
    expect(timeFlag('since', '7d', now)).toBe('2026-11-18T12:00:00.000Z');
    expect(timeFlag('since', '6h', now)).toBe('2026-11-25T06:00:00.000Z');
    expect(timeFlag('since', '30m', now)).toBe('2026-11-25T11:30:00.000Z');
    expect(timeFlag('since', '2w', now)).toBe('2026-11-11T12:00:00.000Z');
    expect(timeFlag('until', '2026-11-01', now)).toBe('2026-11-01');
    expect(timeFlag('until', '2026-11-01T09:00:00Z', now)).toBe('2026-11-01T09:00:00Z');
    expect(timeFlag('since', undefined, now)).toBeUndefined();
    expect(() => timeFlag('since', 'yesterday', now)).toThrow(
      /--since takes an ISO 8601 time .*or an age \(30m, 6h, 7d, 2w\), not 'yesterday'/,
    );
    expect(() => timeFlag('since', '2026-13-45', now)).toThrow(/--since takes/);
  });

  it('draws spans as a tree with offsets, durations, model, tokens, cost and errors', () => {
    const span = (
      id: string,
      parent: string | null,
      name: string,
      startMs: number,
      extra: Record<string, unknown> = {},
    ) => ({
      span_id: id,
      parent_span_id: parent,
      name,
      kind: 'custom',
      status: 'ok',
      start_time: new Date(1_000_000 + startMs).toISOString(),
      duration_ms: 10,
      model_name: null,
      input_tokens: 0,
      output_tokens: 0,
      cost: 0,
      ...extra,
    });
    const tree = spanTree([
      span('r', null, 'agent', 0, { kind: 'agent', duration_ms: 500 }),
      span('a', 'r', 'chat', 5, {
        kind: 'llm',
        model_name: 'gpt-4o',
        input_tokens: 100,
        output_tokens: 20,
        cost: 0.00045,
      }),
      span('b', 'r', 'search', 200, { kind: 'tool', status: 'error' }),
      span('c', 'b', 'http', 210, { duration_ms: null }),
    ] as Parameters<typeof spanTree>[0]);
    expect(tree.split('\n')).toEqual([
      'agent [agent]  +0 ms  500 ms',
      '├─ chat [llm]  +5 ms  10 ms  gpt-4o  100→20 tok  $0.00045',
      '└─ search [tool]  +200 ms  10 ms  ERROR',
      '   └─ http [custom]  +210 ms  running',
    ]);
    expect(spanTree([])).toBe('(no spans)');
  });

  it('turns commander errors into one line', () => {
    expect(usageError("error: unknown option '--x'\n(Did you mean --y?)\n")).toBe(
      "sightline: unknown option '--x' (Did you mean --y?) (see sightline --help)\n",
    );
  });
});
