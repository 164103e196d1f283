import crypto from 'node:crypto';
import RE2 from 're2';
import { z } from 'zod';
import type { NormalizedSpan } from '../traces/span-input.js';

/**
 * PII masking at ingest (quality.md §6, docs/producer-controls.md "Masking"): a project's detectors and
 * patterns run over each span's input, output, error message, metadata and attribute values and event
 * attribute values before anything is stored or indexed. Every expression runs on RE2, so matching is linear in
 * the text whatever the pattern; a pattern RE2 can't run (back-references, look-around) is refused
 * when the setting is written. Pure: the caller gives the project's hash key.
 *
 * Replacement texts hold only `[`, `]`, `:`, capitals and hex digits, and no expression matches a
 * quote or a backslash, so masking a JSON text (a span's input or output) leaves it valid JSON.
 */

export const DETECTORS = ['email', 'phone', 'payment_card', 'iban', 'ip', 'secret', 'jwt'] as const;
export type Detector = (typeof DETECTORS)[number];
export const ACTIONS = ['mask', 'hash', 'drop'] as const;
export type MaskAction = (typeof ACTIONS)[number];

/** A custom pattern's source at most this long: RE2 compiles it to a bounded program. */
export const MAX_PATTERN_LENGTH = 1_000;
export const MAX_PATTERNS = 20;
/** RE2's compiled-program budget for a custom pattern (bytes of its automaton). */
const MAX_PROGRAM_MEMORY = 1 << 20;

const PatternName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a pattern name is 1-64 of A-Z, a-z, 0-9, `_` and `-`');

export const MaskingSetting = z
  .object({
    detectors: z.array(z.enum(DETECTORS)).max(DETECTORS.length).default([]),
    patterns: z
      .array(z.object({ name: PatternName, pattern: z.string().min(1).max(MAX_PATTERN_LENGTH) }))
      .max(MAX_PATTERNS)
      .default([]),
    action: z.enum(ACTIONS).default('mask'),
  })
  .superRefine((setting, issue) => {
    const names = new Set<string>();
    setting.patterns.forEach((p, i) => {
      if (names.has(p.name)) issue.addIssue({ code: 'custom', path: ['patterns', i, 'name'], message: 'names repeat' });
      names.add(p.name);
      const refusal = patternRefusal(p.pattern);
      if (refusal) issue.addIssue({ code: 'custom', path: ['patterns', i, 'pattern'], message: refusal });
    });
  });
export type MaskingSetting = z.infer<typeof MaskingSetting>;

/** Why RE2 can't run a pattern, or null when it can (and matches no empty string). */
export function patternRefusal(pattern: string): string | null {
  let re: RE2;
  try {
    re = new RE2(pattern, 'gu');
  } catch (error) {
    return `the linear-time engine can't run this pattern (${error instanceof Error ? error.message : 'invalid'}); back-references and look-around are not supported`;
  }
  if (re.test('')) return 'the pattern matches the empty text; it must match at least one character';
  if (pattern.length * 64 > MAX_PROGRAM_MEMORY) return 'the pattern is too large';
  return null;
}

/** Digits of a candidate card number pass the Luhn check. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return digits.length >= 13 && digits.length <= 19 && sum % 10 === 0;
}

/** An IBAN (spaces removed) passes its ISO 13616 mod-97 check. */
export function ibanValid(iban: string): boolean {
  const s = iban.replace(/ /g, '');
  if (s.length < 15 || s.length > 34) return false;
  const moved = s.slice(4) + s.slice(0, 4);
  let rest = 0;
  for (const ch of moved) {
    const code = ch.charCodeAt(0);
    const value = code >= 65 ? String(code - 55) : ch;
    for (const digit of value) rest = (rest * 10 + (digit.charCodeAt(0) - 48)) % 97;
  }
  return rest === 1;
}

/** Joins the values of a JSON value masked in one pass (maskLeaves). */
const SEPARATOR = '\u0000';
const BACKSLASH = 0x5c;

