import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseJsonKeepingRaw, RawJson } from '../../src/raw-json.js';
import { readCursor, signCursor } from '../../src/datasets/cursor.js';

const keepX = (path: readonly (string | number)[]) => path.length === 1 && path[0] === 'x';

describe('parseJsonKeepingRaw', () => {
  it('parses like JSON.parse and keeps the chosen values as text', () => {
    const text = '{"a": [1, {"b": null}], "x": {"n": 9007199254740993, "s": "\\u00e9"}, "__proto__": 1}';
    const parsed = parseJsonKeepingRaw(text, keepX) as Record<string, unknown>;
    expect(parsed.a).toEqual([1, { b: null }]);
    expect(parsed.x).toBeInstanceOf(RawJson);
    expect((parsed.x as RawJson).text).toBe('{"n": 9007199254740993, "s": "\\u00e9"}');
    expect(Object.getOwnPropertyDescriptor(parsed, '__proto__')?.value).toBe(1);
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
  });

  it('agrees with JSON.parse on any JSON (fast-check)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.boolean(), (value, spaced) => {
        const text = JSON.stringify(value, null, spaced ? 2 : undefined);
        expect(parseJsonKeepingRaw(text, () => false)).toEqual(JSON.parse(text));
        const kept = parseJsonKeepingRaw(text, (p) => p.length === 0) as RawJson;
        expect(JSON.parse(kept.text)).toEqual(JSON.parse(text));
        expect(kept.problem).toBeUndefined();
      }),
      { numRuns: 300 },
    );
  });

  it('refuses what JSON.parse refuses', () => {
    for (const bad of [
      '',
      '{',
      '{"x": }',
      '{"x": 1,}',
      '[1 2]',
      '{"x": 1} 2',
      '{x: 1}',
      "{'x': 1}",
      '{"x": tru}',
      '{"x": "\n"}',
      '{"x": [1}',
      '{"x": 01}',
    ]) {
      expect(() => parseJsonKeepingRaw(bad, keepX), bad).toThrow(SyntaxError);
    }
  });

  it('marks values the store cannot hold', () => {
    const problem = (x: string) => (parseJsonKeepingRaw(`{"x": ${x}}`, keepX) as { x: RawJson }).x.problem;
    expect(problem('"a\\u0000b"')).toMatch(/U\+0000/);
    expect(problem('"\\ud800"')).toMatch(/surrogate/);
    expect(problem('"\\udc00\\ud800"')).toMatch(/surrogate/);
    expect(problem('"\\\\u0000"')).toBeUndefined();
    expect(problem('"\\ud83d\\ude00"')).toBeUndefined();
    expect(problem('"😀"')).toBeUndefined();
    expect(problem('1e401')).toMatch(/exponent/);
    expect(problem('1e400')).toBeUndefined();
    expect(problem(`${'['.repeat(101)}${']'.repeat(101)}`)).toMatch(/deeper/);
    expect(problem(`${'['.repeat(100)}${']'.repeat(100)}`)).toBeUndefined();
  });

  it('keeps scanning past strings and numbers after a problem is found (a body of 110 levels once spun for ever)', () => {
    const problem = (x: string) => (parseJsonKeepingRaw(`{"x": ${x}}`, keepX) as { x: RawJson }).x.problem;
    const deep = (n: number): unknown => (n === 0 ? 1 : { a: [deep(n - 1)], b: 'text', c: 2 });
    expect(problem(JSON.stringify(deep(55)))).toMatch(/deeper/);
    expect(problem(`["\\u0000", "after", 3, ${'['.repeat(101)}"x", 1${']'.repeat(101)}]`)).toMatch(/U\+0000/);
    expect(() =>
      parseJsonKeepingRaw(JSON.stringify({ results: [{ output: deep(60) }], other: deep(60) }), keepX),
    ).not.toThrow();
  });

  it('does not recurse on deep structure outside kept values', () => {
    const deep = `{"y": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    expect(() => parseJsonKeepingRaw(deep, keepX)).not.toThrow();
  });
});

describe('page cursors', () => {
  const key = Buffer.alloc(32, 7);
  it('round-trip within their scope only', () => {
    const c = signCursor(key, 'version:a', 1234);
    expect(c.length).toBeLessThanOrEqual(64);
    expect(readCursor(key, 'version:a', c)).toBe(1234);
    expect(readCursor(key, 'version:b', c)).toBeNull();
    expect(readCursor(Buffer.alloc(32, 8), 'version:a', c)).toBeNull();
    expect(readCursor(key, 'version:a', c.replace(/^[0-9a-z]+/, '99'))).toBeNull();
  });
});
