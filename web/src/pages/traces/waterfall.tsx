import { memo } from 'react';
import { fmtCost, fmtInt, fmtMs } from '../../format';
import { ticks, type SpanNode } from './span-tree';

const INDENT = 14;

/** The duration beside its bar: inside a wide bar, before a bar that ends near the right edge, else after it. */
function durationLabel(left: number, width: number): React.CSSProperties {
  if (width > 22) return { left: `calc(${left}% + 5px)`, color: '#fff', fontWeight: 600 };
  if (left + width > 80) return { right: `calc(${100 - left}% + 4px)` };
  return { left: `calc(${left + width}% + 4px)` };
}

type RowProps = {
  node: SpanNode;
  selected: boolean;
  collapsed: boolean;
  startMs: number;
  totalMs: number;
  onSelect: (id: string) => void;
  onToggle: (id: string) => void;
};

const Row = memo(function Row({ node, selected, collapsed, startMs, totalMs, onSelect, onToggle }: RowProps) {
  const { span } = node;
  const error = span.status === 'error';
  const left = ((node.startMs - startMs) / totalMs) * 100;
  const width = (((node.endMs ?? node.startMs) - node.startMs) / totalMs) * 100;
  const kindClass = `kind-${span.kind}`;
  return (
    <div
      className={`span-row${selected ? ' selected' : ''}${error ? ' error' : ''}`}
      role="treeitem"
      aria-selected={selected}
      aria-level={node.depth + 1}
      aria-expanded={node.children.length ? !collapsed : undefined}
      tabIndex={selected ? 0 : -1}
      data-span-id={span.span_id}
      data-status={span.status}
      onClick={() => onSelect(span.span_id)}
    >
      <div className="span-label" style={{ paddingLeft: node.depth * INDENT }}>
        {node.children.length ? (
          <button
            className="span-toggle"
            tabIndex={-1}
            aria-label={collapsed ? 'Expand' : 'Collapse'}
            onClick={(e) => {
              e.stopPropagation();
              onToggle(span.span_id);
            }}
          >
            {collapsed ? '▶' : '▼'}
          </button>
        ) : (
          <span className="span-toggle" />
        )}
        <span className={`kind ${kindClass}`}>{span.kind}</span>
        <span className="span-name" title={span.name}>
          {span.name}
        </span>
        {error && (
          <span className="badge error" title={span.error_message ?? span.error_type ?? 'error'}>
            error
          </span>
        )}
        {collapsed && <span className="muted">+{node.children.length}</span>}
        <RowCost node={node} />
      </div>
      <div className="span-track">
        <div
          className={`span-bar ${error ? 'error' : ''}`}
          style={{
            left: `${left}%`,
            width: `${Math.max(width, 0.2)}%`,
            background: `var(--${kindClass}, var(--kind-custom))`,
          }}
        />
        <span className="span-dur" style={durationLabel(left, width)}>
          {node.endMs === null ? 'running' : fmtMs(node.endMs - node.startMs)}
        </span>
      </div>
    </div>
  );
});

/**
 * A row's cost: a parent's is its children's too (its own is usually $0: the model calls under it
 * spent the money), said so in the tooltip with its own value kept apart.
 */
function RowCost({ node }: { node: SpanNode }) {
  const { rollup, span } = node;
  if (rollup.cost <= 0 && rollup.total_tokens <= 0) return null;
  const parent = node.children.length > 0;
  const title = parent
    ? `With its children: ${fmtCost(rollup.cost)}, ${fmtInt(rollup.total_tokens)} tokens. Its own: ${fmtCost(span.cost)}, ${fmtInt(span.total_tokens)} tokens.`
    : `${fmtCost(span.cost)}, ${fmtInt(span.total_tokens)} tokens`;
  return (
    <span className="span-cost muted" data-testid="span-row-cost" title={title}>
      {parent ? 'Σ ' : ''}
      {rollup.cost > 0 ? fmtCost(rollup.cost) : `${fmtInt(rollup.total_tokens)} tok`}
    </span>
  );
}

/**
 * The span tree and its timeline side by side, scaled to the trace. Rows are memoised so selecting
 * a span re-renders two rows, not two thousand. Arrow keys move the selection; ←/→ fold.
 */
export function Waterfall(props: {
  rows: SpanNode[];
  startMs: number;
  totalMs: number;
  selected: string | null;
  collapsed: ReadonlySet<string>;
  onSelect: (id: string) => void;
  onToggle: (id: string) => void;
}) {
  const { rows, startMs, totalMs, selected, collapsed, onSelect, onToggle } = props;
  const onKey = (e: React.KeyboardEvent) => {
    const i = rows.findIndex((r) => r.span.span_id === selected);
    const move = (j: number) => {
      const row = rows[Math.max(0, Math.min(rows.length - 1, j))];
      if (!row) return;
      e.preventDefault();
      onSelect(row.span.span_id);
      requestAnimationFrame(() =>
        document.querySelector<HTMLElement>(`[data-span-id="${CSS.escape(row.span.span_id)}"]`)?.focus(),
      );
    };
    if (e.key === 'ArrowDown') move(i + 1);
    else if (e.key === 'ArrowUp') move(i - 1);
    else if ((e.key === 'ArrowLeft' || e.key === 'ArrowRight') && selected && rows[i]?.children.length) {
      const isCollapsed = collapsed.has(selected);
      if ((e.key === 'ArrowLeft') !== isCollapsed) onToggle(selected);
    }
  };
  return (
    <div className="waterfall card flush" data-testid="waterfall">
      <div className="waterfall-head">
        <div style={{ padding: '0.35rem 0.6rem', fontSize: 12, color: 'var(--muted)' }}>Span</div>
        <div className="axis">
          {ticks(totalMs).map((t) => (
            <span key={t} className="tick" style={{ left: `${(t / totalMs) * 100}%` }}>
              {fmtMs(t)}
            </span>
          ))}
        </div>
      </div>
      <div className="waterfall-body" role="tree" aria-label="Spans" onKeyDown={onKey}>
        {rows.map((node) => (
          <Row
            key={node.span.span_id}
            node={node}
            selected={node.span.span_id === selected}
            collapsed={collapsed.has(node.span.span_id)}
            startMs={startMs}
            totalMs={totalMs}
            onSelect={onSelect}
            onToggle={onToggle}
          />
        ))}
      </div>
    </div>
  );
}
