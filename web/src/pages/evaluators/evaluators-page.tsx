import { useState } from 'react';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, Route, Routes, useNavigate, useParams, useSearchParams } from 'react-router';
import { api, ApiError, isNotFound } from '../../api';
import { useProject } from '../../project';
import { fmtCost, fmtInt, fmtNumber } from '../../format';
import { describePredicate } from '../../filters';
import { Badge, Empty, ErrorBox, Loading, NotFound, Pager, Time, useTitle } from '../../components/ui';
import type {
  Evaluator,
  EvaluatorAgreement,
  EvaluatorBackfill,
  EvaluatorDryRun,
  EvaluatorExecution,
  EvaluatorExecutionRow,
  Page,
  Predicate,
} from '../../types';
import { draftFromEvaluator, draftFromTemplate, EvaluatorForm, TEMPLATES } from './evaluator-form';

const LIMIT = 50;

function errorText(error: unknown): string {
  return error instanceof ApiError ? error.detail : error instanceof Error ? error.message : String(error);
}

/** `/projects/{project_id}/evaluators/...`: the list, a new one (from a template), one evaluator. */
export function EvaluatorsRoutes() {
  return (
    <Routes>
      <Route index element={<EvaluatorList />} />
      <Route path="new" element={<NewEvaluator />} />
      <Route path=":evaluatorId" element={<EvaluatorPage />} />
      <Route path="*" element={<NotFound />} />
    </Routes>
  );
}

function StateBadge({ e }: { e: Evaluator }) {
  if (e.enabled) return <Badge tone="ok">enabled</Badge>;
  if (e.paused_reason)
    return (
      <Badge tone="error" title={e.paused_reason}>
        paused
      </Badge>
    );
  return <Badge>disabled</Badge>;
}

function scorerLabel(e: Evaluator): string {
  const s = e.scorer as { type: string; check?: string };
  return s.type === 'llm_judge' ? 'LLM judge' : `check: ${s.check}`;
}

