import { useMemo, useState } from 'react';

const FOLD_CHARS = 1200;

/** Input or output as stored (text): JSON pretty-printed, long text folded behind "Show all". */
export function Payload({ text, label }: { text: string | null; label: string }) {
  const [open, setOpen] = useState(false);
  const pretty = useMemo(() => {
    if (text === null) return null;
    const trimmed = text.trim();
    if (!(trimmed.startsWith('{') || trimmed.startsWith('['))) return text;
    try {
      return JSON.stringify(JSON.parse(trimmed), null, 2);
    } catch {
      return text;
    }
  }, [text]);
  if (pretty === null || pretty === '') return <p className="muted">No {label.toLowerCase()}.</p>;
  const long = pretty.length > FOLD_CHARS;
  return (
    <div className="stack" style={{ gap: '0.3rem' }}>
      <pre className={`payload${long && !open ? ' folded' : ''}`} aria-label={label}>
        {long && !open ? `${pretty.slice(0, FOLD_CHARS)}…` : pretty}
      </pre>
      {long && (
        <button className="small" onClick={() => setOpen(!open)}>
          {open ? 'Fold' : `Show all (${pretty.length.toLocaleString()} characters)`}
        </button>
      )}
    </div>
  );
}