/** Whether the backslash at byte `at` starts an escape (an odd run of backslashes ends there). */
function escapesAt(bytes: Buffer, at: number): boolean {
  let n = 0;
  while (at - n >= 0 && bytes[at - n] === BACKSLASH) n++;
  return n % 2 === 1;
}

/** A byte as the checks around a match read it: its ASCII character, or one that is none of theirs. */
function charAt(bytes: Buffer, at: number): string | undefined {
  if (at < 0 || at >= bytes.length) return undefined;
  const byte = bytes[at]!;
  return byte < 0x80 ? String.fromCharCode(byte) : '\u0080';
}

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
const isWordChar = (c: string | undefined) => c !== undefined && /[A-Za-z0-9_]/.test(c);

type Rule = {
  label: string;
  re: RE2;
  /** Whether a match is one (a checksum, the characters around it). */
  accept?: (match: string, before: string | undefined, after: string | undefined) => boolean;
};

/**
 * The detectors in the order they run: tokens first (a bearer token may hold a JWT, a JWT's parts
 * look like nothing else), then the rest.
 */
const DETECTOR_RULES: Record<Detector, () => Rule[]> = {
  jwt: () => [{ label: 'JWT', re: new RE2('eyJ[A-Za-z0-9_-]{5,}\\.eyJ[A-Za-z0-9_-]{5,}\\.[A-Za-z0-9_-]{5,}', 'g') }],
  secret: () => [
    {
      label: 'SECRET',
      re: new RE2(
        [
          '[Bb]earer[ ]+[A-Za-z0-9._~+/-]{16,}=*',
          'sk-ant-[A-Za-z0-9_-]{20,}',
          'sk-(?:proj-)?[A-Za-z0-9_-]{20,}',
          '(?:AKIA|ASIA)[0-9A-Z]{16}',
          'gh[pousr]_[A-Za-z0-9]{36,}',
          'github_pat_[A-Za-z0-9_]{40,}',
          'xox[abprs]-[A-Za-z0-9-]{10,}',
          'AIza[0-9A-Za-z_-]{35}',
          '[rs]k_(?:live|test)_[A-Za-z0-9]{16,}',
          'sl_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}',
        ].join('|'),
        'g',
      ),
    },
  ],
  email: () => [
    {
      label: 'EMAIL',
      re: new RE2('[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\\.[A-Za-z0-9-]+)*\\.[A-Za-z]{2,}', 'g'),
    },
  ],
  iban: () => [
    {
      label: 'IBAN',
      re: new RE2('[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]){11,30}', 'g'),
      accept: (m, before, after) => !isWordChar(before) && !isWordChar(after) && ibanValid(m),
    },
  ],
  payment_card: () => [
    {
      label: 'CARD',
      re: new RE2('[0-9](?:[ -]?[0-9]){12,18}', 'g'),
      accept: (m, before, after) => !isDigit(before) && !isDigit(after) && luhnValid(m.replace(/[ -]/g, '')),
    },
  ],
  phone: () => [
    {
      label: 'PHONE',
      re: new RE2(
        [
          '\\+[0-9]{1,3}[ .-]?(?:\\([0-9]{1,4}\\)[ .-]?)?[0-9]{2,4}(?:[ .-]?[0-9]{2,4}){1,4}',
          '\\([0-9]{2,4}\\)[ .-]?[0-9]{3,4}[ .-]?[0-9]{3,4}',
          '[0-9]{3}[.-][0-9]{3}[.-][0-9]{4}',
        ].join('|'),
        'g',
      ),
      accept: (m, before, after) => !isDigit(before) && !isDigit(after) && m.replace(/[^0-9]/g, '').length >= 7,
    },
  ],
  ip: () => [
    {
      label: 'IP',
      re: new RE2('(?:(?:25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])\\.){3}(?:25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])', 'g'),
      accept: (_m, before, after) => !isDigit(before) && before !== '.' && !isDigit(after) && after !== '.',
    },
    {
      label: 'IP',
      re: new RE2(
        '(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}|(?:[0-9A-Fa-f]{1,4}:){1,7}:(?:[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4}){0,6})?',
        'g',
      ),
      accept: (m, before, after) => !isWordChar(before) && before !== ':' && !isWordChar(after) && m.length >= 6,
    },
  ],
};

