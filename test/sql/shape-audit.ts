import { expect } from 'vitest';
import { guardUncached } from '../../src/sql/guard.js';
import { NODE_SHAPES, type NodeKind, type ShapeAudit } from '../../src/sql/node-shapes.js';

/**
 * The fail-closed check of the guard (src/sql/node-shapes.ts), run over real queries: the parser's
 * whole output for each query is walked, and every node reached through a property the guard
 * `check`s must have been shaped by the guard (so no part of the tree went unexamined), and every
 * property met must be listed for its node's kind.
 */
export function expectShapesKnown(queries: readonly string[]): void {
  expect(queries.length).toBeGreaterThan(0);
  for (const query of queries) {
    const problems: string[] = [];
    const walk = (value: unknown, path: string): void => {
      if (!value || typeof value !== 'object') return;
      if (Array.isArray(value)) return value.forEach((v, i) => walk(v, `${path}[${i}]`));
      const kind: NodeKind | undefined = shapes.get(value);
      if (!kind) {
        problems.push(`${path} was not examined by the guard: ${JSON.stringify(value).slice(0, 160)}`);
        return;
      }
      const rules: Readonly<Record<string, string>> = NODE_SHAPES[kind];
      for (const key of Object.keys(value)) {
        const rule = rules[key];
        if (rule === undefined) problems.push(`${path}: property ${key} of a ${kind} node is not in the allowlist`);
        else if (rule === 'check') walk((value as Record<string, unknown>)[key], `${path}.${key}`);
      }
    };
    const shapes: ShapeAudit = new Map();
    guardUncached(query, 'default', { shapes, checked: (tree) => walk(tree, '$') });
    expect(problems, `query: ${query}`).toEqual([]);
  }
}
