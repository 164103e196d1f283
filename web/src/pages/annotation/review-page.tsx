import { useCallback, useEffect, useRef, useState } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { api, ApiError, isNotFound } from '../../api';
import { useProject } from '../../project';
import { fmtInt } from '../../format';
import { ErrorBox, Loading, NotFound, useTitle } from '../../components/ui';
import type { AnnotationNext, AnnotationQueue, Page, ScoreConfig } from '../../types';
import { ReviewTraceView } from './trace-io';

type Value = { value?: number; string_value?: string };
type Dataset = { id: string; name: string; version_count: number };

const errorText = (e: unknown) => (e instanceof ApiError ? e.detail : String(e));
const typing = (el: EventTarget | null) =>
  el instanceof HTMLElement && (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT');

/**
 * `/projects/{id}/annotation/{queue_id}`: review a queue with the keyboard alone (docs/annotation.md,
 * "Review keys"): ↑/↓ choose a score field, 1-9 pick its category (boolean: 1 yes, 2 no; numeric: type
 * the number), c comments, Enter submits and moves on, s skips (releases the item).
 */
export function ReviewPage() {
  const { projectId } = useProject();
  const { queueId = '' } = useParams();
  const queue = useQuery({
    queryKey: ['annotation-queue', projectId, queueId],
    queryFn: ({ signal }) =>
      api<AnnotationQueue>(`/annotation-queues/${queueId}`, { signal, query: { project_id: projectId } }),
  });
  useTitle(queue.data ? `Review · ${queue.data.name}` : 'Review');
  const allConfigs = useQuery({
    queryKey: ['score-configs', projectId],
    queryFn: ({ signal }) =>
      api<Page<ScoreConfig>>('/score-configs', { signal, query: { project_id: projectId, limit: 200 } }),
  });
  const configs = (queue.data?.score_config_ids ?? [])
    .map((id) => allConfigs.data?.data.find((c) => c.id === id))
    .filter((c): c is ScoreConfig => c !== undefined);

  const [current, setCurrent] = useState<AnnotationNext | null | undefined>(undefined);
  const [skipped, setSkipped] = useState<string[]>([]);
  const [values, setValues] = useState<Record<string, Value>>({});
  const [numbers, setNumbers] = useState<Record<string, string>>({});
  const [comment, setComment] = useState('');
  const [active, setActive] = useState(0);
  const [notice, setNotice] = useState('');
  const commentBox = useRef<HTMLTextAreaElement>(null);
  const numberInputs = useRef<Record<string, HTMLInputElement | null>>({});

  const claim = useMutation({
    mutationFn: (exclude: string[]) =>
      api<AnnotationNext | undefined>(`/annotation-queues/${queueId}/next`, {
        method: 'POST',
        body: { project_id: projectId, exclude_item_ids: exclude },
      }),
    onSuccess: (next) => {
      setCurrent(next ?? null);
      setValues({});
      setNumbers({});
      setComment('');
      setActive(0);
    },
  });
  const claimNext = claim.mutate;
  useEffect(() => claimNext([]), [claimNext, queueId]);

  const complete = useMutation({
    mutationFn: (item: string) => {
      const scores = configs.flatMap((c) => {
        if (c.data_type === 'numeric') {
          const text = (numbers[c.id] ?? '').trim();
          return text === '' ? [] : [{ config_id: c.id, value: Number(text) }];
        }
        const v = values[c.id];
        return v ? [{ config_id: c.id, ...v }] : [];
      });
      return api(`/annotation-queues/${queueId}/items/${item}/complete`, {
        method: 'POST',
        body: { project_id: projectId, scores, ...(comment.trim() ? { comment } : {}) },
      });
    },
    onSuccess: () => {
      setNotice('Saved');
      void queue.refetch();
      claimNext(skipped);
    },
  });
  const release = useMutation({
    mutationFn: (item: string) =>
      api(`/annotation-queues/${queueId}/items/${item}/release`, { method: 'POST', body: { project_id: projectId } }),
    onSuccess: (_, item) => {
      const next = [...skipped, item];
      setSkipped(next);
      setNotice('Skipped');
      claimNext(next);
    },
  });

  const item = current?.item;
  const submit = useCallback(() => {
    if (item && !complete.isPending) complete.mutate(item.id);
  }, [item, complete]);
  const skip = useCallback(() => {
    if (item && !release.isPending) release.mutate(item.id);
  }, [item, release]);

  const pick = useCallback(
    (config: ScoreConfig, n: number) => {
      if (config.data_type === 'categorical') {
        const category = config.categories?.[n - 1];
        if (category) setValues((v) => ({ ...v, [config.id]: { string_value: category.label } }));
      } else if (config.data_type === 'boolean' && (n === 1 || n === 2)) {
        setValues((v) => ({ ...v, [config.id]: { value: n === 1 ? 1 : 0 } }));
      }
    },
    [setValues],
  );

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.ctrlKey || e.metaKey || e.altKey || !item) return;
      if (typing(e.target)) {
        const el = e.target as HTMLElement;
        if (e.key === 'Escape') el.blur();
        else if (e.key === 'Enter' && !e.shiftKey && el.dataset.reviewField !== undefined) {
          e.preventDefault();
          submit();
        }
        return;
      }
      const config = configs[active];
      if (/^[1-9]$/.test(e.key) && config) {
        e.preventDefault();
        if (config.data_type === 'numeric') {
          setNumbers((n) => ({ ...n, [config.id]: e.key }));
          numberInputs.current[config.id]?.focus();
        } else pick(config, Number(e.key));
      } else if (e.key === 'ArrowDown' || e.key === 'j') {
        e.preventDefault();
        setActive((a) => Math.min(configs.length - 1, a + 1));
      } else if (e.key === 'ArrowUp' || e.key === 'k') {
        e.preventDefault();
        setActive((a) => Math.max(0, a - 1));
      } else if (e.key === 'Enter') {
        e.preventDefault();
        submit();
      } else if (e.key === 's') {
        e.preventDefault();
        skip();
      } else if (e.key === 'c') {
        e.preventDefault();
        commentBox.current?.focus();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [item, configs, active, submit, skip, pick]);

  if (queue.isPending || allConfigs.isPending) return <Loading rows={6} />;
  if (queue.error) {
    if (isNotFound(queue.error))
      return (
        <NotFound what="annotation queue" back={{ to: `/projects/${projectId}/annotation`, label: 'Back to queues' }} />
      );
    return <ErrorBox error={queue.error} />;
  }
  const q = queue.data;
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <div className="crumbs">
            <Link to={`/projects/${projectId}/annotation`}>Annotation</Link> /
          </div>
          <h1>{q.name}</h1>
          {q.description && <div className="muted">{q.description}</div>}
        </div>
        <div className="row" data-testid="progress" aria-label="Progress">
          <strong>Done {fmtInt(q.completed)}</strong>
          <span className="muted">·</span>
          <strong>Left {fmtInt(q.pending)}</strong>
        </div>
      </div>
      <div className="muted">
        Keys: ↑/↓ choose a field · 1-9 pick a category (yes/no: 1/2; numbers: type them) · c comment · Enter submit · s
        skip
      </div>
      {claim.error && <ErrorBox error={claim.error} title="No item could be claimed" />}
      {current === undefined ? (
        <Loading rows={4} label="Claiming the next item…" />
      ) : current === null ? (
        <div className="card" data-testid="queue-done">
          Nothing left for you in this queue{skipped.length ? ` (${skipped.length} skipped this sitting)` : ''}.
        </div>
      ) : (
        <div className="trace-layout" data-testid="review-item" data-item-id={current.item.id}>
          <div className="card stack">
            <div className="row spread">
              <span className="mono" data-testid="review-trace-id">
                {current.item.trace_id}
                {current.item.span_id ? ` · span ${current.item.span_id}` : ''}
              </span>
              <Link to={`/projects/${projectId}/traces/${encodeURIComponent(current.item.trace_id)}`}>
                Open trace →
              </Link>
            </div>
            {current.trace ? (
              <ReviewTraceView trace={current.trace} />
            ) : (
              <p className="muted">The trace is not stored (yet, or any more).</p>
            )}
          </div>
          <div className="stack">
            <form
              className="card stack"
              aria-label="Scores"
              onSubmit={(e) => {
                e.preventDefault();
                submit();
              }}
            >
              {configs.map((c, i) => (
                <fieldset
                  key={c.id}
                  className="stack"
                  style={{ gap: '0.3rem', outline: i === active ? '2px solid var(--accent)' : undefined }}
                  data-testid={`score-${c.name}`}
                  onClick={() => setActive(i)}
                >
                  <legend>
                    {c.name} <span className="muted">{c.data_type}</span>
                  </legend>
                  {c.data_type === 'categorical' && (
                    <div className="row">
                      {(c.categories ?? []).map((cat, n) => (
                        <button
                          type="button"
                          key={cat.label}
                          className={values[c.id]?.string_value === cat.label ? 'primary small' : 'small'}
                          aria-pressed={values[c.id]?.string_value === cat.label}
                          onClick={() => pick(c, n + 1)}
                        >
                          {n < 9 ? `${n + 1} ` : ''}
                          {cat.label}
                        </button>
                      ))}
                    </div>
                  )}
                  {c.data_type === 'boolean' && (
                    <label className="row">
                      <input
                        type="checkbox"
                        checked={values[c.id]?.value === 1}
                        onChange={(e) => setValues((v) => ({ ...v, [c.id]: { value: e.target.checked ? 1 : 0 } }))}
                      />
                      {values[c.id] === undefined ? 'not set (1 yes, 2 no)' : values[c.id]?.value === 1 ? 'yes' : 'no'}
                    </label>
                  )}
                  {c.data_type === 'numeric' && (
                    <input
                      type="number"
                      step="any"
                      aria-label={c.name}
                      data-review-field=""
                      ref={(el) => {
                        numberInputs.current[c.id] = el;
                      }}
                      min={c.min_value ?? undefined}
                      max={c.max_value ?? undefined}
                      placeholder={
                        c.min_value != null || c.max_value != null ? `${c.min_value ?? ''} – ${c.max_value ?? ''}` : ''
                      }
                      value={numbers[c.id] ?? ''}
                      onChange={(e) => setNumbers((n) => ({ ...n, [c.id]: e.target.value }))}
                    />
                  )}
                </fieldset>
              ))}
              <label>
                Comment
                <textarea
                  ref={commentBox}
                  aria-label="Comment"
                  data-review-field=""
                  rows={2}
                  maxLength={4096}
                  value={comment}
                  onChange={(e) => setComment(e.target.value)}
                />
              </label>
              {complete.error && <p className="form-error">{errorText(complete.error)}</p>}
              <div className="row">
                <button className="primary" type="submit" disabled={complete.isPending}>
                  Submit (Enter)
                </button>
                <button type="button" onClick={skip} disabled={release.isPending}>
                  Skip (s)
                </button>
                {notice && (
                  <span className="muted" role="status">
                    {notice}
                  </span>
                )}
              </div>
            </form>
            <AddToDataset key={current.item.id} queueId={queueId} next={current} />
          </div>
        </div>
      )}
    </div>
  );
}

