import type { ReactNode } from 'react';
import type { TraceItem } from '../../types';

/** The fields `text_scope` can narrow the text search to (docs/traces.md, "Text search"). */
export const TEXT_SCOPES = [
  { value: 'all', label: 'in all fields' },
  { value: 'input', label: 'in inputs' },
  { value: 'output', label: 'in outputs' },
  { value: 'error', label: 'in errors' },
] as const;
export type TextScope = (typeof TEXT_SCOPES)[number]['value'];

const FIELD_LABEL = { input: 'input', output: 'output', error_message: 'error' } as const;

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
 * The snippet with every occurrence of a term marked. Case folds as the server's does for the
 * common scripts; where lowercasing changes a string's length (rare), that term is left unmarked.
 */
export function highlight(snippet: string, terms: string[]): ReactNode[] {
  const lower = snippet.toLowerCase();
  const marks: [number, number][] = [];
  for (const term of terms) {
    const t = term.toLowerCase();
    if (!t || t.length !== term.length || lower.length !== snippet.length) continue;
    for (let at = lower.indexOf(t); at >= 0; at = lower.indexOf(t, at + t.length)) marks.push([at, at + t.length]);
  }
  marks.sort((a, b) => a[0] - b[0]);
  const out: ReactNode[] = [];
  let pos = 0;
  for (const [from, to] of marks) {
    if (from < pos) continue;
    if (from > pos) out.push(snippet.slice(pos, from));
    out.push(<mark key={from}>{snippet.slice(from, to)}</mark>);
    pos = to;
  }
  if (pos < snippet.length) out.push(snippet.slice(pos));
  return out;
}

/** Where a trace found by text matched: the field and the snippet, the terms highlighted. */
export function Snippet({ match, query }: { match: NonNullable<TraceItem['text_match']>; query: string }) {
  return (
    <div className="text-match" data-testid="text-match" title={match.snippet}>
      <span className="badge">{FIELD_LABEL[match.field]}</span> {highlight(match.snippet, textTerms(query))}
    </div>
  );
}
