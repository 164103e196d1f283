import { useMemo } from 'react';
import { fmtCell } from '../format';
import { asSpec, valueFormatter } from '../widget-spec';
import type { AnsweredWidget, WidgetSpec } from '../types';
import { TimeChart, type PointDetail, type Series } from './time-chart';
import { Empty } from './ui';
import { detailText } from './time-chart';

const MAX_SERIES = 10;

/**
 * Where an answer's value sits: the column named `value` (a SCORES answer carries `count` and, for
 * `avg`, `ci_low`/`ci_high` after it), else the last column.
 */
function valueIndex(columns: string[]): number {
  const i = columns.indexOf('value');
  return i >= 0 ? i : columns.length - 1;
}

/** A SCORES point's sample: how many scores and, for an average, its 95% interval. */
function pointDetail(columns: string[], row: unknown[]): PointDetail | null {
  const at = (name: string) => {
    const i = columns.indexOf(name);
    const v = i >= 0 && i !== valueIndex(columns) ? row[i] : undefined;
    return v === null || v === undefined || v === '' ? null : Number(v);
  };
  const detail = { count: at('count'), ciLow: at('ci_low'), ciHigh: at('ci_high') };
  return detail.count === null && detail.ciLow === null && detail.ciHigh === null ? null : detail;
}

/** Series rows `[time, ...groups, value, ...]` as uPlot's aligned columns, one series per group. */
function toSeries(answer: AnsweredWidget): { times: number[]; series: Series[] } {
  const vi = valueIndex(answer.columns);
  const groupCount = vi - 1;
  const times: number[] = [];
  const index = new Map<string, number>();
  const byGroup = new Map<string, Map<number, number | null>>();
  const details = new Map<string, Map<number, PointDetail>>();
  for (const row of answer.rows) {
    const t = Math.floor(Date.parse(String(row[0])) / 1000);
    if (!index.has(String(t))) {
      index.set(String(t), times.length);
      times.push(t);
    }
    const key =
      groupCount > 0
        ? row
            .slice(1, 1 + groupCount)
            .map((g) => (g === '' || g === null ? '(none)' : String(g)))
            .join(' · ')
        : 'value';
    if (!byGroup.has(key)) byGroup.set(key, new Map());
    const v = row[vi];
    byGroup.get(key)!.set(t, v === null || v === undefined ? null : Number(v));
    const detail = pointDetail(answer.columns, row);
    if (detail) {
      if (!details.has(key)) details.set(key, new Map());
      details.get(key)!.set(t, detail);
    }
  }
  // The biggest groups first; the rest would only be noise in a legend.
  const totals = [...byGroup.entries()].map(
    ([k, m]) => [k, [...m.values()].reduce<number>((a, v) => a + (v ?? 0), 0)] as const,
  );
  totals.sort((a, b) => b[1] - a[1]);
  const series = totals.slice(0, MAX_SERIES).map(([label]) => ({
    label,
    values: times.map((t) => byGroup.get(label)!.get(t) ?? null),
    ...(details.has(label) ? { details: times.map((t) => details.get(label)!.get(t) ?? null) } : {}),
  }));
  return { times, series };
}

function Bars({ answer, format }: { answer: AnsweredWidget; format: (v: number | null) => string }) {
  const vi = valueIndex(answer.columns);
  const rows = answer.rows.map((r) => ({
    label:
      r
        .slice(0, vi)
        .map((v) => (v === '' || v === null ? '(none)' : String(v)))
        .join(' · ') || 'value',
    value: Number(r[vi]) || 0,
    detail: pointDetail(answer.columns, r),
  }));
  const max = Math.max(...rows.map((r) => Math.abs(r.value)), 0) || 1;
  if (!rows.length) return <Empty title="No data in this window" />;
  return (
    <div className="bars" data-testid="bar-chart">
      {rows.slice(0, 50).map((r, i) => (
        <div className="bar-row" key={i}>
          <span className="bar-label" title={r.label}>
            {r.label}
          </span>
          <span className="bar-track">
            <span className="bar-fill" style={{ width: `${(Math.abs(r.value) / max) * 100}%` }} />
            <span className="bar-value">
              {format(r.value)}
              {r.detail ? <span className="muted"> {detailText(r.detail, format)}</span> : null}
            </span>
          </span>
        </div>
      ))}
    </div>
  );
}

