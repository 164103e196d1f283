import { useEffect, useState } from 'react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { api } from '../../api';
import { useProject } from '../../project';
import { parseFilterParam } from '../../filters';
import { fmtCost, fmtInt, fmtMs } from '../../format';
import { FilterBar } from '../../components/filter-bar';
import { TimeRange, type TimeValue } from '../../components/time-range';
import { Empty, ErrorBox, Loading, Pager, Time, useTitle } from '../../components/ui';
import type { Page, Predicate, TraceItem } from '../../types';
import { ScoreChips } from '../../components/scores';
import { useScoreNames } from '../../scores';
import { Snippet, TEXT_SCOPES, TextSearchInputs, type TextScope } from './text-match';

const PRESETS = ['1h', '24h', '7d', '30d', '90d', 'all'];
const DEFAULT_RANGE = '7d';
const RANGE_MS: Record<string, number> = {
  '1h': 3_600_000,
  '24h': 86_400_000,
  '7d': 7 * 86_400_000,
  '30d': 30 * 86_400_000,
  '90d': 90 * 86_400_000,
};
const LIMIT = 50;

const SORT_FIELDS = ['start_time', 'duration_ms', 'total_cost', 'total_tokens', 'span_count', 'error_count'] as const;
type SortField = (typeof SORT_FIELDS)[number];

type Column = {
  id: string;
  label: string;
  /** The list's `sort` field for this column, when it can be sorted by. */
  sort?: SortField;
  className?: string;
  /** Shown until the user chooses otherwise. */
  shown: boolean;
};

/** The list's columns, in order; which are shown is the user's choice, kept per browser. */
const COLUMNS: Column[] = [
  { id: 'started', label: 'Started', sort: 'start_time', shown: true },
  { id: 'name', label: 'Name', shown: true },
  { id: 'input', label: 'Input', className: 'hide-phone', shown: true },
  { id: 'output', label: 'Output', className: 'hide-phone', shown: true },
  { id: 'duration', label: 'Duration', sort: 'duration_ms', className: 'num', shown: true },
  { id: 'spans', label: 'Spans', sort: 'span_count', className: 'num', shown: false },
  { id: 'errors', label: 'Errors', sort: 'error_count', className: 'num', shown: true },
  { id: 'tokens', label: 'Tokens in / out', sort: 'total_tokens', className: 'num hide-phone', shown: true },
  { id: 'cost', label: 'Cost', sort: 'total_cost', className: 'num', shown: true },
  { id: 'model', label: 'Model', className: 'hide-phone', shown: true },
  { id: 'tags', label: 'Tags', className: 'hide-phone', shown: true },
  { id: 'user', label: 'User', className: 'hide-phone', shown: true },
  { id: 'session', label: 'Session', className: 'hide-phone', shown: false },
  { id: 'metadata', label: 'Metadata', className: 'hide-phone', shown: false },
  { id: 'scores', label: 'Scores', shown: true },
];
/** A column of one score name's summary (`score:<name>`), offered for every score name the project knows. */
const SCORE_COLUMN = 'score:';
const COLUMNS_KEY = 'sightline.traceColumns';

/** The shown columns' ids: the user's choice, else each column's default. */
function useColumns(): [Set<string>, (id: string, on: boolean) => void] {
  const [shown, setShown] = useState<Set<string>>(() => {
    try {
      const saved = JSON.parse(localStorage.getItem(COLUMNS_KEY) ?? 'null') as unknown;
      if (Array.isArray(saved)) return new Set(saved.filter((x): x is string => typeof x === 'string'));
    } catch {
      // A damaged setting: the defaults.
    }
    return new Set(COLUMNS.filter((c) => c.shown).map((c) => c.id));
  });
  const toggle = (id: string, on: boolean) =>
    setShown((prev) => {
      const next = new Set(prev);
      if (on) next.add(id);
      else next.delete(id);
      localStorage.setItem(COLUMNS_KEY, JSON.stringify([...next]));
      return next;
    });
  return [shown, toggle];
}

