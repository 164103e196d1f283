import { useMemo } from 'react';
import { fmtCell } from '../format';
import { asSpec, valueFormatter } from '../widget-spec';
import type { AnsweredWidget, WidgetSpec } from '../types';
import { TimeChart, type Series } from './time-chart';
import { Empty } from './ui';

const MAX_SERIES = 10;

/** Series rows `[time, ...groups, value]` as uPlot's aligned columns, one series per group. */
function toSeries(answer: AnsweredWidget): { times: number[]; series: Series[] } {
  const groupCount = answer.columns.length - 2;
  const times: number[] = [];
  const index = new Map<string, number>();
  const byGroup = new Map<string, Map<number, number | null>>();
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
    const v = row[row.length - 1];
    byGroup.get(key)!.set(t, v === null || v === undefined ? null : Number(v));
  }
  // The biggest groups first; the rest would only be noise in a legend.
  const totals = [...byGroup.entries()].map(
    ([k, m]) => [k, [...m.values()].reduce<number>((a, v) => a + (v ?? 0), 0)] as const,
  );
  totals.sort((a, b) => b[1] - a[1]);
  const series = totals
    .slice(0, MAX_SERIES)
    .map(([label]) => ({ label, values: times.map((t) => byGroup.get(label)!.get(t) ?? null) }));
  return { times, series };
}

function Bars({ answer, format }: { answer: AnsweredWidget; format: (v: number | null) => string }) {
  const rows = answer.rows.map((r) => ({
    label:
      r
        .slice(0, -1)
        .map((v) => (v === '' || v === null ? '(none)' : String(v)))
        .join(' · ') || 'value',
    value: Number(r[r.length - 1]) || 0,
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
            <span className="bar-value">{format(r.value)}</span>
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
    const v = answer.rows[0]?.[answer.rows[0].length - 1];
    return (
      <div className="stat-value" data-testid="stat-value">
        {format(v === null || v === undefined ? null : Number(v))}
      </div>
    );
  }
  if (type === 'bar') return <Bars answer={answer} format={format} />;
  return <ResultTable columns={answer.columns} rows={answer.rows} format={format} />;
}
