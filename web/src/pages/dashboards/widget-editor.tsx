import { useMemo, useState } from 'react';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ApiError } from '../../api';
import { useDebounced } from '../../hooks';
import { FilterBar } from '../../components/filter-bar';
import { ErrorBox, Modal } from '../../components/ui';
import { MarkdownText, WidgetBody } from '../../components/widget-view';
import {
  AGGREGATIONS,
  asSpec,
  defaultSpec,
  EDITOR_VIEWS,
  groupFieldsOf,
  IDENTITY_MEASURES,
  INTERVALS,
  measuresOf,
  SCORE_AGGREGATIONS,
  SCORES_VIEW,
  VIEW_LABELS,
  type EditorSpec,
} from '../../widget-spec';
import { useScoreNames } from '../../scores';
import type { AnsweredWidget, Predicate, Widget, WidgetSpec, WidgetType } from '../../types';

const TYPES: { value: WidgetType; label: string }[] = [
  { value: 'timeseries', label: 'Time series' },
  { value: 'stat', label: 'Single number' },
  { value: 'bar', label: 'Bar chart' },
  { value: 'table', label: 'Table' },
  { value: 'markdown', label: 'Text (markdown)' },
];

export type WindowQuery = { range?: string; start_time?: string; end_time?: string };

/** The spec as the server wants it for a type: no interval outside series, no limit on series or stats. */
function cleanSpec(type: WidgetType, spec: EditorSpec): EditorSpec {
  const out: EditorSpec = { view: spec.view, measure: spec.measure, aggregation: spec.aggregation };
  if (spec.view === SCORES_VIEW) out.score_name = spec.score_name?.trim() ?? '';
  if (spec.group_by?.length && type !== 'stat') out.group_by = spec.group_by;
  if (type === 'timeseries') out.interval = spec.interval ?? 'auto';
  if (spec.filters?.length) out.filters = spec.filters;
  if ((type === 'table' || type === 'bar') && spec.limit) out.limit = spec.limit;
  return out;
}

/** Whether a settled preview's spec can be asked: a SCORES spec only once it names its score. */
function hasScoreName(previewKey: string): boolean {
  const { body } = JSON.parse(previewKey) as { body: EditorSpec };
  return body.view !== SCORES_VIEW || Boolean(body.score_name);
}

/**
 * Add or edit a widget: a form over its spec (view, measure, aggregation, group by, filters,
 * interval, limit) with a live preview answered by `POST /widgets/query` for the dashboard's window.
 */
