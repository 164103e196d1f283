import { useEffect, useRef, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { api } from '../api';
import {
  describePredicate,
  fieldDef,
  FILTER_FIELDS,
  OP_LABELS,
  SCORE_OPS,
  SUGGEST_COLUMN,
  type FieldDef,
} from '../filters';
import { useScoreNames } from '../scores';
import type { Predicate, SqlResult } from '../types';

/** Closes a popover on a click outside it or Escape. */
function useDismiss(open: boolean, close: () => void) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!open) return;
    const onDown = (e: MouseEvent) => ref.current && !ref.current.contains(e.target as Node) && close();
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && close();
    document.addEventListener('mousedown', onDown);
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('mousedown', onDown);
      document.removeEventListener('keydown', onKey);
    };
  }, [open, close]);
  return ref;
}

/** Values seen for a span column in the last 7 days, through public SQL; none when SQL refuses. */
function useSuggestions(projectId: string, def: FieldDef) {
  const column = SUGGEST_COLUMN[def.field];
  return useQuery({
    queryKey: ['suggest', projectId, column],
    enabled: Boolean(column),
    staleTime: 5 * 60_000,
    retry: false,
    queryFn: async () => {
      const query = `SELECT ${column} AS v, count() AS n FROM spans WHERE start_time >= now() - INTERVAL 7 DAY AND ${column} != '' GROUP BY v ORDER BY n DESC LIMIT 50`;
      const result = await api<SqlResult>('/sql', { method: 'POST', body: { query, project_id: projectId } });
      return result.rows.map((r) => String(r[0]));
    },
  });
}

function PredicateEditor({
  projectId,
  initial,
  field,
  onApply,
}: {
  projectId: string;
  initial?: Predicate;
  field: Predicate['field'];
  onApply: (p: Predicate) => void;
}) {
  const def = fieldDef(field);
  const init = initial as (Predicate & { key?: string }) | undefined;
  const [op, setOp] = useState<string>(init?.op ?? def.ops[0]!);
  const [text, setText] = useState<string>(init && !Array.isArray(init.value) ? String(init.value) : '');
  const [key, setKey] = useState<string>(init?.key ?? '');
  const [chosen, setChosen] = useState<string[]>(init && Array.isArray(init.value) ? init.value : []);
  const [other, setOther] = useState('');
  const suggestions = useSuggestions(projectId, def);
  const options = [...new Set([...(def.options ?? []), ...(suggestions.data ?? []), ...chosen])];

  const build = (): Predicate | null => {
    if (def.kind === 'set') {
      const values = [
        ...chosen,
        ...other
          .split(',')
          .map((v) => v.trim())
          .filter(Boolean),
      ];
      return values.length ? ({ field: def.field, op: 'in', value: [...new Set(values)] } as Predicate) : null;
    }
    if (def.kind === 'number') {
      const n = Number(text);
      if (text.trim() === '' || !Number.isFinite(n) || n < 0 || (def.integer && !Number.isInteger(n))) return null;
      return { field: def.field, op, value: n } as Predicate;
    }
    if (def.kind === 'metadata')
      return key.trim() && text ? ({ field: 'metadata', op, key: key.trim(), value: text } as Predicate) : null;
    return text ? ({ field: def.field, op, value: text } as Predicate) : null;
  };
  const built = build();
  if (def.kind === 'score') return <ScorePredicateEditor projectId={projectId} initial={initial} onApply={onApply} />;
  return (
    // Not a <form>: the bar sits inside other forms (widget, alert), and forms don't nest.
    <div
      className="stack"
      onKeyDown={(e) => {
        if (e.key === 'Enter' && (e.target as HTMLElement).tagName === 'INPUT') {
          e.preventDefault();
          if (built) onApply(built);
        }
      }}
    >
      <strong>{def.label}</strong>
      {def.kind === 'set' ? (
        <>
          <div className="options" role="group" aria-label={`${def.label} values`}>
            {options.length === 0 && (
              <span className="muted">{suggestions.isFetching ? 'Loading values…' : 'Type values below'}</span>
            )}
            {options.map((o) => (
              <label key={o} className="inline">
                <input
                  type="checkbox"
                  checked={chosen.includes(o)}
                  onChange={(e) => setChosen(e.target.checked ? [...chosen, o] : chosen.filter((c) => c !== o))}
                />
                <span className="ellipsis">{o}</span>
              </label>
            ))}
          </div>
          <input
            aria-label="Other values"
            placeholder="Other values, comma-separated"
            value={other}
            onChange={(e) => setOther(e.target.value)}
          />
        </>
      ) : (
        <div className="row">
          {def.kind === 'metadata' && (
            <input
              aria-label="Metadata key"
              placeholder="key"
              value={key}
              onChange={(e) => setKey(e.target.value)}
              className="grow"
              autoFocus
            />
          )}
          <select aria-label="Operator" value={op} onChange={(e) => setOp(e.target.value)}>
            {def.ops.map((o) => (
              <option key={o} value={o}>
                {OP_LABELS[o]}
              </option>
            ))}
          </select>
          <input
            aria-label={`${def.label} value`}
            className="grow"
            type={def.kind === 'number' ? 'number' : 'text'}
            min={def.kind === 'number' ? 0 : undefined}
            step={def.kind === 'number' ? (def.integer ? 1 : 'any') : undefined}
            placeholder={def.unit ? def.unit : 'value'}
            value={text}
            onChange={(e) => setText(e.target.value)}
            autoFocus={def.kind !== 'metadata'}
          />
        </div>
      )}
      <button className="primary" type="button" disabled={!built} onClick={() => built && onApply(built)}>
        Apply
      </button>
    </div>
  );
}