/** The "Columns" menu: a checkbox per column. */
function ColumnChooser({
  columns,
  shown,
  onToggle,
}: {
  columns: Column[];
  shown: Set<string>;
  onToggle: (id: string, on: boolean) => void;
}) {
  return (
    <details className="column-chooser">
      <summary className="button small">Columns</summary>
      <div className="card column-menu" role="group" aria-label="Columns">
        {columns.map((c) => (
          <label key={c.id} className="inline">
            <input type="checkbox" checked={shown.has(c.id)} onChange={(e) => onToggle(c.id, e.target.checked)} />
            {c.label}
          </label>
        ))}
      </div>
    </details>
  );
}

/** The list's state lives in the URL (range, search, filters, page), so a view can be shared. */
export function useTraceListState() {
  const [params, setParams] = useSearchParams();
  const range = params.get('from') && params.get('to') ? null : (params.get('range') ?? DEFAULT_RANGE);
  const state = {
    time: { range, from: params.get('from'), to: params.get('to') } as TimeValue,
    search: params.get('q') ?? '',
    filters: parseFilterParam(params.get('filters')),
    page: Math.max(0, Math.min(10_000, Number(params.get('page')) || 0)),
    evaluations: params.get('evals') === '1',
    // Full-text search over span input, output and error message (`text_query`, `text_scope`).
    text: params.get('text') ?? '',
    scope: (TEXT_SCOPES.find((x) => x.value === params.get('scope'))?.value ?? 'all') as TextScope,
    // The column the list is sorted by (`sort`/`order` of GET /traces); none: newest first.
    sort: (SORT_FIELDS.find((f) => f === params.get('sort')) ?? null) as SortField | null,
    order: (params.get('order') === 'asc' ? 'asc' : 'desc') as 'asc' | 'desc',
  };
  const update = (patch: Partial<typeof state>) => {
    const next = { ...state, page: 0, ...patch };
    const out = new URLSearchParams();
    if (next.time.range === null && next.time.from && next.time.to) {
      out.set('from', next.time.from);
      out.set('to', next.time.to);
    } else if (next.time.range && next.time.range !== DEFAULT_RANGE) out.set('range', next.time.range);
    if (next.search) out.set('q', next.search);
    if (next.filters.length) out.set('filters', JSON.stringify(next.filters));
    if (next.page) out.set('page', String(next.page));
    if (next.evaluations) out.set('evals', '1');
    if (next.text) out.set('text', next.text);
    if (next.scope !== 'all') out.set('scope', next.scope);
    if (next.sort) out.set('sort', next.sort);
    if (next.sort && next.order === 'asc') out.set('order', 'asc');
    setParams(out, { replace: false });
  };
  return { state, update };
}

function windowOf(time: TimeValue): { start_after?: string; end_before?: string } {
  if (time.range === null) return { start_after: time.from ?? undefined, end_before: time.to ?? undefined };
  const span = RANGE_MS[time.range];
  return span ? { start_after: new Date(Date.now() - span).toISOString() } : {};
}

function Fold({ text }: { text: string | null }) {
  if (!text) return <span className="muted">–</span>;
  return <div title={text.length > 600 ? `${text.slice(0, 600)}…` : text}>{text.slice(0, 300)}</div>;
}

