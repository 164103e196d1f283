import type { Span } from '../../types';

/** Cost and tokens of a span and everything under it (a parent's own are usually 0: its children did the work). */
export type Rollup = { cost: number; input_tokens: number; output_tokens: number; total_tokens: number };

export type SpanNode = {
  span: Span;
  depth: number;
  children: SpanNode[];
  startMs: number;
  endMs: number | null;
  /** The span's own values plus its descendants' (the span's own stay on `span`). */
  rollup: Rollup;
};

/**
 * Spans as a tree ordered by start time: a span whose parent is missing (not sent yet, or cut from a
 * truncated read) is shown as a root rather than lost. Iterative, so a deep chain can't overflow.
 */
export function buildTree(spans: Span[]): SpanNode[] {
  const nodes = new Map<string, SpanNode>();
  for (const span of spans) {
    nodes.set(span.span_id, {
      span,
      depth: 0,
      children: [],
      startMs: Date.parse(span.start_time),
      endMs: span.end_time ? Date.parse(span.end_time) : null,
      rollup: {
        cost: span.cost ?? 0,
        input_tokens: span.input_tokens ?? 0,
        output_tokens: span.output_tokens ?? 0,
        total_tokens: span.total_tokens ?? 0,
      },
    });
  }
  const roots: SpanNode[] = [];
  for (const node of nodes.values()) {
    const parentId = node.span.parent_span_id;
    const parent = parentId && parentId !== node.span.span_id ? nodes.get(parentId) : undefined;
    (parent ? parent.children : roots).push(node);
  }
  const byStart = (a: SpanNode, b: SpanNode) => a.startMs - b.startMs || a.span.name.localeCompare(b.span.name);
  roots.sort(byStart);
  // Depths from the roots down; a cycle in bad data can't loop since each node is visited once.
  const seen = new Set<SpanNode>();
  const order: SpanNode[] = [];
  const stack = [...roots];
  while (stack.length) {
    const node = stack.pop()!;
    if (seen.has(node)) continue;
    seen.add(node);
    order.push(node);
    node.children.sort(byStart);
    for (const child of node.children) {
      child.depth = node.depth + 1;
      stack.push(child);
    }
  }
  // Roll-ups bottom up: every child is visited after its parent, so the reverse sees children first.
  for (let i = order.length - 1; i >= 0; i--) {
    const node = order[i]!;
    for (const child of node.children) {
      if (!seen.has(child)) continue;
      node.rollup.cost += child.rollup.cost;
      node.rollup.input_tokens += child.rollup.input_tokens;
      node.rollup.output_tokens += child.rollup.output_tokens;
      node.rollup.total_tokens += child.rollup.total_tokens;
    }
  }
  return roots;
}

/** Rows in display order (depth first), skipping the children of collapsed spans. */
export function flatten(roots: SpanNode[], collapsed: ReadonlySet<string>): SpanNode[] {
  const out: SpanNode[] = [];
  const seen = new Set<SpanNode>();
  const stack = [...roots].reverse();
  while (stack.length) {
    const node = stack.pop()!;
    if (seen.has(node)) continue;
    seen.add(node);
    out.push(node);
    if (!collapsed.has(node.span.span_id))
      for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
  }
  return out;
}

/** The trace's time axis: earliest start to latest end (at least 1 ms so bars always have a scale). */
export function traceBounds(spans: Span[]): { startMs: number; endMs: number } {
  let startMs = Infinity;
  let endMs = -Infinity;
  for (const s of spans) {
    const start = Date.parse(s.start_time);
    startMs = Math.min(startMs, start);
    endMs = Math.max(endMs, s.end_time ? Date.parse(s.end_time) : start);
  }
  if (!Number.isFinite(startMs)) return { startMs: 0, endMs: 1 };
  return { startMs, endMs: Math.max(endMs, startMs + 1) };
}

/** A few round tick positions for an axis of `total` ms. */
export function ticks(total: number, count = 5): number[] {
  const raw = total / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw || 1));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw) ?? raw;
  const out: number[] = [];
  for (let t = 0; t <= total + 1e-9 && out.length < 12; t += step) out.push(t);
  return out;
}