export type Masker = {
  /** Masks the spans in place; answers how many values were masked. */
  maskSpans(spans: NormalizedSpan[]): number;
  /** Masks one span in place; answers how many values were masked. */
  maskSpan(span: NormalizedSpan): number;
  /** One text, masked; null when the action drops it. `json`: the text is a JSON text (input, output). */
  maskText(text: string, json?: boolean): { text: string | null; count: number };
  /**
   * The text fields of a span as a producer sent them (native span fields: input and output as any
   * JSON value, error message, metadata, attribute and event attribute values), masked in place before they are
   * kept anywhere (span pieces: src/protocols/span-parts.ts). Answers how many values were masked.
   */
  maskFields(fields: {
    input?: unknown;
    output?: unknown;
    error_message?: string | null;
    metadata?: Record<string, unknown> | null;
    attributes?: Record<string, unknown> | null;
    events?: { attributes?: Record<string, unknown> | null }[] | null;
  }): number;
};

/** The project's masker, or null when its setting masks nothing. `hashKey`: the project's keyed-hash key. */
export function compileMasking(setting: MaskingSetting, hashKey: Buffer): Masker | null {
  const rules: Rule[] = [];
  const order: Detector[] = ['jwt', 'secret', 'email', 'iban', 'payment_card', 'phone', 'ip'];
  for (const d of order) if (setting.detectors.includes(d)) rules.push(...DETECTOR_RULES[d]());
  for (const p of setting.patterns) rules.push({ label: `PATTERN:${p.name}`, re: new RE2(p.pattern, 'gu') });
  if (rules.length === 0) return null;
  const action = setting.action;
  const hash = (value: string) => crypto.createHmac('sha256', hashKey).update(value).digest('hex').slice(0, 8);

  // The detectors run as one expression (one pass over a text, whatever how many are on): each is an
  // alternative in its own group, so a match says which detector it is. They hold no groups of their
  // own. Custom patterns keep their own expressions (they may hold groups).
  const builtIn = rules.filter((r) => !r.label.startsWith('PATTERN:'));
  const custom = rules.filter((r) => r.label.startsWith('PATTERN:'));
  const combined = builtIn.length ? new RE2(builtIn.map((r) => `(${r.re.source})`).join('|'), 'g') : null;
  /** Whether a custom pattern holds an anchor (or what may be one): values are then masked one by one. */
  const anchored = custom.some((r) => /[$^]|\\[Az]/.test(r.re.source));

  /**
   * Replaces the matches of `re` in `text`. `inJson`: the text is a JSON text as sent, so a match that
   * starts right after an escape's backslash (`\nann@x.com`, `\u00e9…`) begins with the escape's
   * tail, which is given back and the rest masked on its own. (No expression matches a backslash, so
   * a match never spans an escape otherwise.)
   *
   * The engine reads the text's UTF-8 bytes (`bytes`, when the caller has them): given a string, RE2
   * converts it on every call and maps each offset back, which cost several times the search itself
   * on the realistic corpus. Offsets are bytes here; the characters around a match are read as bytes,
   * which tells the checks the same (they look for ASCII digits, word characters, `.`, `:` and `\`; a
   * byte of a multi-byte character is none of them). A text with no match is given back as it is.
   */
  function replaceWith(
    re: RE2,
    text: string,
    ruleOf: (groups: unknown[]) => Rule,
    inJson = false,
    bytes: Buffer = Buffer.from(text, 'utf8'),
  ): { text: string; count: number } {
    let count = 0;
    let pieces: string[] | null = null;
    let from = 0;
    re.lastIndex = 0;
    for (let found = re.exec(bytes); found; found = re.exec(bytes)) {
      const start = found.index;
      const end = start + (found[0] as unknown as Buffer).length;
      if (end === start) {
        // An empty match (a custom pattern that matches nothing here, as `\b` does): masks nothing;
        // the search goes on from the next character.
        let next = start + 1;
        while (next < bytes.length && (bytes[next]! & 0xc0) === 0x80) next++;
        re.lastIndex = next;
        continue;
      }
      const match = bytes.toString('utf8', start, end);
      let replacement: string;
      if (inJson && start > 0 && bytes[start - 1] === BACKSLASH && escapesAt(bytes, start - 1)) {
        const cut = match[0] === 'u' ? 5 : 1;
        if (match.length <= cut) continue;
        const tail = replaceWith(re, match.slice(cut), ruleOf);
        // The tail's pass moved the expression's position: this one goes on after the match.
        re.lastIndex = end;
        if (tail.count === 0) continue;
        count += tail.count;
        replacement = match.slice(0, cut) + tail.text;
      } else {
        const rule = ruleOf(Array.prototype.slice.call(found, 1));
        if (rule.accept && !rule.accept(match, charAt(bytes, start - 1), charAt(bytes, end))) continue;
        count++;
        replacement = action === 'hash' ? `[${rule.label}:${hash(match)}]` : `[${rule.label}]`;
      }
      (pieces ??= []).push(bytes.toString('utf8', from, start), replacement);
      from = end;
    }
    if (!pieces) return { text, count: 0 };
    pieces.push(bytes.toString('utf8', from));
    return { text: pieces.join(''), count };
  }

  /** Every rule over a text; `custom`: how many of the matches were custom patterns'. */
  function maskPlain(text: string, inJson = false): { text: string; count: number; custom: number } {
    let count = 0;
    let customCount = 0;
    let out = text;
    // The text's bytes, read by each pass until one changes the text.
    let bytes = Buffer.from(text, 'utf8');
    if (combined) {
      const r = replaceWith(
        combined,
        out,
        (groups) => builtIn[groups.findIndex((g) => g !== undefined)]!,
        inJson,
        bytes,
      );
      if (r.count) bytes = Buffer.from(r.text, 'utf8');
      out = r.text;
      count += r.count;
    }
    for (const rule of custom) {
      const r = replaceWith(rule.re, out, () => rule, false, bytes);
      if (r.count) bytes = Buffer.from(r.text, 'utf8');
      out = r.text;
      count += r.count;
      customCount += r.count;
    }
    return { text: out, count, custom: customCount };
  }

  /**
   * A JSON text (an input or output) is masked value by value: its escapes (`\n`) would otherwise
   * join the text around them (`\nann@x.com` reads `nann@x.com`). Texts with no match as sent are
   * left as they are, unparsed; numbers are masked as their digits (a card sent as a number).
   */
  function maskJson(text: string): { text: string; count: number } | null {
    const raw = maskPlain(text, true);
    if (raw.count === 0) return { text, count: 0 };
    // The detectors' matches hold no quote or backslash, so masking the text as sent keeps it JSON;
    // parsing it proves that (a match inside a `\u` escape's digits would not). Custom patterns may
    // match anything: their texts are masked value by value.
    if (raw.custom === 0) {
      try {
        JSON.parse(raw.text);
        return { text: raw.text, count: raw.count };
      } catch {
        // value by value, below
      }
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return null;
    }
    const { value: masked, count } = maskLeaves(value);
    return { text: count ? JSON.stringify(masked) : text, count };
  }

  /**
   * A JSON value masked value by value: each string and integer (as its digits) as a text of its own.
   * The values are masked in one pass over them joined by U+0000, not one pass each (a message list
   * holds dozens of values, and each pass costs the engine's copy of its text): no expression matches
   * across the separator unless a custom pattern can match U+0000, and a match that took one in removes
   * it, so the joined text no longer splits into as many values; then, or when a value holds U+0000 or a
   * custom pattern an anchor (`^`, `$`, `\\A`, `\\z`: the ends of each value, not of the joined text), they are masked
   * one by one. The separator reads as neither a digit, a word character, `.` nor `:` to the
   * detectors' checks of the characters around a match, as the end of a text does.
   */
  function maskLeaves(value: unknown): { value: unknown; count: number } {
    const leaves: string[] = [];
    const collect = (v: unknown): void => {
      if (typeof v === 'string') leaves.push(v);
      else if (typeof v === 'number') {
        if (Number.isInteger(v)) leaves.push(String(v));
      } else if (Array.isArray(v)) v.forEach(collect);
      else if (v && typeof v === 'object') for (const x of Object.values(v)) collect(x);
    };
    collect(value);
    let masked: (string | null)[] | null = null;
    let count = 0;
    if (!anchored && leaves.length > 1 && !leaves.some((l) => l.includes(SEPARATOR))) {
      const r = maskPlain(leaves.join(SEPARATOR));
      const pieces = r.text.split(SEPARATOR);
      if (pieces.length === leaves.length) {
        count = r.count;
        masked = pieces.map((piece, i) => (piece === leaves[i] ? null : piece));
      }
    }
    if (!masked) {
      count = 0;
      masked = leaves.map((leaf) => {
        const r = maskPlain(leaf);
        count += r.count;
        return r.count ? r.text : null;
      });
    }
    if (count === 0) return { value, count };
    let at = 0;
    const rebuild = (v: unknown): unknown => {
      if (typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v))) return masked[at++] ?? v;
      if (Array.isArray(v)) return v.map(rebuild);
      if (v && typeof v === 'object')
        return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, rebuild(x)]));
      return v;
    };
    return { value: rebuild(value), count };
  }

  function maskText(text: string, json = false): { text: string | null; count: number } {
    const first = json ? text.trimStart()[0] : undefined;
    const r = (first === '{' || first === '[' || first === '"' ? maskJson(text) : null) ?? maskPlain(text);
    if (r.count > 0 && action === 'drop') return { text: null, count: r.count };
    return { text: r.text, count: r.count };
  }

  /** A JSON value, masked string by string (integers as their digits); null when the action drops it. */
  function maskValue(value: unknown): { value: unknown; count: number } {
    const r = maskLeaves(value);
    if (r.count > 0 && action === 'drop') return { value: null, count: r.count };
    return r;
  }

  function maskRecord(record: Record<string, unknown> | null | undefined): number {
    if (!record) return 0;
    let count = 0;
    for (const [key, value] of Object.entries(record)) {
      if (typeof value !== 'string') continue;
      const r = maskText(value);
      if (!r.count) continue;
      count += r.count;
      if (r.text === null) delete record[key];
      else record[key] = r.text;
    }
    return count;
  }

  function maskSpan(span: NormalizedSpan): number {
    let masked = 0;
    for (const field of ['input', 'output'] as const) {
      const value = span[field];
      if (value === null || value === '') continue;
      const r = maskText(value, true);
      masked += r.count;
      span[field] = r.text;
    }
    if (span.error_message) {
      const r = maskText(span.error_message);
      masked += r.count;
      span.error_message = r.text ?? '';
    }
    masked += maskRecord(span.metadata);
    masked += maskRecord(span.attributes);
    for (const event of span.events) masked += maskRecord(event.attributes);
    return masked;
  }

  return {
    maskText,
    maskFields(fields) {
      let count = 0;
      for (const field of ['input', 'output'] as const) {
        if (fields[field] === undefined || fields[field] === null) continue;
        const r = maskValue(fields[field]);
        count += r.count;
        fields[field] = r.value;
      }
      if (typeof fields.error_message === 'string' && fields.error_message) {
        const r = maskText(fields.error_message);
        count += r.count;
        fields.error_message = r.text ?? '';
      }
      count += maskRecord(fields.metadata);
      count += maskRecord(fields.attributes);
      for (const event of fields.events ?? []) count += maskRecord(event.attributes);
      return count;
    },
    maskSpan,
    maskSpans(spans) {
      let masked = 0;
      for (const span of spans) masked += maskSpan(span);
      return masked;
    },
  };
}
