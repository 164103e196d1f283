import crypto from 'node:crypto';
import type { ThresholdConfig } from '../detectors/config.js';

/**
 * How findings group into signals and what they say (pure). A signal is one per (detector, group
 * key) (issue 11): error detectors group by error type and span name, threshold detectors by span
 * name, sql detectors by the query's `group_key` column (one signal when it has none). The title
 * says what and where: "TimeoutError in tool.search".
 */

export type Group = { key: string; fields: Record<string, string>; title: string };

const MAX_TITLE = 300;
const MAX_SUMMARY = 500;

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export function errorGroup(errorType: string, spanName: string): Group {
  return {
    key: JSON.stringify([errorType, spanName]),
    fields: { error_type: errorType, span_name: spanName },
    title: cut(`${errorType || 'Error'} in ${spanName}`, MAX_TITLE),
  };
}

export function errorSummary(errorType: string, message: string): string {
  const what = errorType || 'Error';
  return cut(message ? `${what}: ${message}` : what, MAX_SUMMARY);
}

export function thresholdGroup(config: ThresholdConfig, spanName: string): Group {
  return {
    key: JSON.stringify([spanName]),
    fields: { span_name: spanName },
    title: cut(`${config.measure} ${config.operator} ${config.value} in ${spanName}`, MAX_TITLE),
  };
}

export function thresholdSummary(config: ThresholdConfig, measured: number): string {
  return `${config.measure} ${round(measured)} ${config.operator} ${config.value}`;
}

export function sqlGroup(detectorName: string, groupKey: string): Group {
  return {
    key: JSON.stringify([groupKey]),
    fields: groupKey ? { group_key: groupKey } : {},
    title: cut(groupKey ? `${detectorName}: ${groupKey}` : detectorName, MAX_TITLE),
  };
}

export function sqlSummary(detectorName: string, groupKey: string): string {
  return cut(groupKey ? `returned by ${detectorName} (group ${groupKey})` : `returned by ${detectorName}`, MAX_SUMMARY);
}

function round(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

/**
 * A finding's id, the same every time the same detector finds the same span (or trace, for a sql row
 * without span_id): a retried or repeated pass produces the same ids, and the dedupe relies on it.
 */
export function findingId(detectorId: string, traceId: string, spanId: string): string {
  return crypto.createHash('sha256').update(`${detectorId}\u0000${traceId}\u0000${spanId}`).digest('hex').slice(0, 32);
}
