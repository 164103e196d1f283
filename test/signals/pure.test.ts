import { describe, expect, it } from 'vitest';
import { incrementalDue, LATENESS_OVERLAP_MS, passFrom, sqlDue } from '../../src/signals/detector-state.js';
import { errorGroup, findingId, sqlGroup, thresholdGroup, thresholdSummary } from '../../src/signals/groups.js';
import { incrementalQuery } from '../../src/signals/detection-queries.js';
import { configPredicates, parseConfig } from '../../src/detectors/config.js';

/** The pure parts of detection: when a detector is due, how findings group and are named, the pass's SQL. */

describe('when a detector runs', () => {
  const scanFrom = new Date('2026-01-01T00:00:00Z');
  it('reads from its watermark minus the lateness overlap (or from when it was enabled)', () => {
    expect(passFrom({ scan_from: scanFrom, watermark_ms: null })).toBe(scanFrom.getTime());
    expect(passFrom({ scan_from: scanFrom, watermark_ms: '1800000000000' })).toBe(
      1_800_000_000_000 - LATENESS_OVERLAP_MS,
    );
  });

  it('runs when its project stored something above the watermark, or while the overlap may still bring spans', () => {
    const d = { scan_from: scanFrom, watermark_ms: '1000000' };
    expect(incrementalDue(d, 1_000_001, 10_000_000)).toBe(true);
    expect(incrementalDue(d, 1_000_000, 10_000_000)).toBe(false);
    expect(incrementalDue(d, undefined, 1_000_000 + LATENESS_OVERLAP_MS - 1)).toBe(true);
    expect(incrementalDue(d, undefined, 1_000_000 + LATENESS_OVERLAP_MS)).toBe(false);
    expect(incrementalDue({ scan_from: scanFrom, watermark_ms: null }, scanFrom.getTime() + 1, 0)).toBe(true);
    expect(incrementalDue({ scan_from: scanFrom, watermark_ms: null }, scanFrom.getTime() - 1, 0)).toBe(false);
  });

  it('runs a sql detector once per interval', () => {
    const config = { query: 'SELECT trace_id FROM traces', interval_minutes: 5 };
    expect(sqlDue({ config, last_run_at: null }, 0)).toBe(true);
    expect(sqlDue({ config, last_run_at: new Date(0) }, 299_999)).toBe(false);
    expect(sqlDue({ config, last_run_at: new Date(0) }, 300_000)).toBe(true);
  });
});

describe('groups and names', () => {
  it('say what and where', () => {
    expect(errorGroup('TimeoutError', 'tool.search').title).toBe('TimeoutError in tool.search');
    expect(errorGroup('', 'tool.search').title).toBe('Error in tool.search');
    expect(errorGroup('A', 'b').key).not.toBe(errorGroup('A b', '').key);
    const config = { measure: 'latency', operator: '>', value: 5000 } as const;
    expect(thresholdGroup(config, 'llm.chat').title).toBe('latency > 5000 in llm.chat');
    expect(thresholdSummary(config, 7345.5)).toBe('latency 7345.5 > 5000');
    expect(sqlGroup('Costly', '').title).toBe('Costly');
    expect(sqlGroup('Costly', 'user-1').title).toBe('Costly: user-1');
    expect(errorGroup('E', 'x'.repeat(1000)).title.length).toBeLessThanOrEqual(300);
  });

  it('give a finding the same id every time the same detector finds the same span', () => {
    expect(findingId('d', 't', 's')).toBe(findingId('d', 't', 's'));
    expect(findingId('d', 't', 's')).not.toBe(findingId('d2', 't', 's'));
    expect(findingId('d', 't', 's')).not.toBe(findingId('d', 'ts', ''));
    expect(findingId('d', 't', 's')).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe('the pass query', () => {
  it('is one parameterised query over the stored-since range, leaving out what the detector found', () => {
    const parsed = parseConfig('threshold', {
      measure: 'cost',
      operator: '>=',
      value: 1,
      filters: [{ field: 'model_name', value: 'gpt-4o' }],
    });
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const config = parsed.config as { measure: 'cost'; operator: '>='; value: number };
    const q = incrementalQuery({
      projectId: 'p',
      detectorId: 'd',
      condition: { type: 'threshold', config },
      predicates: configPredicates(config),
      fromMs: 1000,
      limit: 10,
    });
    expect(q.query).toContain('ingested_at >');
    expect(q.query).toContain('NOT IN (SELECT trace_id, span_id FROM findings');
    expect(q.query).toContain("evaluation_run_id = ''");
    expect(q.query).toContain('SETTINGS max_execution_time');
    // The pass's start as text ClickHouse parses (a bare 1 is refused as a date: src/query/params.ts).
    expect(Object.values(q.query_params)).toEqual(
      expect.arrayContaining(['p', 'd', '1970-01-01 00:00:01.000', 10, ['gpt-4o']]),
    );
    expect(q.query).not.toContain('gpt-4o');
  });
});