export function TracesPage() {
  const { projectId, project } = useProject();
  useTitle(`Traces · ${project.name}`);
  const navigate = useNavigate();
  const { state, update } = useTraceListState();
  const [search, setSearch] = useState(state.search);
  useEffect(() => setSearch(state.search), [state.search]);
  const [text, setText] = useState(state.text);
  useEffect(() => setText(state.text), [state.text]);
  // Typing settles for a moment before the URL (and the query) change.
  useEffect(() => {
    if (search === state.search && text === state.text) return;
    const t = setTimeout(() => update({ search, text: text.trim() ? text : '' }), 350);
    return () => clearTimeout(t);
  });

  const key = JSON.stringify([
    state.time,
    state.search,
    state.filters,
    state.page,
    state.evaluations,
    state.text,
    state.scope,
    state.sort,
    state.order,
  ]);
  const traces = useQuery({
    queryKey: ['traces', projectId, key],
    placeholderData: keepPreviousData,
    queryFn: ({ signal }) =>
      api<Page<TraceItem>>('/traces', {
        signal,
        query: {
          project_id: projectId,
          limit: LIMIT,
          page: state.page,
          search_query: state.search || undefined,
          filters: state.filters.length ? JSON.stringify(state.filters) : undefined,
          include_evaluations: state.evaluations || undefined,
          text_query: state.text.trim() ? state.text.slice(0, 512) : undefined,
          text_scope: state.text.trim() && state.scope !== 'all' ? state.scope : undefined,
          sort: state.sort ?? undefined,
          order: state.sort ? state.order : undefined,
          ...windowOf(state.time),
        },
      }),
  });

  // A trace found by its text opens with the matching span selected.
  const traceLink = (t: TraceItem) =>
    `/projects/${projectId}/traces/${encodeURIComponent(t.trace_id)}${t.text_match ? `?${new URLSearchParams({ span: t.text_match.span_id, text: state.text })}` : ''}`;
  const open = (t: TraceItem) => navigate(traceLink(t));
  const [shown, toggleColumn] = useColumns();
  const scoreNames = useScoreNames(projectId);
  const allColumns: Column[] = [
    ...COLUMNS,
    ...scoreNames.map((n) => ({ id: `${SCORE_COLUMN}${n.name}`, label: `Score: ${n.name}`, shown: false })),
  ];
  // A chosen score column stays while its name is unknown (no score of it lately), so the choice isn't lost.
  for (const id of shown)
    if (id.startsWith(SCORE_COLUMN) && !allColumns.some((c) => c.id === id))
      allColumns.push({ id, label: `Score: ${id.slice(SCORE_COLUMN.length)}`, shown: false });
  const columns = allColumns.filter((c) => shown.has(c.id));
  // A sortable header: first click sorts descending, the next flips; "Started" descending is the default.
  const sortBy = (field: SortField) => {
    const current = state.sort ?? 'start_time';
    const order = current === field ? (state.order === 'desc' ? 'asc' : 'desc') : 'desc';
    update({ sort: field === 'start_time' && order === 'desc' ? null : field, order });
  };
  const sortedBy = state.sort ?? 'start_time';
  const addTag = (tag: string) =>
    update({
      filters: [
        ...state.filters.filter((f) => f.field !== 'tags'),
        { field: 'tags', op: 'in', value: [tag] } as Predicate,
      ],
    });
  const cell = (id: string, t: TraceItem): React.ReactNode => {
    switch (id) {
      case 'started':
        return <Time iso={t.trace_start_time} short />;
      case 'name':
        return (
          <>
            <Link to={traceLink(t)} onClick={(e) => e.stopPropagation()}>
              {t.name || <span className="muted">(unnamed)</span>}
            </Link>
            <div className="muted mono ellipsis" style={{ maxWidth: 180 }} title={t.trace_id}>
              {t.trace_id}
            </div>
            {t.text_match ? <Snippet match={t.text_match} query={state.text} /> : null}
          </>
        );
      case 'input':
        return <Fold text={t.input} />;
      case 'output':
        return <Fold text={t.output} />;
      case 'duration':
        return fmtMs(t.duration_ms);
      case 'spans':
        return fmtInt(t.span_count);
      case 'errors':
        return t.error_count > 0 ? (
          <span className="badge error">{fmtInt(t.error_count)}</span>
        ) : (
          <span className="muted">0</span>
        );
      case 'tokens':
        return `${fmtInt(t.total_input_tokens ?? 0)} / ${fmtInt(t.total_output_tokens ?? 0)}`;
      case 'cost':
        return fmtCost(t.total_cost ?? 0);
      case 'model':
        return t.model_names.length ? (
          <span className="ellipsis" title={t.model_names.join(', ')}>
            {t.model_names.join(', ')}
          </span>
        ) : (
          <span className="muted">–</span>
        );
      case 'tags':
        return t.tags.length ? (
          <span className="tags">
            {t.tags.map((tag) => (
              <button
                key={tag}
                className="badge info tag"
                title={`Only traces tagged ${tag}`}
                onClick={(e) => {
                  e.stopPropagation();
                  addTag(tag);
                }}
              >
                {tag}
              </button>
            ))}
          </span>
        ) : (
          <span className="muted">–</span>
        );
      case 'user':
        return t.user_id ?? <span className="muted">–</span>;
      case 'session':
        return t.session_id ? (
          <Link
            to={`/projects/${projectId}/sessions/${encodeURIComponent(t.session_id)}`}
            onClick={(e) => e.stopPropagation()}
          >
            {t.session_id}
          </Link>
        ) : (
          <span className="muted">–</span>
        );
      case 'metadata':
        return <MetadataCell map={t.metadata_map} />;
      case 'scores':
        return <ScoreChips summaries={t.scores} />;
      default:
        return id.startsWith(SCORE_COLUMN) ? (
          <ScoreChips summaries={t.scores} only={id.slice(SCORE_COLUMN.length)} />
        ) : null;
    }
  };
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Traces</h1>
          <div className="muted">
            {traces.data ? `${fmtInt(traces.data.meta.total)} traces` : ' '}
            {traces.isFetching && traces.data ? ' · updating…' : ''}
          </div>
        </div>
        <TimeRange presets={PRESETS} value={state.time} onChange={(time) => update({ time })} />
      </div>
      <div className="toolbar">
        <input
          className="search"
          type="search"
          aria-label="Search traces"
          placeholder="Search trace ID, name, session or user…"
          value={search}
          onChange={(e) => setSearch(e.target.value)}
          onKeyDown={(e) => e.key === 'Enter' && update({ search })}
        />
        <TextSearchInputs
          label="Search text in inputs, outputs and errors"
          scopeLabel="Search text in"
          value={text}
          onChange={setText}
          onSubmit={() => update({ text: text.trim() ? text : '' })}
          scope={state.scope}
          onScope={(scope) => update({ scope })}
        />
        <label className="inline">
          <input
            type="checkbox"
            checked={state.evaluations}
            onChange={(e) => update({ evaluations: e.target.checked })}
          />
          Include evaluation traces
        </label>
        <ColumnChooser columns={allColumns} shown={shown} onToggle={toggleColumn} />
      </div>
      <FilterBar
        projectId={projectId}
        filters={state.filters}
        onChange={(filters: Predicate[]) => update({ filters })}
      />
      {traces.isPending ? (
        <Loading rows={8} />
      ) : traces.error ? (
        <ErrorBox error={traces.error} title="The traces could not be listed" />
      ) : traces.data.data.length === 0 ? (
        <Empty title="No traces match">
          {state.filters.length || state.search || state.text
            ? 'Remove a filter or widen the time range.'
            : 'Send spans with an API key (Settings → API keys), or widen the time range.'}
        </Empty>
      ) : (
        <>
          <div className="table-wrap">
            <table className="data" data-testid="trace-table">
              <thead>
                <tr>
                  {columns.map((c) => (
                    <th
                      key={c.id}
                      className={c.className}
                      aria-sort={
                        c.sort && c.sort === sortedBy ? (state.order === 'asc' ? 'ascending' : 'descending') : undefined
                      }
                    >
                      {c.sort ? (
                        <button className="sort-header" onClick={() => sortBy(c.sort!)}>
                          {c.label}
                          {c.sort === sortedBy ? (state.order === 'asc' ? ' ▲' : ' ▼') : ''}
                        </button>
                      ) : (
                        c.label
                      )}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {traces.data.data.map((t) => (
                  <tr key={t.trace_id} className="clickable" onClick={() => open(t)} data-testid="trace-row">
                    {columns.map((c) => (
                      <td
                        key={c.id}
                        data-column={c.id}
                        className={[
                          c.className,
                          c.id === 'started' ? 'nowrap' : '',
                          c.id === 'input' || c.id === 'output' ? 'io' : '',
                          c.id === 'user' || c.id === 'session' || c.id === 'model' ? 'ellipsis narrow' : '',
                        ]
                          .filter(Boolean)
                          .join(' ')}
                      >
                        {cell(c.id, t)}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager page={state.page} limit={LIMIT} total={traces.data.meta.total} onPage={(page) => update({ page })} />
        </>
      )}
    </div>
  );
}

function MetadataCell({ map }: { map?: Record<string, string> }) {
  const entries = Object.entries(map ?? {});
  if (!entries.length) return <span className="muted">–</span>;
  const text = entries.map(([k, v]) => `${k}=${v}`).join('\n');
  return (
    <span className="badge" title={text}>
      {entries.length} {entries.length === 1 ? 'key' : 'keys'}
    </span>
  );
}