function ResultTable({
  columns,
  rows,
  format,
}: {
  columns: string[];
  rows: unknown[][];
  format?: (v: number | null) => string;
}) {
  if (!rows.length) return <Empty title="No rows in this window" />;
  return (
    <div className="table-wrap" style={{ maxHeight: 320 }}>
      <table className="data compact">
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c} className={c === 'value' ? 'num' : undefined}>
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.slice(0, 500).map((r, i) => (
            <tr key={i}>
              {r.map((v, j) => (
                <td key={j} className={columns[j] === 'value' ? 'num' : undefined}>
                  {columns[j] === 'value' && format && typeof v === 'number' ? format(v) : fmtCell(v)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A markdown widget's text, shown as plain paragraphs and headings (no HTML is ever injected). */
export function MarkdownText({ spec }: { spec: unknown }) {
  const text =
    typeof spec === 'string'
      ? spec
      : typeof (spec as { text?: unknown })?.text === 'string'
        ? (spec as { text: string }).text
        : typeof (spec as { markdown?: unknown })?.markdown === 'string'
          ? (spec as { markdown: string }).markdown
          : JSON.stringify(spec ?? '');
  return (
    <div className="markdown">
      {text.split(/\n{2,}/).map((block, i) => {
        const heading = /^(#{1,3})\s+(.*)$/.exec(block.trim());
        if (heading) return <h3 key={i}>{heading[2]}</h3>;
        const lines = block.split('\n');
        if (lines.every((l) => /^\s*[-*]\s+/.test(l))) {
          return (
            <ul key={i}>
              {lines.map((l, j) => (
                <li key={j}>{l.replace(/^\s*[-*]\s+/, '')}</li>
              ))}
            </ul>
          );
        }
        return <p key={i}>{block}</p>;
      })}
    </div>
  );
}

/** One answered widget drawn by its type; a failed one says why instead of drawing nothing. */
export function WidgetBody({
  type,
  spec,
  answer,
}: {
  type: string;
  spec: unknown;
  answer: AnsweredWidget | undefined;
}) {
  const parsed = asSpec(spec) as WidgetSpec | undefined;
  const format = useMemo(() => valueFormatter(parsed), [parsed]);
  const series = useMemo(
    () => (answer && type === 'timeseries' && answer.status === 'ok' ? toSeries(answer) : null),
    [answer, type],
  );
  if (type === 'markdown') return <MarkdownText spec={spec} />;
  if (!answer) return <div className="skeleton" style={{ height: 220 }} />;
  if (answer.status === 'error') {
    return (
      <div className="error-box" role="alert" data-testid="widget-error">
        <strong>This widget could not be answered</strong>
        <div>{answer.error || 'the query failed'}</div>
      </div>
    );
  }
  if (answer.status === 'skipped')
    return <Empty title="Not answered">{String(answer.meta?.reason ?? 'skipped for this request')}</Empty>;
  if (type === 'timeseries' && series) {
    return series.times.length ? (
      <TimeChart times={series.times} series={series.series} format={format} />
    ) : (
      <Empty title="No data in this window" />
    );
  }
  if (type === 'stat') {
    const row = answer.rows[0];
    const v = row?.[valueIndex(answer.columns)];
    const detail = row ? pointDetail(answer.columns, row) : null;
    return (
      <div className="stat-value" data-testid="stat-value">
        {format(v === null || v === undefined ? null : Number(v))}
        {detail && (
          <div className="muted stat-detail" data-testid="stat-detail">
            {detailText(detail, format)}
          </div>
        )}
      </div>
    );
  }
  if (type === 'bar') return <Bars answer={answer} format={format} />;
  return <ResultTable columns={answer.columns} rows={answer.rows} format={format} />;
}
