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

/**
 * The text search box and its scope choice, as the trace and session lists show them. The page keeps
 * what was typed and when it applies (Enter here, or after typing settles).
 */
export function TextSearchInputs(props: {
  /** Accessible names of the box and of the scope choice. */
  label: string;
  scopeLabel: string;
  value: string;
  onChange: (text: string) => void;
  onSubmit: () => void;
  scope: TextScope;
  onScope: (scope: TextScope) => void;
}) {
  return (
    <>
      <input
        className="search"
        type="search"
        aria-label={props.label}
        placeholder='Search inputs, outputs and errors (any language, "quoted phrase")…'
        value={props.value}
        maxLength={512}
        onChange={(e) => props.onChange(e.target.value)}
        onKeyDown={(e) => e.key === 'Enter' && props.onSubmit()}
      />
      <select
        aria-label={props.scopeLabel}
        value={props.scope}
        onChange={(e) => props.onScope(e.target.value as TextScope)}
      >
        {TEXT_SCOPES.map((x) => (
          <option key={x.value} value={x.value}>
            {x.label}
          </option>
        ))}
      </select>
    </>
  );
}

const FIELD_LABEL = { input: 'input', output: 'output', error_message: 'error' } as const;

/** Where a trace found by text matched: the field and the snippet, the terms highlighted. */
export function Snippet({ match, query }: { match: NonNullable<TraceItem['text_match']>; query: string }) {
  return (
    <div className="text-match" data-testid="text-match" title={match.snippet}>
      <span className="badge">{FIELD_LABEL[match.field]}</span> {highlight(match.snippet, textTerms(query))}
    </div>
  );
}
