import type { ReactNode } from 'react';

/**
 * The terms of a full-text search (`text_query`, docs/traces.md "Text search") and their marks in a
 * text: the traces page highlights them in a match's snippet, the trace page in the span's input,
 * output and error.
 */

/** The query's terms as the API reads them: words, and "quoted phrases" (with \" and \\ inside). */
export function textTerms(query: string): string[] {
  const terms: string[] = [];
  for (const m of query.matchAll(/"((?:[^"\\]|\\.)*)(?:"|$)|([^\s"]+)/gsu)) {
    const term = m[1] !== undefined ? m[1].replace(/\\(.)/gsu, '$1') : m[2]!;
    if (term.trim() && !terms.includes(term)) terms.push(term);
  }
  return terms;
}

/**
 * Where the terms occur in `text`: [from, to) UTF-16 ranges, in order, none overlapping. Case folds as
 * the server's does for the common scripts; where lowercasing changes a string's length (rare), that
 * term is left unmarked.
 */
export function markRanges(text: string, terms: string[]): [number, number][] {
  const lower = text.toLowerCase();
  const marks: [number, number][] = [];
  for (const term of terms) {
    const t = term.toLowerCase();
    if (!t || t.length !== term.length || lower.length !== text.length) continue;
    for (let at = lower.indexOf(t); at >= 0; at = lower.indexOf(t, at + t.length)) marks.push([at, at + t.length]);
  }
  marks.sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const m of marks) if (!out.length || m[0] >= out[out.length - 1]![1]) out.push(m);
  return out;
}

/** The snippet with every occurrence of a term marked (`markRanges`). */
export function highlight(snippet: string, terms: string[]): ReactNode[] {
  const out: ReactNode[] = [];
  let pos = 0;
  for (const [from, to] of markRanges(snippet, terms)) {
    if (from > pos) out.push(snippet.slice(pos, from));
    out.push(<mark key={from}>{snippet.slice(from, to)}</mark>);
    pos = to;
  }
  if (pos < snippet.length) out.push(snippet.slice(pos));
  return out;
}

/** Where the first term occurs in `text` (UTF-16 index, as `highlight` marks it), or -1. */
export function firstMark(text: string, terms: string[]): number {
  const lower = text.toLowerCase();
  if (lower.length !== text.length) return -1;
  let first = -1;
  for (const term of terms) {
    const t = term.toLowerCase();
    if (!t || t.length !== term.length) continue;
    const at = lower.indexOf(t);
    if (at >= 0 && (first < 0 || at < first)) first = at;
  }
  return first;
}