export function WidgetEditor({
  projectId,
  dashboardId,
  widget,
  window,
  onClose,
}: {
  projectId: string;
  dashboardId: string;
  widget?: Widget;
  window: WindowQuery;
  onClose: () => void;
}) {
  const client = useQueryClient();
  const [title, setTitle] = useState(widget?.title ?? '');
  const [type, setType] = useState<WidgetType>(widget?.type ?? 'timeseries');
  const [spec, setSpec] = useState<EditorSpec>((asSpec(widget?.spec) as EditorSpec | undefined) ?? defaultSpec());
  const scoreNames = useScoreNames(projectId);
  const [text, setText] = useState<string>(
    widget?.type === 'markdown'
      ? String((widget.spec as { text?: string })?.text ?? (typeof widget.spec === 'string' ? widget.spec : ''))
      : '',
  );
  const [metaKey, setMetaKey] = useState('');
  const patch = (p: Partial<EditorSpec>) => setSpec((s) => ({ ...s, ...p }));
  const identity = IDENTITY_MEASURES.includes(spec.measure);
  const scores = spec.view === SCORES_VIEW;
  const groupOptions = groupFieldsOf(spec.view);
  const aggregations = scores
    ? SCORE_AGGREGATIONS
    : AGGREGATIONS.filter((a) => !identity || a === 'uniq' || a === 'count');

  const body = useMemo(() => (type === 'markdown' ? { text } : cleanSpec(type, spec)), [type, spec, text]);
  const previewKey = useDebounced(JSON.stringify({ type, body, window }), 400);
  const preview = useQuery({
    queryKey: ['widget-preview', projectId, previewKey],
    placeholderData: keepPreviousData,
    retry: false,
    // A SCORES spec needs its score name before it can be answered (read from the settled spec, which
    // is what the query sends).
    enabled: type !== 'markdown' && hasScoreName(previewKey),
    queryFn: ({ signal }) => {
      const {
        type: t,
        body: b,
        window: w,
      } = JSON.parse(previewKey) as { type: WidgetType; body: EditorSpec; window: WindowQuery };
      return api<AnsweredWidget>('/widgets/query', {
        method: 'POST',
        signal,
        body: { project_id: projectId, type: t, spec: b, ...w },
      });
    },
  });

  const save = useMutation({
    mutationFn: () =>
      widget
        ? api(`/widgets/${encodeURIComponent(widget.id)}`, {
            method: 'PATCH',
            body: { project_id: projectId, title, type, spec: body },
          })
        : api('/widgets', {
            method: 'POST',
            body: { project_id: projectId, dashboard_id: dashboardId, title, type, spec: body },
          }),
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: ['dashboard', projectId, dashboardId] });
      await client.invalidateQueries({ queryKey: ['dashboard-data', projectId, dashboardId] });
      await client.invalidateQueries({ queryKey: ['dashboards', projectId] });
      onClose();
    },
  });

  return (
    <Modal title={widget ? `Edit widget` : 'Add a widget'} onClose={onClose} wide>
      <div className="widget-editor">
        <form
          className="stack"
          aria-label="Widget"
          onSubmit={(e) => {
            e.preventDefault();
            save.mutate();
          }}
        >
          <label>
            Title
            <input
              value={title}
              onChange={(e) => setTitle(e.target.value)}
              required
              maxLength={200}
              placeholder="e.g. LLM cost by model"
            />
          </label>
          <label>
            Type
            <select value={type} onChange={(e) => setType(e.target.value as WidgetType)}>
              {TYPES.map((t) => (
                <option key={t.value} value={t.value}>
                  {t.label}
                </option>
              ))}
            </select>
          </label>
          {type === 'markdown' ? (
            <label>
              Text
              <textarea rows={10} value={text} onChange={(e) => setText(e.target.value)} />
            </label>
          ) : (
            <>
              <div className="grid-form">
                <label>
                  View
                  <select
                    value={spec.view}
                    onChange={(e) => {
                      const view = e.target.value as EditorSpec['view'];
                      const measures = measuresOf(view);
                      const measure = measures.includes(spec.measure) ? spec.measure : measures[0]!;
                      patch({
                        view,
                        measure,
                        aggregation:
                          view === SCORES_VIEW
                            ? // A score's count is a measure of its own; its average is what one looks for first.
                              SCORE_AGGREGATIONS.includes(spec.aggregation) && spec.aggregation !== 'count'
                              ? spec.aggregation
                              : 'avg'
                            : measure === 'count'
                              ? 'count'
                              : spec.aggregation,
                        group_by: spec.group_by?.filter(
                          (g) => groupFieldsOf(view).includes(g) || g.startsWith('metadata.'),
                        ),
                      });
                    }}
                  >
                    {EDITOR_VIEWS.map((v) => (
                      <option key={v} value={v}>
                        {VIEW_LABELS[v] ?? v}
                      </option>
                    ))}
                  </select>
                </label>
                {scores && (
                  <label>
                    Score name
                    <input
                      value={spec.score_name ?? ''}
                      list="widget-score-names"
                      required
                      maxLength={128}
                      placeholder="e.g. helpfulness"
                      onChange={(e) => patch({ score_name: e.target.value })}
                    />
                    <datalist id="widget-score-names">
                      {scoreNames.map((n) => (
                        <option key={n.name} value={n.name} />
                      ))}
                    </datalist>
                  </label>
                )}
                <label>
                  Measure
                  <select
                    value={spec.measure}
                    onChange={(e) => {
                      const measure = e.target.value;
                      const id = IDENTITY_MEASURES.includes(measure);
                      patch({
                        measure,
                        aggregation: id
                          ? 'uniq'
                          : measure === 'count'
                            ? 'count'
                            : spec.aggregation === 'count' || spec.aggregation === 'uniq'
                              ? 'avg'
                              : spec.aggregation,
                      });
                    }}
                  >
                    {measuresOf(spec.view).map((m) => (
                      <option key={m} value={m}>
                        {m}
                      </option>
                    ))}
                  </select>
                </label>
                <label>
                  Aggregation
                  <select
                    value={spec.aggregation}
                    onChange={(e) => patch({ aggregation: e.target.value as WidgetSpec['aggregation'] })}
                  >
                    {aggregations.map((a) => (
                      <option key={a} value={a}>
                        {a}
                      </option>
                    ))}
                  </select>
                </label>
                {type === 'timeseries' && (
                  <label>
                    Interval
                    <select
                      value={spec.interval ?? 'auto'}
                      onChange={(e) => patch({ interval: e.target.value as WidgetSpec['interval'] })}
                    >
                      {INTERVALS.map((i) => (
                        <option key={i} value={i}>
                          {i}
                        </option>
                      ))}
                    </select>
                  </label>
                )}
                {(type === 'table' || type === 'bar') && (
                  <label>
                    Limit
                    <input
                      type="number"
                      min={1}
                      max={1000}
                      value={spec.limit ?? ''}
                      placeholder="100"
                      onChange={(e) => patch({ limit: e.target.value ? Number(e.target.value) : undefined })}
                    />
                  </label>
                )}
              </div>
              {type !== 'stat' && (
                <div className="stack" style={{ gap: '0.35rem' }}>
                  <span style={{ fontWeight: 500 }}>Group by (up to 3)</span>
                  <div className="chips">
                    {(spec.group_by ?? []).map((g) => (
                      <span className="chip" key={g}>
                        <span className="chip-text">{g}</span>
                        <button
                          type="button"
                          aria-label={`Remove group ${g}`}
                          onClick={() => patch({ group_by: spec.group_by!.filter((x) => x !== g) })}
                        >
                          ×
                        </button>
                      </span>
                    ))}
                    {(spec.group_by?.length ?? 0) < 3 && (
                      <>
                        <select
                          aria-label="Add a group"
                          value=""
                          onChange={(e) =>
                            e.target.value && patch({ group_by: [...(spec.group_by ?? []), e.target.value] })
                          }
                        >
                          <option value="">+ field…</option>
                          {groupOptions
                            .filter((g) => !spec.group_by?.includes(g))
                            .map((g) => (
                              <option key={g} value={g}>
                                {g}
                              </option>
                            ))}
                        </select>
                        <input
                          aria-label="Metadata key to group by"
                          placeholder="metadata key"
                          value={metaKey}
                          onChange={(e) => setMetaKey(e.target.value)}
                          style={{ width: 130 }}
                        />
                        <button
                          type="button"
                          className="small"
                          disabled={!metaKey.trim()}
                          onClick={() => {
                            patch({ group_by: [...(spec.group_by ?? []), `metadata.${metaKey.trim()}`] });
                            setMetaKey('');
                          }}
                        >
                          Add
                        </button>
                      </>
                    )}
                  </div>
                </div>
              )}
              <div className="stack" style={{ gap: '0.35rem' }}>
                <span style={{ fontWeight: 500 }}>Filters</span>
                <FilterBar
                  projectId={projectId}
                  filters={spec.filters ?? []}
                  onChange={(filters: Predicate[]) =>
                    // The bar offers the trace list's predicates less signal_id and tags: those a widget takes too.
                    patch({ filters: filters as EditorSpec['filters'] })
                  }
                  exclude={['signal_id', 'tags']}
                />
              </div>
            </>
          )}
          {save.error && (
            <p className="form-error">{save.error instanceof ApiError ? save.error.detail : String(save.error)}</p>
          )}
          <div className="row">
            <button className="primary" type="submit" disabled={save.isPending || !title.trim()}>
              {widget ? 'Save widget' : 'Add widget'}
            </button>
            <button type="button" onClick={onClose}>
              Cancel
            </button>
          </div>
        </form>
        <div className="preview" aria-label="Preview" data-testid="widget-preview">
          <div className="row spread">
            <strong>{title || 'Preview'}</strong>
            <span className="muted">{preview.isFetching ? 'updating…' : 'live preview'}</span>
          </div>
          {type === 'markdown' ? (
            <MarkdownText spec={{ text }} />
          ) : preview.error ? (
            <ErrorBox error={preview.error} title="This spec can't be answered" />
          ) : (
            // While a new answer is on its way the previous one stays, drawn as the type it was answered for.
            <WidgetBody type={preview.data?.type ?? type} spec={body} answer={preview.data} />
          )}
        </div>
      </div>
    </Modal>
  );
}