function EvaluatorList() {
  const { projectId, project, canWrite } = useProject();
  useTitle(`Evaluators · ${project.name}`);
  const [params, setParams] = useSearchParams();
  const navigate = useNavigate();
  const page = Math.max(0, Number(params.get('page')) || 0);
  const list = useQuery({
    queryKey: ['evaluators', projectId, page],
    placeholderData: keepPreviousData,
    queryFn: () => api<Page<Evaluator>>('/evaluators', { query: { project_id: projectId, limit: LIMIT, page } }),
  });
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Evaluators</h1>
          <div className="muted">
            Online evaluators score production traces as they arrive: an LLM judge or a check, written as scores.
          </div>
        </div>
        {canWrite && (
          <details className="menu template-menu">
            <summary className="button primary">New evaluator</summary>
            <div className="menu-panel card stack" role="menu" aria-label="Templates">
              {TEMPLATES.map((t) => (
                <Link
                  key={t.id}
                  role="menuitem"
                  className="template"
                  to={`/projects/${projectId}/evaluators/new?template=${t.id}`}
                >
                  <strong>{t.label}</strong>
                  <span className="muted">{t.description}</span>
                </Link>
              ))}
              <Link role="menuitem" className="template" to={`/projects/${projectId}/evaluators/new`}>
                <strong>Blank</strong>
                <span className="muted">Start from an empty form.</span>
              </Link>
            </div>
          </details>
        )}
      </div>
      {list.isPending ? (
        <Loading rows={4} />
      ) : list.error ? (
        <ErrorBox error={list.error} />
      ) : list.data.data.length === 0 ? (
        <Empty title="No evaluators yet">
          Start from a template: a helpfulness judge (needs an LLM connection, Settings → LLM connections), a JSON
          validity check or a latency check.
        </Empty>
      ) : (
        <>
          <div className="table-wrap">
            <table className="data" data-testid="evaluator-table">
              <thead>
                <tr>
                  <th>Evaluator</th>
                  <th>State</th>
                  <th>Scorer</th>
                  <th>Score</th>
                  <th className="num">Sampling</th>
                  <th className="num">24 h: runs</th>
                  <th className="num">errors</th>
                  <th className="num hide-phone">skipped</th>
                  <th className="num hide-phone">cost</th>
                  <th className="num hide-phone">Version</th>
                </tr>
              </thead>
              <tbody>
                {list.data.data.map((e) => (
                  <tr
                    key={e.id}
                    data-testid="evaluator-row"
                    className="clickable"
                    onClick={() => navigate(`/projects/${projectId}/evaluators/${e.id}`)}
                  >
                    <td>
                      <Link to={`/projects/${projectId}/evaluators/${e.id}`} onClick={(ev) => ev.stopPropagation()}>
                        {e.name}
                      </Link>
                      {e.paused_reason && (
                        <div className="muted" data-testid="paused-reason">
                          {e.paused_reason}
                        </div>
                      )}
                    </td>
                    <td>
                      <StateBadge e={e} />
                    </td>
                    <td>{scorerLabel(e)}</td>
                    <td className="mono">{e.score_name}</td>
                    <td className="num">{fmtNumber(e.sampling_rate * 100)}%</td>
                    <td className="num">{fmtInt(e.stats.last_24h.executions)}</td>
                    <td className="num">
                      {e.stats.last_24h.errors ? (
                        <span style={{ color: 'var(--error)' }}>{fmtInt(e.stats.last_24h.errors)}</span>
                      ) : (
                        '0'
                      )}
                    </td>
                    <td className="num hide-phone">{fmtInt(e.stats.last_24h.skipped)}</td>
                    <td className="num hide-phone">{fmtCost(e.stats.last_24h.cost)}</td>
                    <td className="num hide-phone">v{e.version}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager
            page={page}
            limit={LIMIT}
            total={list.data.meta.total}
            onPage={(p) => setParams(p ? { page: String(p) } : {})}
          />
        </>
      )}
    </div>
  );
}

function NewEvaluator() {
  const { projectId } = useProject();
  useTitle('New evaluator');
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const client = useQueryClient();
  const template = TEMPLATES.find((t) => t.id === params.get('template'));
  const create = useMutation({
    mutationFn: (body: Record<string, unknown>) =>
      api<Evaluator>('/evaluators', { method: 'POST', body: { project_id: projectId, ...body } }),
    onSuccess: async (e) => {
      await client.invalidateQueries({ queryKey: ['evaluators', projectId] });
      navigate(`/projects/${projectId}/evaluators/${e.id}`);
    },
  });
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <div className="crumbs">
            <Link to={`/projects/${projectId}/evaluators`}>Evaluators</Link> /
          </div>
          <h1>New evaluator{template ? `: ${template.label}` : ''}</h1>
          {template && <div className="muted">{template.description}</div>}
        </div>
      </div>
      <EvaluatorForm
        key={template?.id ?? 'blank'}
        initial={draftFromTemplate(template?.id ?? null)}
        submitLabel="Create evaluator"
        pending={create.isPending}
        error={create.error}
        onSubmit={(body) => create.mutate(body)}
      />
    </div>
  );
}

function Stats({ e }: { e: Evaluator }) {
  const rows: [string, Evaluator['stats']['last_24h']][] = [
    ['Last 24 h', e.stats.last_24h],
    ['All time', e.stats.all_time],
  ];
  return (
    <table className="data compact" data-testid="evaluator-stats">
      <thead>
        <tr>
          <th />
          <th className="num">Executions</th>
          <th className="num">Completed</th>
          <th className="num">Errors</th>
          <th className="num">Skipped</th>
          <th className="num">Tokens in / out</th>
          <th className="num">Judge cost</th>
        </tr>
      </thead>
      <tbody>
        {rows.map(([label, s]) => (
          <tr key={label}>
            <td>{label}</td>
            <td className="num">{fmtInt(s.executions)}</td>
            <td className="num">{fmtInt(s.completed)}</td>
            <td className="num">{fmtInt(s.errors)}</td>
            <td className="num">{fmtInt(s.skipped)}</td>
            <td className="num">
              {fmtInt(s.input_tokens)} / {fmtInt(s.output_tokens)}
            </td>
            <td className="num">{fmtCost(s.cost)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A dry run: what the scorer would give one trace now, with the rendered prompt; nothing is stored. */
function DryRun({ evaluator }: { evaluator: Evaluator }) {
  const { projectId, canWrite } = useProject();
  const [traceId, setTraceId] = useState('');
  const [spanId, setSpanId] = useState('');
  const run = useMutation({
    mutationFn: () =>
      api<EvaluatorDryRun>(`/evaluators/${encodeURIComponent(evaluator.id)}/dry-run`, {
        method: 'POST',
        body: { project_id: projectId, trace_id: traceId.trim(), ...(spanId.trim() ? { span_id: spanId.trim() } : {}) },
      }),
  });
  const r = run.data;
  return (
    <section className="card stack" aria-label="Dry run">
      <h3>Dry run</h3>
      <p className="muted">Score one trace now and see the prompt the judge gets. Nothing is stored.</p>
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          run.mutate();
        }}
      >
        <input
          aria-label="Trace ID"
          className="grow mono"
          placeholder="trace ID"
          value={traceId}
          onChange={(e) => setTraceId(e.target.value)}
          required
        />
        {evaluator.target === 'span' && (
          <input
            aria-label="Span ID"
            className="mono"
            placeholder="span ID (optional)"
            value={spanId}
            onChange={(e) => setSpanId(e.target.value)}
          />
        )}
        <button type="submit" className="primary" disabled={!canWrite || run.isPending || !traceId.trim()}>
          {run.isPending ? 'Running…' : 'Dry run'}
        </button>
      </form>
      {run.error && <p className="form-error">{errorText(run.error)}</p>}
      {r && (
        <div className="stack" data-testid="dry-run-result">
          <dl className="kv">
            <dt>Would score</dt>
            <dd data-testid="dry-run-score">
              {r.score ? (
                <strong>{r.score.string_value ?? fmtNumber(r.score.value)}</strong>
              ) : (
                <span style={{ color: 'var(--error)' }}>{r.error ?? 'no score'}</span>
              )}{' '}
              <span className="muted">
                as {r.score_name} (v{r.version})
              </span>
            </dd>
            {r.score?.comment && (
              <>
                <dt>Reasoning</dt>
                <dd className="score-comment" data-testid="dry-run-reasoning">
                  {r.score.comment}
                </dd>
              </>
            )}
            {r.judge_model && (
              <>
                <dt>Judge</dt>
                <dd>
                  {r.judge_model} · {fmtInt(r.input_tokens)} in / {fmtInt(r.output_tokens)} out
                </dd>
              </>
            )}
            {r.missing_variables.length > 0 && (
              <>
                <dt>Found nothing for</dt>
                <dd>{r.missing_variables.join(', ')}</dd>
              </>
            )}
          </dl>
          {r.rendered_prompt !== null && (
            <details open>
              <summary>Rendered prompt{r.truncated ? ' (cut to its bound)' : ''}</summary>
              <pre className="payload" data-testid="rendered-prompt">
                {r.rendered_prompt}
              </pre>
            </details>
          )}
        </div>
      )}
    </section>
  );
}

/** A `datetime-local` value (the browser's zone, as the input reads it) `days` ago. */
function isoDaysAgo(days: number): string {
  const d = new Date(Date.now() - days * 86_400_000);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

/** A backfill: score a past window's traces, with progress polled until it ends. */
function Backfill({ evaluator }: { evaluator: Evaluator }) {
  const { projectId, canWrite } = useProject();
  const client = useQueryClient();
  const [from, setFrom] = useState(isoDaysAgo(1));
  const [to, setTo] = useState(isoDaysAgo(0));
  const [backfillId, setBackfillId] = useState<string | null>(null);
  const start = useMutation({
    mutationFn: () =>
      api<EvaluatorBackfill>(`/evaluators/${encodeURIComponent(evaluator.id)}/backfill`, {
        method: 'POST',
        body: {
          project_id: projectId,
          start_time: new Date(from).toISOString(),
          end_time: new Date(to).toISOString(),
        },
      }),
    onSuccess: (b) => {
      client.setQueryData(['backfill', projectId, evaluator.id, b.backfill_id], b);
      setBackfillId(b.backfill_id);
    },
  });
  const progress = useQuery({
    queryKey: ['backfill', projectId, evaluator.id, backfillId],
    enabled: backfillId !== null,
    queryFn: () =>
      api<EvaluatorBackfill>(
        `/evaluators/${encodeURIComponent(evaluator.id)}/backfills/${encodeURIComponent(backfillId!)}`,
        { query: { project_id: projectId } },
      ),
    refetchInterval: (q) => {
      const status = q.state.data?.status;
      return status === undefined || status === 'pending' || status === 'running' ? 1500 : false;
    },
  });
  const b = progress.data;
  const share = b && b.total > 0 ? Math.min(1, b.done / b.total) : b && b.status === 'completed' ? 1 : 0;
  return (
    <section className="card stack" aria-label="Backfill">
      <h3>Backfill</h3>
      <p className="muted">Score the traces of a past window (each once: a re-run replaces the evaluator's score).</p>
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          start.mutate();
        }}
      >
        <label>
          From
          <input type="datetime-local" value={from} onChange={(e) => setFrom(e.target.value)} required />
        </label>
        <label>
          To
          <input type="datetime-local" value={to} onChange={(e) => setTo(e.target.value)} required />
        </label>
        <button
          type="submit"
          className="primary"
          style={{ alignSelf: 'end' }}
          disabled={
            !canWrite || start.isPending || (b !== undefined && (b.status === 'pending' || b.status === 'running'))
          }
        >
          Start backfill
        </button>
      </form>
      {start.error && <p className="form-error">{errorText(start.error)}</p>}
      {progress.error && <p className="form-error">{errorText(progress.error)}</p>}
      {b && (
        <div className="row" data-testid="backfill-progress">
          <div
            className="progress grow"
            role="progressbar"
            aria-label="Backfill progress"
            aria-valuemin={0}
            aria-valuemax={b.total}
            aria-valuenow={b.done}
          >
            <span style={{ width: `${share * 100}%` }} />
          </div>
          <span>
            {fmtInt(b.done)} / {fmtInt(b.total)} ·{' '}
            <Badge tone={b.status === 'completed' ? 'ok' : b.status === 'cancelled' ? 'warn' : 'info'}>
              {b.status}
            </Badge>
          </span>
          {b.truncated && (
            <span className="muted">The window held more traces than one backfill takes: narrow it for the rest.</span>
          )}
        </div>
      )}
    </section>
  );
}

const EXECUTION_STATUSES = ['', 'pending', 'running', 'completed', 'error', 'skipped'] as const;

function statusTone(s: EvaluatorExecution['status']): 'ok' | 'error' | 'warn' | 'info' | 'neutral' {
  return s === 'completed'
    ? 'ok'
    : s === 'error'
      ? 'error'
      : s === 'skipped'
        ? 'warn'
        : s === 'running'
          ? 'info'
          : 'neutral';
}

/** A score side of a disagreement: the label (categorical, boolean) or the value. */
function sideText(side: EvaluatorAgreement['disagreements'][number]['evaluator']): string {
  return side.label ?? fmtNumber(side.value);
}

/**
 * How the judge agrees with people (GET /evaluators/{id}/agreement, docs/evaluators.md "Agreement
 * with people"): the last 30 days' evaluator scores beside the annotation scores of the same name.
 */
function Agreement({ evaluator }: { evaluator: Evaluator }) {
  const { projectId } = useProject();
  const agreement = useQuery({
    queryKey: ['evaluator-agreement', projectId, evaluator.id],
    queryFn: () =>
      api<EvaluatorAgreement>(`/evaluators/${encodeURIComponent(evaluator.id)}/agreement`, {
        query: { project_id: projectId },
      }),
  });
  const a = agreement.data;
  return (
    <section className="card stack" aria-label="Agreement with people" data-testid="evaluator-agreement">
      <h3>Agreement with people</h3>
      {agreement.isPending ? (
        <Loading />
      ) : agreement.error ? (
        <ErrorBox error={agreement.error} />
      ) : !a || a.pairs === 0 ? (
        <Empty title="Nothing to compare yet">
          Annotate traces with the score “{evaluator.score_name}” and the judge’s scores of the last 30 days are
          compared with yours here.
        </Empty>
      ) : (
        <>
          <dl className="row" data-testid="agreement-summary">
            <div>
              <dt>Pairs</dt>
              <dd data-testid="agreement-pairs">{fmtInt(a.pairs)}</dd>
            </div>
            {a.data_type === 'numeric' ? (
              <>
                <div>
                  <dt>Correlation</dt>
                  <dd data-testid="agreement-correlation">{fmtNumber(a.correlation)}</dd>
                </div>
                <div>
                  <dt>Mean difference (judge − people)</dt>
                  <dd data-testid="agreement-mean-difference">{fmtNumber(a.mean_difference)}</dd>
                </div>
              </>
            ) : (
              <>
                <div>
                  <dt>Agreement</dt>
                  <dd data-testid="agreement-share">
                    {a.agreement === null ? '–' : `${(a.agreement * 100).toFixed(0)}%`}
                  </dd>
                </div>
                <div>
                  <dt>Cohen’s kappa</dt>
                  <dd data-testid="agreement-kappa">{fmtNumber(a.kappa)}</dd>
                </div>
              </>
            )}
          </dl>
          {a.truncated && <p className="muted">More than 10,000 pairs: the first ones are measured.</p>}
          {a.disagreements.length > 0 && (
            <table className="data compact" data-testid="agreement-disagreements">
              <thead>
                <tr>
                  <th>Trace</th>
                  <th>Judge</th>
                  <th>People</th>
                </tr>
              </thead>
              <tbody>
                {a.disagreements.map((d) => (
                  <tr key={`${d.trace_id}/${d.span_id ?? ''}`}>
                    <td>
                      <Link
                        to={`/projects/${projectId}/traces/${encodeURIComponent(d.trace_id)}${d.span_id ? `?span=${encodeURIComponent(d.span_id)}` : ''}`}
                      >
                        {d.trace_id}
                      </Link>
                      {d.span_id && <span className="muted"> · {d.span_id}</span>}
                    </td>
                    <td>{sideText(d.evaluator)}</td>
                    <td>{sideText(d.annotation)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </section>
  );
}

function Executions({ evaluator }: { evaluator: Evaluator }) {
  const { projectId } = useProject();
  const [status, setStatus] = useState<string>('');
  const [page, setPage] = useState(0);
  const executions = useQuery({
    queryKey: ['evaluator-executions', projectId, evaluator.id, status, page],
    placeholderData: keepPreviousData,
    refetchInterval: 10_000,
    queryFn: () =>
      api<Page<EvaluatorExecutionRow>>(`/evaluators/${encodeURIComponent(evaluator.id)}/executions`, {
        query: { project_id: projectId, status: status || undefined, limit: LIMIT, page },
      }),
  });
  return (
    <section className="card stack" aria-label="Executions">
      <div className="row spread">
        <h3>Executions</h3>
        <label className="inline">
          Status
          <select
            aria-label="Execution status"
            value={status}
            onChange={(e) => {
              setStatus(e.target.value);
              setPage(0);
            }}
          >
            {EXECUTION_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s || 'any'}
              </option>
            ))}
          </select>
        </label>
      </div>
      {executions.isPending ? (
        <Loading />
      ) : executions.error ? (
        <ErrorBox error={executions.error} />
      ) : executions.data.data.length === 0 ? (
        <Empty title="No executions">Traces that match are scored after the delay; a backfill scores past ones.</Empty>
      ) : (
        <>
          <div className="table-wrap">
            <table className="data compact" data-testid="execution-table">
              <thead>
                <tr>
                  <th>Created</th>
                  <th>Trace</th>
                  <th>Status</th>
                  <th>Error</th>
                  <th className="num">Attempts</th>
                  <th className="hide-phone">Judge</th>
                  <th className="num">Tokens in / out</th>
                  <th className="num">Cost</th>
                  <th className="hide-phone">Finished</th>
                </tr>
              </thead>
              <tbody>
                {executions.data.data.map((x) => (
                  <tr key={x.execution_id} data-testid="execution-row">
                    <td className="nowrap">
                      <Time iso={x.created_at} short />
                    </td>
                    <td className="mono ellipsis" style={{ maxWidth: 220 }}>
                      <Link
                        to={`/projects/${projectId}/traces/${encodeURIComponent(x.trace_id)}${x.span_id ? `?span=${encodeURIComponent(x.span_id)}` : ''}`}
                      >
                        {x.trace_id}
                      </Link>
                    </td>
                    <td>
                      <Badge tone={statusTone(x.status)}>{x.status}</Badge>
                    </td>
                    <td>{x.error ?? <span className="muted">–</span>}</td>
                    <td className="num">{fmtInt(x.attempts)}</td>
                    <td className="hide-phone">
                      {x.judge_trace_id ? (
                        <Link
                          to={`/projects/${projectId}/traces/${encodeURIComponent(x.judge_trace_id)}`}
                          title="The judge's own call, a trace in environment sightline-evaluator"
                        >
                          {x.judge_model ?? 'judge call'}
                        </Link>
                      ) : (
                        (x.judge_model ?? <span className="muted">–</span>)
                      )}
                    </td>
                    <td className="num">
                      {fmtInt(x.input_tokens)} / {fmtInt(x.output_tokens)}
                    </td>
                    <td className="num">{fmtCost(x.cost)}</td>
                    <td className="hide-phone nowrap">
                      <Time iso={x.finished_at} short />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager page={page} limit={LIMIT} total={executions.data.meta.total} onPage={setPage} />
        </>
      )}
    </section>
  );
}

function EvaluatorPage() {
  const { projectId, canWrite } = useProject();
  const { evaluatorId = '' } = useParams();
  const navigate = useNavigate();
  const client = useQueryClient();
  const [editing, setEditing] = useState(false);
  const key = ['evaluator', projectId, evaluatorId];
  const evaluator = useQuery({
    queryKey: key,
    queryFn: () =>
      api<Evaluator>(`/evaluators/${encodeURIComponent(evaluatorId)}`, { query: { project_id: projectId } }),
  });
  useTitle(evaluator.data ? `${evaluator.data.name} · evaluator` : 'Evaluator');
  const update = useMutation({
    mutationFn: (body: Record<string, unknown>) =>
      api<Evaluator>(`/evaluators/${encodeURIComponent(evaluatorId)}`, {
        method: 'PATCH',
        body: { project_id: projectId, ...body },
      }),
    onSuccess: (e) => {
      client.setQueryData(key, e);
      void client.invalidateQueries({ queryKey: ['evaluators', projectId] });
      setEditing(false);
    },
  });
  const remove = useMutation({
    mutationFn: () =>
      api(`/evaluators/${encodeURIComponent(evaluatorId)}`, { method: 'DELETE', query: { project_id: projectId } }),
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: ['evaluators', projectId] });
      navigate(`/projects/${projectId}/evaluators`);
    },
  });
  if (evaluator.isPending) return <Loading rows={6} />;
  if (evaluator.error) {
    if (isNotFound(evaluator.error))
      return (
        <NotFound what="evaluator" back={{ to: `/projects/${projectId}/evaluators`, label: 'Back to evaluators' }} />
      );
    return <ErrorBox error={evaluator.error} />;
  }
  const e = evaluator.data;
  const scoresLink = `/projects/${projectId}/traces?range=7d&filters=${encodeURIComponent(
    JSON.stringify([{ field: 'score', key: e.score_name, op: 'is_set' }]),
  )}`;
  return (
    <div className="page">
      <div className="page-head">
        <div style={{ minWidth: 0 }}>
          <div className="crumbs">
            <Link to={`/projects/${projectId}/evaluators`}>Evaluators</Link> /
          </div>
          <h1 style={{ overflowWrap: 'anywhere' }}>
            {e.name} <StateBadge e={e} />
          </h1>
          <div className="muted">
            {scorerLabel(e)} · scores <span className="mono">{e.score_name}</span> · {e.target}s ·{' '}
            {fmtNumber(e.sampling_rate * 100)}% sampled · after {fmtInt(e.delay_seconds)} s · v{e.version}
          </div>
          {e.filters.length > 0 && (
            <div className="chips" style={{ marginTop: '0.4rem' }}>
              {(e.filters as Predicate[]).map((p, i) => (
                <span className="chip" key={i}>
                  <span className="chip-text">{describePredicate(p)}</span>
                </span>
              ))}
            </div>
          )}
        </div>
        <div className="row">
          <Link className="button" to={scoresLink}>
            Scored traces
          </Link>
          {canWrite && (
            <>
              <button onClick={() => update.mutate({ enabled: !e.enabled })} disabled={update.isPending}>
                {e.enabled ? 'Disable' : 'Enable'}
              </button>
              <button onClick={() => setEditing(!editing)}>{editing ? 'Close editor' : 'Edit'}</button>
              <button
                className="danger"
                onClick={() => confirm(`Delete the evaluator “${e.name}”? Its pending work stops.`) && remove.mutate()}
              >
                Delete
              </button>
            </>
          )}
        </div>
      </div>
      {e.paused_reason && (
        <div className="error-box" role="alert" data-testid="paused-reason">
          <strong>Paused</strong>
          <div>{e.paused_reason}</div>
        </div>
      )}
      {(update.error || remove.error) && !editing && (
        <p className="form-error">{errorText(update.error ?? remove.error)}</p>
      )}
      {editing && (
        <EvaluatorForm
          initial={draftFromEvaluator(e)}
          submitLabel="Save evaluator"
          pending={update.isPending}
          error={update.error}
          onSubmit={(body) => update.mutate(body)}
        />
      )}
      <section className="card">
        <Stats e={e} />
      </section>
      <DryRun evaluator={e} />
      <Backfill evaluator={e} />
      <Agreement evaluator={e} />
      <Executions evaluator={e} />
      <p className="muted">
        Created <Time iso={e.created_at} /> · changed <Time iso={e.updated_at} />
      </p>
    </div>
  );
}
