import { useState } from 'react';

export type TimeValue = { range: string | null; from: string | null; to: string | null };

/** `datetime-local` wants local wall time without a zone; the API takes ISO instants. */
export function toLocalInput(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
export function fromLocalInput(value: string): string | null {
  if (!value) return null;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

const LABELS: Record<string, string> = {
  all: 'All',
  '30m': '30m',
  '1h': '1h',
  '3h': '3h',
  '6h': '6h',
  '1d': '24h',
  '24h': '24h',
};

/** Range presets plus explicit bounds (entered in the browser's zone). */
export function TimeRange({
  presets,
  value,
  onChange,
}: {
  presets: string[];
  value: TimeValue;
  onChange: (v: TimeValue) => void;
}) {
  const custom = value.range === null;
  const [editing, setEditing] = useState(custom);
  const [from, setFrom] = useState(toLocalInput(value.from));
  const [to, setTo] = useState(toLocalInput(value.to));
  return (
    <div className="row" data-testid="time-range">
      <div className="segmented" role="group" aria-label="Time range">
        {presets.map((p) => (
          <button
            key={p}
            aria-pressed={!custom && !editing && value.range === p}
            onClick={() => {
              setEditing(false);
              onChange({ range: p, from: null, to: null });
            }}
          >
            {LABELS[p] ?? p}
          </button>
        ))}
        <button aria-pressed={custom || editing} onClick={() => setEditing(true)}>
          Custom
        </button>
      </div>
      {(editing || custom) && (
        <form
          className="row"
          onSubmit={(e) => {
            e.preventDefault();
            const f = fromLocalInput(from);
            const t = fromLocalInput(to);
            if (f && t && t > f) onChange({ range: null, from: f, to: t });
          }}
        >
          <input
            type="datetime-local"
            aria-label="From"
            value={from}
            onChange={(e) => setFrom(e.target.value)}
            required
          />
          <span className="muted">to</span>
          <input type="datetime-local" aria-label="To" value={to} onChange={(e) => setTo(e.target.value)} required />
          <button type="submit" className="small">
            Apply
          </button>
        </form>
      )}
    </div>
  );
}