/**
 * The `score` predicate: a score name (the project's known names offered), then a comparison of the
 * value, a choice of labels (`in`), or whether the trace has such a score at all.
 */
function ScorePredicateEditor({
  projectId,
  initial,
  onApply,
}: {
  projectId: string;
  initial?: Predicate;
  onApply: (p: Predicate) => void;
}) {
  const init = initial?.field === 'score' ? initial : undefined;
  const names = useScoreNames(projectId);
  const [key, setKey] = useState(init?.key ?? '');
  const [op, setOp] = useState<string>(init?.op ?? 'gte');
  const [text, setText] = useState(init && typeof init.value === 'number' ? String(init.value) : '');
  const [labels, setLabels] = useState(init && Array.isArray(init.value) ? init.value.join(', ') : '');
  const known = names.find((n) => n.name === key.trim());
  const build = (): Predicate | null => {
    const name = key.trim();
    if (!name) return null;
    if (op === 'is_set' || op === 'is_not_set') return { field: 'score', key: name, op } as Predicate;
    if (op === 'in') {
      const values = [
        ...new Set(
          labels
            .split(',')
            .map((v) => v.trim())
            .filter(Boolean),
        ),
      ];
      return values.length ? ({ field: 'score', key: name, op, value: values } as Predicate) : null;
    }
    const n = Number(text);
    return text.trim() !== '' && Number.isFinite(n) ? ({ field: 'score', key: name, op, value: n } as Predicate) : null;
  };
  const built = build();
  const listId = `score-names-${projectId}`;
  return (
    <div
      className="stack"
      data-testid="score-filter-editor"
      onKeyDown={(e) => {
        if (e.key === 'Enter' && (e.target as HTMLElement).tagName === 'INPUT') {
          e.preventDefault();
          if (built) onApply(built);
        }
      }}
    >
      <strong>Score</strong>
      <input
        aria-label="Score name"
        placeholder="score name"
        list={listId}
        value={key}
        onChange={(e) => setKey(e.target.value)}
        autoFocus
      />
      <datalist id={listId}>
        {names.map((n) => (
          <option key={n.name} value={n.name}>
            {n.data_type}
          </option>
        ))}
      </datalist>
      <div className="row">
        <select aria-label="Operator" value={op} onChange={(e) => setOp(e.target.value)}>
          {SCORE_OPS.map((o) => (
            <option key={o} value={o}>
              {o === 'in' ? 'label is one of' : OP_LABELS[o]}
            </option>
          ))}
        </select>
        {op === 'in' ? (
          <input
            aria-label="Score labels"
            className="grow"
            placeholder={known?.categories?.length ? known.categories.join(', ') : 'labels, comma-separated'}
            value={labels}
            onChange={(e) => setLabels(e.target.value)}
          />
        ) : op === 'is_set' || op === 'is_not_set' ? null : (
          <input
            aria-label="Score value"
            className="grow"
            type="number"
            step="any"
            placeholder="value"
            value={text}
            onChange={(e) => setText(e.target.value)}
          />
        )}
      </div>
      <button className="primary" type="button" disabled={!built} onClick={() => built && onApply(built)}>
        Apply
      </button>
    </div>
  );
}

