import type { Predicate } from './types';
import { COMMON_SPAN_KINDS, SPAN_STATUSES } from '../../src/traces/vocabulary';

/**
 * The predicate table (docs/filters.md) as the filter menus present it. One
 * description per field: its label, its operators and what kind of value it takes.
 */
export type FieldKind = 'text' | 'set' | 'number' | 'metadata' | 'score';
export type FieldDef = {
  field: Predicate['field'];
  label: string;
  kind: FieldKind;
  ops: string[];
  options?: string[];
  integer?: boolean;
  unit?: string;
};

export const NUMERIC_OPS = ['gt', 'gte', 'lt', 'lte', 'eq'];
/** The score predicate's operators (docs/filters.md, `score`): on the value, on the label (`in`), or presence. */
export const SCORE_OPS = ['gte', 'gt', 'lte', 'lt', 'eq', 'neq', 'in', 'is_set', 'is_not_set'];
export const OP_LABELS: Record<string, string> = {
  eq: '=',
  neq: '≠',
  is_set: 'is set',
  is_not_set: 'is not set',
  contains: 'contains',
  in: 'is',
  gt: '>',
  gte: '≥',
  lt: '<',
  lte: '≤',
};

export const FILTER_FIELDS: FieldDef[] = [
  { field: 'status', label: 'Status', kind: 'set', ops: ['in'], options: [...SPAN_STATUSES] },
  {
    field: 'span_kind',
    label: 'Span kind',
    kind: 'set',
    ops: ['in'],
    options: [...COMMON_SPAN_KINDS],
  },
  { field: 'model_name', label: 'Model', kind: 'set', ops: ['in'] },
  { field: 'tags', label: 'Tags', kind: 'set', ops: ['in'] },
  { field: 'environment', label: 'Environment', kind: 'set', ops: ['in'] },
  { field: 'error_type', label: 'Error type', kind: 'set', ops: ['in'] },
  { field: 'name', label: 'Span name', kind: 'set', ops: ['in'] },
  { field: 'duration_ms', label: 'Duration', kind: 'number', ops: NUMERIC_OPS, integer: true, unit: 'ms' },
  { field: 'cost', label: 'Cost', kind: 'number', ops: NUMERIC_OPS, unit: '$' },
  { field: 'total_tokens', label: 'Total tokens', kind: 'number', ops: NUMERIC_OPS, integer: true },
  { field: 'errors', label: 'Errors', kind: 'number', ops: NUMERIC_OPS, integer: true },
  { field: 'time_to_first_token_ms', label: 'Time to first token', kind: 'number', ops: NUMERIC_OPS, unit: 'ms' },
  { field: 'output_tokens_per_second', label: 'Output tokens/s', kind: 'number', ops: NUMERIC_OPS },
  { field: 'metadata', label: 'Metadata', kind: 'metadata', ops: ['eq', 'contains'] },
  { field: 'score', label: 'Score', kind: 'score', ops: SCORE_OPS },
  { field: 'trace_id', label: 'Trace ID', kind: 'text', ops: ['eq', 'contains'] },
  { field: 'signal_id', label: 'Signal', kind: 'text', ops: ['eq'] },
];

export function fieldDef(field: string): FieldDef {
  return FILTER_FIELDS.find((f) => f.field === field) ?? FILTER_FIELDS[0]!;
}

/** The span column a set field's suggestions are read from (public SQL, `spans` table). */
export const SUGGEST_COLUMN: Partial<Record<Predicate['field'], string>> = {
  model_name: 'model_name',
  environment: 'environment',
  error_type: 'error_type',
  name: 'name',
};

export function describePredicate(p: Predicate): string {
  const def = fieldDef(p.field);
  if (p.field === 'metadata') return `${p.key} ${OP_LABELS[p.op]} ${p.value}`;
  if (p.field === 'score') {
    if (p.op === 'is_set' || p.op === 'is_not_set') return `Score ${p.key} ${OP_LABELS[p.op]}`;
    if (Array.isArray(p.value))
      return `Score ${p.key} ${p.value.length > 1 ? 'is one of' : 'is'} ${p.value.join(', ')}`;
    return `Score ${p.key} ${OP_LABELS[p.op]} ${p.value}`;
  }
  if (Array.isArray(p.value)) return `${def.label} ${p.value.length > 1 ? 'is one of' : 'is'} ${p.value.join(', ')}`;
  if (p.field === 'cost') return `${def.label} ${OP_LABELS[p.op]} $${p.value}`;
  if (p.field === 'duration_ms' || p.field === 'time_to_first_token_ms')
    return `${def.label} ${OP_LABELS[p.op]} ${p.value} ms`;
  return `${def.label} ${OP_LABELS[p.op]} ${p.value}`;
}

/** Filters from the URL: anything that doesn't look like a predicate is dropped, not sent. */
export function parseFilterParam(raw: string | null): Predicate[] {
  if (!raw) return [];
  try {
    const parsed = JSON.parse(raw);
    return Array.isArray(parsed)
      ? parsed
          .filter((p) => p && typeof p === 'object' && typeof p.field === 'string' && typeof p.op === 'string')
          .slice(0, 20)
      : [];
  } catch {
    return [];
  }
}
