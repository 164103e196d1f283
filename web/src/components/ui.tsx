import { useEffect, useRef, type ReactNode } from 'react';
import { Link } from 'react-router';
import { ApiError } from '../api';
import { fmtInt, fmtTime, utcTitle } from '../format';

/** A time in the browser's zone; hovering shows it in UTC. */
export function Time({ iso, short }: { iso: string | null | undefined; short?: boolean }) {
  if (!iso) return <span className="muted">–</span>;
  return (
    <time dateTime={iso} title={utcTitle(iso)}>
      {fmtTime(iso, short)}
    </time>
  );
}

export function Loading({ label = 'Loading…', rows = 3 }: { label?: string; rows?: number }) {
  return (
    <div className="loading" role="status" aria-live="polite">
      <span className="sr-only">{label}</span>
      {Array.from({ length: rows }, (_, i) => (
        <div key={i} className="skeleton" />
      ))}
    </div>
  );
}

export function ErrorBox({ error, title = 'Something went wrong' }: { error: unknown; title?: string }) {
  const detail = error instanceof ApiError ? error.detail : error instanceof Error ? error.message : String(error);
  return (
    <div className="error-box" role="alert">
      <strong>{title}</strong>
      <div>{detail}</div>
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      <strong>{title}</strong>
      {children && <div className="muted">{children}</div>}
    </div>
  );
}

export function NotFound({ what = 'page', back }: { what?: string; back?: { to: string; label: string } }) {
  useTitle('Not found');
  return (
    <div className="not-found" data-testid="not-found">
      <div className="not-found-code">404</div>
      <h1>This {what} was not found</h1>
      <p className="muted">It may have been deleted, or the link is wrong or belongs to a project you can't open.</p>
      <Link className="button" to={back?.to ?? '/'}>
        {back?.label ?? 'Go to the start page'}
      </Link>
    </div>
  );
}

export function useTitle(title: string) {
  useEffect(() => {
    document.title = title ? `${title} · Sightline` : 'Sightline';
  }, [title]);
}

export function Modal({
  title,
  onClose,
  children,
  wide,
}: {
  title: string;
  onClose: () => void;
  children: ReactNode;
  wide?: boolean;
}) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && onClose();
    window.addEventListener('keydown', onKey);
    ref.current?.querySelector<HTMLElement>('input, select, textarea, button')?.focus();
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose]);
  return (
    <div className="modal-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div className={`modal${wide ? ' wide' : ''}`} role="dialog" aria-modal="true" aria-label={title} ref={ref}>
        <div className="modal-head">
          <h2>{title}</h2>
          <button className="icon" aria-label="Close" onClick={onClose}>
            ×
          </button>
        </div>
        {children}
      </div>
    </div>
  );
}

export function Pager({
  page,
  limit,
  total,
  onPage,
}: {
  page: number;
  limit: number;
  total: number;
  onPage: (p: number) => void;
}) {
  const pages = Math.max(1, Math.ceil(total / limit));
  const from = total === 0 ? 0 : page * limit + 1;
  const to = Math.min(total, (page + 1) * limit);
  return (
    <nav className="pager" aria-label="Pages">
      <span className="muted" data-testid="page-summary">
        {fmtInt(from)}–{fmtInt(to)} of {fmtInt(total)}
      </span>
      <button disabled={page <= 0} onClick={() => onPage(page - 1)}>
        ← Newer
      </button>
      <span className="muted">
        page {fmtInt(page + 1)} / {fmtInt(pages)}
      </span>
      <button disabled={page + 1 >= pages || page >= 10_000} onClick={() => onPage(page + 1)}>
        Older →
      </button>
    </nav>
  );
}

export function Badge({
  tone = 'neutral',
  children,
  title,
}: {
  tone?: 'neutral' | 'ok' | 'error' | 'warn' | 'info';
  children: ReactNode;
  title?: string;
}) {
  return (
    <span className={`badge ${tone}`} title={title}>
      {children}
    </span>
  );
}

/** Copies text to the clipboard, saying so for a moment. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  return (
    <button
      className="small"
      onClick={(e) => {
        const button = e.currentTarget;
        void navigator.clipboard?.writeText(text).then(() => {
          button.textContent = 'Copied';
          setTimeout(() => (button.textContent = label), 1200);
        });
      }}
    >
      {label}
    </button>
  );
}