/** Filters as chips: click one to edit it, × removes it, "Add filter" offers every field of the predicate table. */
export function FilterBar({
  projectId,
  filters,
  onChange,
  exclude = [],
}: {
  projectId: string;
  filters: Predicate[];
  onChange: (f: Predicate[]) => void;
  exclude?: Predicate['field'][];
}) {
  const [open, setOpen] = useState<{ index: number | null; field: Predicate['field'] | null } | null>(null);
  const close = () => setOpen(null);
  const ref = useDismiss(open !== null, close);
  const apply = (p: Predicate) => {
    const next = [...filters];
    if (open?.index !== null && open?.index !== undefined) next[open.index] = p;
    else next.push(p);
    onChange(next);
    close();
  };
  return (
    <div className="chips" ref={ref}>
      {filters.map((p, i) => (
        <span className="chip" key={`${i}-${p.field}`} data-testid="filter-chip">
          <span
            className="chip-text"
            role="button"
            tabIndex={0}
            title="Edit this filter"
            onClick={() => setOpen({ index: i, field: p.field })}
            onKeyDown={(e) => e.key === 'Enter' && setOpen({ index: i, field: p.field })}
          >
            {describePredicate(p)}
          </span>
          <button
            type="button"
            aria-label={`Remove filter ${describePredicate(p)}`}
            onClick={() => onChange(filters.filter((_, j) => j !== i))}
          >
            ×
          </button>
        </span>
      ))}
      <div className="menu">
        <button
          type="button"
          className="small"
          onClick={() => setOpen(open ? null : { index: null, field: null })}
          disabled={filters.length >= 20}
          aria-expanded={open !== null}
        >
          + Add filter
        </button>
        {open && (
          <div className="menu-panel">
            {open.field === null ? (
              <div className="field-list" role="menu">
                {FILTER_FIELDS.filter((f) => !exclude.includes(f.field)).map((f) => (
                  <button
                    type="button"
                    key={f.field}
                    role="menuitem"
                    onClick={() => setOpen({ index: open.index, field: f.field })}
                  >
                    {f.label}{' '}
                    <span className="muted">
                      {f.kind === 'set' ? 'is one of' : f.kind === 'number' || f.kind === 'score' ? 'compare' : 'match'}
                    </span>
                  </button>
                ))}
              </div>
            ) : (
              <PredicateEditor
                key={`${open.index}-${open.field}`}
                projectId={projectId}
                field={open.field}
                initial={open.index !== null ? filters[open.index] : undefined}
                onApply={apply}
              />
            )}
          </div>
        )}
      </div>
      {filters.length > 0 && (
        <button type="button" className="small ghost" onClick={() => onChange([])}>
          Clear all
        </button>
      )}
    </div>
  );
}