/** The item's trace as a test case of a dataset's next version: input copied, output editable as expected. */
function AddToDataset({ queueId, next }: { queueId: string; next: AnnotationNext }) {
  const { projectId } = useProject();
  const datasets = useQuery({
    queryKey: ['datasets', projectId],
    queryFn: ({ signal }) => api<Page<Dataset>>('/datasets', { signal, query: { project_id: projectId, limit: 200 } }),
  });
  const [datasetId, setDatasetId] = useState('');
  const [expected, setExpected] = useState(() => pretty(next.trace?.output ?? ''));
  const add = useMutation({
    mutationFn: () =>
      api<{ version_number: number; test_case_count: number }>(
        `/annotation-queues/${queueId}/items/${next.item.id}/add-to-dataset`,
        { method: 'POST', body: { project_id: projectId, dataset_id: datasetId, expected: asJson(expected) } },
      ),
  });
  const list = datasets.data?.data ?? [];
  return (
    <details className="card" data-testid="add-to-dataset">
      <summary>Add to dataset</summary>
      <div className="stack" style={{ marginTop: '0.6rem' }}>
        <label>
          Dataset
          <select value={datasetId} onChange={(e) => setDatasetId(e.target.value)}>
            <option value="">Choose a dataset</option>
            {list.map((d) => (
              <option key={d.id} value={d.id}>
                {d.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Expected output
          <textarea rows={5} value={expected} onChange={(e) => setExpected(e.target.value)} />
        </label>
        <div className="row">
          <button type="button" disabled={!datasetId || add.isPending} onClick={() => add.mutate()}>
            Add as a new version
          </button>
          {add.data && (
            <span role="status" data-testid="dataset-added">
              Added: version {add.data.version_number} ({fmtInt(add.data.test_case_count)} cases)
            </span>
          )}
          {add.error && <span className="form-error">{errorText(add.error)}</span>}
        </div>
      </div>
    </details>
  );
}

function pretty(text: string): string {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  } catch {
    return text;
  }
}

/** The edited expected output: JSON when it reads as JSON (an object, array, number), else the text itself. */
function asJson(text: string): unknown {
  const trimmed = text.trim();
  if (/^[[{]/.test(trimmed) || /^-?\d/.test(trimmed)) {
    try {
      return JSON.parse(trimmed);
    } catch {
      return text;
    }
  }
  return text;
}
