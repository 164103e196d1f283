import { useEffect, useMemo, useRef, useState } from 'react';
import { firstMark, highlight } from './highlight';

const FOLD_CHARS = 1200;

/**
 * Input or output as stored (text): JSON pretty-printed, long text folded behind "Show all". With the
 * `terms` of a text search, they are marked, and a text whose first match lies past the fold opens whole.
 */
export function Payload({ text, label, terms = [] }: { text: string | null; label: string; terms?: string[] }) {
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
  const matchAt = useMemo(() => (pretty && terms.length ? firstMark(pretty, terms) : -1), [pretty, terms]);
  // The box scrolls (not the page) to show its first mark a third of the way down.
  const box = useRef<HTMLPreElement>(null);
  useEffect(() => {
    const pre = box.current;
    const mark = pre?.querySelector('mark');
    if (!pre || !mark) return;
    pre.scrollTop += mark.getBoundingClientRect().top - pre.getBoundingClientRect().top - pre.clientHeight / 3;
  }, [matchAt]);
  if (pretty === null || pretty === '') return <p className="muted">No {label.toLowerCase()}.</p>;
  const long = pretty.length > FOLD_CHARS;
  const folded = long && !open && matchAt + 64 < FOLD_CHARS;
  const shown = folded ? `${pretty.slice(0, FOLD_CHARS)}…` : pretty;
  return (
    <div className="stack" style={{ gap: '0.3rem' }}>
      <pre ref={box} className={`payload${folded ? ' folded' : ''}`} aria-label={label}>
        {terms.length ? highlight(shown, terms) : shown}
      </pre>
      {long && (matchAt < 0 || matchAt + 64 < FOLD_CHARS) && (
        <button className="small" onClick={() => setOpen(!open)}>
          {open ? 'Fold' : `Show all (${pretty.length.toLocaleString()} characters)`}
        </button>
      )}
    </div>
  );
}
