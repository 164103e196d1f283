import { useEffect, useRef } from 'react';
import uPlot from 'uplot';

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

export type Series = { label: string; values: (number | null)[] };

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
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height,
      legend: { show: series.length > 1, live: true },
      cursor: { drag: { x: false, y: false } },
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
  }, [times, series, format, height]);
  return <div className="chart" ref={box} data-testid="time-chart" />;
}
