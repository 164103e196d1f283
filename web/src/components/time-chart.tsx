import { useEffect, useRef, useState } from 'react';
import uPlot from 'uplot';
import { fmtInt } from '../format';

const PALETTE = [
  '#3b6fe0',
  '#e0793b',
  '#1f9d55',
  '#d23f3f',
  '#7c3aed',
  '#0891b2',
  '#b7791f',
  '#db2777',
  '#475467',
  '#65a30d',
];

/** A point's sample, when the answer carries it (SCORES): the count and, for an average, a 95% interval. */
export type PointDetail = { count: number | null; ciLow: number | null; ciHigh: number | null };
export type Series = { label: string; values: (number | null)[]; details?: (PointDetail | null)[] };

export function detailText(d: PointDetail, format: (v: number | null) => string): string {
  const parts: string[] = [];
  if (d.count !== null) parts.push(`n = ${fmtInt(d.count)}`);
  if (d.ciLow !== null && d.ciHigh !== null) parts.push(`95% CI ${format(d.ciLow)} – ${format(d.ciHigh)}`);
  return parts.join(' · ');
}

/**
 * A time series drawn by uPlot (canvas; fast on thousands of points), sized to its container and
 * redrawn when that changes. `times` are epoch seconds.
 */
export function TimeChart({
  times,
  series,
  format,
  height = 220,
}: {
  times: number[];
  series: Series[];
  format: (v: number | null) => string;
  height?: number;
}) {
  const box = useRef<HTMLDivElement>(null);
  const withDetails = series.some((s) => s.details);
  // The hovered point's sample (count, interval) for answers that carry one; uPlot's legend shows values only.
  const [hover, setHover] = useState<number | null>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height,
      legend: { show: series.length > 1, live: true },
      cursor: { drag: { x: false, y: false } },
      hooks: withDetails ? { setCursor: [(u: uPlot) => setHover(u.cursor.idx ?? null)] } : {},
      scales: { x: { time: true } },
      axes: [
        { stroke: '#667085', grid: { stroke: '#eef0f3' }, ticks: { stroke: '#e3e6eb' } },
        {
          stroke: '#667085',
          grid: { stroke: '#eef0f3' },
          ticks: { stroke: '#e3e6eb' },
          size: 64,
          values: (_u, vals) => vals.map((v) => format(v)),
        },
      ],
      series: [
        { value: (_u, v) => (v === null ? '–' : new Date(v * 1000).toLocaleString()) },
        ...series.map((s, i) => ({
          label: s.label,
          stroke: PALETTE[i % PALETTE.length],
          fill: series.length === 1 ? `${PALETTE[0]}1f` : undefined,
          width: 1.6,
          points: { show: times.length < 60 },
          value: (_u: uPlot, v: number | null) => format(v),
        })),
      ],
    };
    const plot = new uPlot(opts, [times, ...series.map((s) => s.values)] as uPlot.AlignedData, el);
    const observer = new ResizeObserver(() => plot.setSize({ width: Math.max(200, el.clientWidth), height }));
    observer.observe(el);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [times, series, format, height, withDetails]);
  const tip =
    withDetails && hover !== null && times[hover] !== undefined
      ? series
          .map((s) => {
            const d = s.details?.[hover];
            const v = s.values[hover];
            if (v === null || v === undefined) return null;
            return `${series.length > 1 ? `${s.label}: ` : ''}${format(v)}${d ? ` (${detailText(d, format)})` : ''}`;
          })
          .filter(Boolean)
      : [];
  return (
    <div className="chart-wrap">
      <div className="chart" ref={box} data-testid="time-chart" />
      {withDetails && (
        <div className="chart-tooltip muted" data-testid="chart-tooltip" aria-live="polite">
          {tip.length
            ? `${new Date(times[hover!]! * 1000).toLocaleString()} · ${tip.join(' · ')}`
            : 'Hover the chart for a point’s count and 95% interval.'}
        </div>
      )}
    </div>
  );
}
