import { highlight, textTerms } from '../../components/highlight';
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

/** Where a trace found by text matched: the field and the snippet, the terms highlighted. */
export function Snippet({ match, query }: { match: NonNullable<TraceItem['text_match']>; query: string }) {
  return (
    <div className="text-match" data-testid="text-match" title={match.snippet}>
      <span className="badge">{FIELD_LABEL[match.field]}</span> {highlight(match.snippet, textTerms(query))}
    </div>
  );
}
