import { z } from 'zod';

/**
 * JSON bodies whose chosen values are kept as the caller's text (dataset versions and evaluation
 * results; docs/datasets.md: test case `input`/`expected`/`metadata` are native JSON and come back as
 * the same values). JSON.parse would
 * turn 9007199254740993 into ...992; keeping the text and handing it to Postgres' jsonb (numbers as
 * numeric) keeps every digit. Everything else of the body is parsed as JSON.parse would.
 *
 * A kept value is also checked for what the store can't hold, so that becomes a 422 at the value's
 * place instead of a failed insert: U+0000 and unpaired surrogates in strings (Postgres text can't
 * hold them), nesting deeper than MAX_JSON_DEPTH, exponents beyond ±MAX_EXPONENT (jsonb prints
 * numbers in full: 1e100000 is a 100 KB answer).
 */

export const MAX_JSON_DEPTH = 100;
export const MAX_EXPONENT = 400;

/** A JSON value as the caller wrote it; `problem` says why the store would refuse it. */
export class RawJson {
  constructor(
    readonly text: string,
    readonly problem?: string,
  ) {}

  /** What a 422 entry echoes as `input`. */
  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

/** A value of a body parsed by parseJsonKeepingRaw; 422 at its place when the store can't hold it. */
export const RawJsonValue = z
  .custom<RawJson>((v) => v instanceof RawJson, 'Input should be a JSON value')
  .superRefine((v, ctx) => {
    if (v.problem) ctx.addIssue({ code: 'custom', message: v.problem });
  });

export type JsonPath = readonly (string | number)[];

/** Structure deeper than this is parsed by JSON.parse in one piece (no recursion of ours to overflow). */
const STRUCTURE_DEPTH = 8;

/**
 * Parses a JSON text; values at paths `keep` accepts become RawJson. Throws SyntaxError (400, errors.ts)
 * on invalid JSON, like JSON.parse. Duplicate keys: the last wins, as with JSON.parse.
 */
export function parseJsonKeepingRaw(text: string, keep: (path: JsonPath) => boolean): unknown {
  const reader = new Reader(text, keep);
  const value = reader.value([], 0);
  reader.whitespace();
  if (reader.pos !== text.length) throw new SyntaxError('Unexpected data after the JSON value');
  return value;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
// The next character a string scan has to look at: its end, an escape, or half of a surrogate pair.
const STRING_SPECIAL = /["\\\ud800-\udfff]/g;

class Reader {
  pos = 0;
  constructor(
    readonly text: string,
    readonly keep: (path: JsonPath) => boolean,
  ) {}

  whitespace(): void {
    const t = this.text;
    let c = t.charCodeAt(this.pos);
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = t.charCodeAt(++this.pos);
  }

  value(path: JsonPath, depth: number): unknown {
    this.whitespace();
    const start = this.pos;
    if (this.keep(path)) {
      const problem = this.skip();
      const raw = this.text.slice(start, this.pos);
      JSON.parse(raw); // validates what the scan only delimited
      return new RawJson(raw, problem);
    }
    const c = this.text.charCodeAt(this.pos);
    if (depth < STRUCTURE_DEPTH && c === 0x7b) return this.object(path, depth);
    if (depth < STRUCTURE_DEPTH && c === 0x5b) return this.array(path, depth);
    this.skip();
    return JSON.parse(this.text.slice(start, this.pos));
  }

  private object(path: JsonPath, depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.pos++;
    this.whitespace();
    if (this.text.charCodeAt(this.pos) === 0x7d) {
      this.pos++;
      return out;
    }
    for (;;) {
      this.whitespace();
      if (this.text.charCodeAt(this.pos) !== QUOTE) throw new SyntaxError('Expected a property name');
      const keyStart = this.pos;
      this.string();
      const key = JSON.parse(this.text.slice(keyStart, this.pos)) as string;
      this.whitespace();
      if (this.text.charCodeAt(this.pos++) !== 0x3a) throw new SyntaxError("Expected ':'");
      // defineProperty: a key named __proto__ is an own property, as JSON.parse makes it.
      Object.defineProperty(out, key, {
        value: this.value([...path, key], depth + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
      this.whitespace();
      const c = this.text.charCodeAt(this.pos++);
      if (c === 0x7d) return out;
      if (c !== 0x2c) throw new SyntaxError("Expected ',' or '}'");
    }
  }

  private array(path: JsonPath, depth: number): unknown[] {
    const out: unknown[] = [];
    this.pos++;
    this.whitespace();
    if (this.text.charCodeAt(this.pos) === 0x5d) {
      this.pos++;
      return out;
    }
    for (;;) {
      out.push(this.value([...path, out.length], depth + 1));
      this.whitespace();
      const c = this.text.charCodeAt(this.pos++);
      if (c === 0x5d) return out;
      if (c !== 0x2c) throw new SyntaxError("Expected ',' or ']'");
    }
  }

  /**
   * Moves past one value without building it, iteratively (any depth). Returns the first reason the
   * store would refuse it. Validity is JSON.parse's job; this only has to find the end of a valid value.
   */
  private skip(): string | undefined {
    const t = this.text;
    let depth = 0;
    let problem: string | undefined;
    for (;;) {
      this.whitespace();
      if (this.pos >= t.length) throw new SyntaxError('Unexpected end of JSON input');
      const c = t.charCodeAt(this.pos);
      if (c === QUOTE) {
        // Not `problem ??= this.string()`: once a problem is known that would skip the call, and the
        // scan would stay on this quote for ever.
        const found = this.string();
        problem ??= found;
      } else if (c === 0x7b || c === 0x5b) {
        depth++;
        this.pos++;
        if (depth > MAX_JSON_DEPTH) problem ??= `JSON nesting is deeper than ${MAX_JSON_DEPTH} levels`;
        continue;
      } else if (c === 0x7d || c === 0x5d) {
        depth--;
        this.pos++;
        if (depth < 0) throw new SyntaxError('Unexpected closing bracket');
      } else if (c === 0x2c || c === 0x3a) {
        this.pos++;
        continue;
      } else {
        const found = this.scalar();
        problem ??= found;
      }
      if (depth === 0) return problem;
    }
  }

  /** A number or literal; refuses exponents the store would print in full. */
  private scalar(): string | undefined {
    const t = this.text;
    const start = this.pos;
    let c = t.charCodeAt(this.pos);
    while ((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7a) || c === 0x2b || c === 0x2d || c === 0x2e || c === 0x45)
      c = t.charCodeAt(++this.pos);
    if (this.pos === start) throw new SyntaxError(`Unexpected character at position ${start}`);
    const exponent = /[eE]([+-]?\d+)$/.exec(t.slice(start, this.pos));
    if (exponent && Math.abs(Number(exponent[1])) > MAX_EXPONENT)
      return `numbers may not have an exponent beyond ±${MAX_EXPONENT}`;
    return undefined;
  }

  /** Moves past a string (at its opening quote). Returns a problem for U+0000 or an unpaired surrogate. */
  private string(): string | undefined {
    const t = this.text;
    let problem: string | undefined;
    this.pos++;
    for (;;) {
      STRING_SPECIAL.lastIndex = this.pos;
      const m = STRING_SPECIAL.exec(t);
      if (!m) throw new SyntaxError('Unterminated string in JSON');
      this.pos = m.index;
      const c = t.charCodeAt(this.pos);
      if (c === QUOTE) {
        this.pos++;
        return problem;
      }
      if (c === BACKSLASH) {
        if (t.charCodeAt(this.pos + 1) !== 0x75) {
          this.pos += 2;
          continue;
        }
        const unit = parseInt(t.slice(this.pos + 2, this.pos + 6), 16);
        this.pos += 6;
        if (unit === 0) problem ??= 'strings may not contain U+0000';
        else if (unit >= 0xd800 && unit <= 0xdbff) {
          const next =
            t.charCodeAt(this.pos) === BACKSLASH && t.charCodeAt(this.pos + 1) === 0x75
              ? parseInt(t.slice(this.pos + 2, this.pos + 6), 16)
              : -1;
          if (next >= 0xdc00 && next <= 0xdfff) this.pos += 6;
          else problem ??= 'strings may not contain unpaired surrogates';
        } else if (unit >= 0xdc00 && unit <= 0xdfff) problem ??= 'strings may not contain unpaired surrogates';
        continue;
      }
      // A literal surrogate: fine only as the first half of a pair.
      const next = t.charCodeAt(this.pos + 1);
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) this.pos += 2;
      else {
        problem ??= 'strings may not contain unpaired surrogates';
        this.pos++;
      }
    }
  }
}
