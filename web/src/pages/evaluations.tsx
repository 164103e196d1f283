import { useState } from 'react';
import { keepPreviousData, useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { Link, Navigate, Route, Routes, useNavigate, useParams, useSearchParams } from 'react-router';
import { api, isNotFound } from '../api';
import { useProject } from '../project';
import { fmtInt, fmtNumber } from '../format';
import { Badge, Empty, ErrorBox, Loading, NotFound, Pager, Time, useTitle } from '../components/ui';
import type { Evaluation, MeanDelta, Page, RunComparison, RunSummary, ScoreEntry } from '../types';

const LIMIT = 50;

function runTone(status: string): 'ok' | 'error' | 'warn' | 'info' | 'neutral' {
  if (status === 'completed') return 'ok';
  if (status === 'failed') return 'error';
  if (status === 'completed_with_errors' || status === 'incomplete') return 'warn';
  if (status === 'running') return 'info';
  return 'neutral';
}

function entryValue(e: ScoreEntry | undefined): string {
  if (!e || e.value === undefined) return '–';
  if (e.value_type === 'boolean') return `${(e.value * 100).toFixed(1)}%`;
  return `${fmtNumber(e.value)}${e.unit ? ` ${e.unit}` : ''}`;
}

/** Everything under `/projects/{project_id}/evaluations/...`: list, evaluation, run (`run_url`), compare. */
export function EvaluationsRoutes() {
  return (
    <Routes>
      <Route index element={<EvaluationList />} />
      <Route path="runs/:runId" element={<RunRedirect />} />
      <Route path=":evaluationId" element={<EvaluationPage />} />
      <Route path=":evaluationId/runs/:runId" element={<RunPage />} />
      <Route path=":evaluationId/runs/:runId/compare" element={<ComparePage />} />
      <Route path="*" element={<NotFound />} />
    </Routes>
  );
}

function EvaluationList() {
  const { projectId, project } = useProject();
  useTitle(`Evaluations · ${project.name}`);
  const [params, setParams] = useSearchParams();
  const navigate = useNavigate();
  const page = Math.max(0, Number(params.get('page')) || 0);
  const list = useQuery({
    queryKey: ['evaluations', projectId, page],
    placeholderData: keepPreviousData,
    queryFn: () => api<Page<Evaluation>>('/evaluations', { query: { project_id: projectId, limit: LIMIT, page } }),
  });
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Evaluations</h1>
          <div className="muted">
            Offline runs of a candidate over a dataset version, scored; compare one run with another.
          </div>
        </div>
      </div>
      {list.isPending ? (
        <Loading rows={4} />
      ) : list.error ? (
        <ErrorBox error={list.error} />
      ) : list.data.data.length === 0 ? (
        <Empty title="No evaluations yet">
          Runs are created through the public API with a project API key: POST /evaluation-runs, then its results and
          /complete (see <a href="/docs">API docs</a> and docs/datasets.md).
        </Empty>
      ) : (
        <>
          <div className="table-wrap">
            <table className="data">
              <thead>
                <tr>
                  <th>Evaluation</th>
                  <th className="hide-phone">Key</th>
                  <th className="num">Runs</th>
                  <th>Updated</th>
                </tr>
              </thead>
              <tbody>
                {list.data.data.map((e) => (
                  <tr
                    key={e.id}
                    className="clickable"
                    onClick={() => navigate(`/projects/${projectId}/evaluations/${e.id}`)}
                  >
                    <td>
                      <Link to={`/projects/${projectId}/evaluations/${e.id}`} onClick={(ev) => ev.stopPropagation()}>
                        {e.name}
                      </Link>
                    </td>
                    <td className="hide-phone mono">{e.evaluation_key ?? ''}</td>
                    <td className="num">{fmtInt(e.run_count)}</td>
                    <td className="nowrap">
                      <Time iso={e.updated_at} short />
                    </td>
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

function useEvaluation(evaluationId: string, page = 0) {
  const { projectId } = useProject();
  return useQuery({
    queryKey: ['evaluation', projectId, evaluationId, page],
    placeholderData: keepPreviousData,
    queryFn: () =>
      api<Evaluation & { runs: RunSummary[] }>(`/evaluations/${encodeURIComponent(evaluationId)}`, {
        query: { project_id: projectId, limit: LIMIT, page },
      }),
  });
}

function EvaluationPage() {
  const { projectId } = useProject();
  const { evaluationId = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const navigate = useNavigate();
  const page = Math.max(0, Number(params.get('page')) || 0);
  const evaluation = useEvaluation(evaluationId, page);
  const [picked, setPicked] = useState<string[]>([]);
  useTitle(evaluation.data?.name ?? 'Evaluation');
  if (evaluation.isPending) return <Loading rows={4} />;
  if (evaluation.error) {
    if (isNotFound(evaluation.error))
      return (
        <NotFound what="evaluation" back={{ to: `/projects/${projectId}/evaluations`, label: 'Back to evaluations' }} />
      );
    return <ErrorBox error={evaluation.error} />;
  }
  const e = evaluation.data;
  const scoreNames = [...new Set(e.runs.flatMap((r) => (r.scores ?? []).map((s) => s.name)))].slice(0, 4);
  const toggle = (id: string) => setPicked((p) => (p.includes(id) ? p.filter((x) => x !== id) : [...p.slice(-1), id]));
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <div className="crumbs">
            <Link to={`/projects/${projectId}/evaluations`}>Evaluations</Link> /
          </div>
          <h1>{e.name}</h1>
          <div className="muted">
            {fmtInt(e.run_count)} runs{e.evaluation_key ? ` · key ${e.evaluation_key}` : ''}
          </div>
        </div>
        <button
          className="primary"
          disabled={picked.length !== 2}
          title="Tick two runs to compare them"
          onClick={() =>
            navigate(`/projects/${projectId}/evaluations/${evaluationId}/runs/${picked[0]}/compare?other=${picked[1]}`)
          }
        >
          Compare selected
        </button>
      </div>
      {e.runs.length === 0 ? (
        <Empty title="No runs" />
      ) : (
        <div className="table-wrap">
          <table className="data">
            <thead>
              <tr>
                <th />
                <th>Run</th>
                <th>Status</th>
                <th className="hide-phone">Candidate</th>
                <th className="num">Passed</th>
                <th className="num">Failed</th>
                <th className="num hide-phone">Errored</th>
                {scoreNames.map((n) => (
                  <th key={n} className="num hide-phone">
                    {n}
                  </th>
                ))}
                <th>Started</th>
              </tr>
            </thead>
            <tbody>
              {e.runs.map((r) => (
                <tr key={r.evaluation_run_id}>
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`Select run ${r.run_number}`}
                      checked={picked.includes(r.evaluation_run_id)}
                      onChange={() => toggle(r.evaluation_run_id)}
                    />
                  </td>
                  <td>
                    <Link to={r.run_path}>#{r.run_number}</Link>
                  </td>
                  <td>
                    <Badge tone={runTone(r.status)}>{r.status}</Badge>
                  </td>
                  <td className="hide-phone">
                    {r.candidate_version} <span className="muted">{r.environment}</span>
                  </td>
                  <td className="num">{fmtInt(r.passed_count)}</td>
                  <td className="num">{fmtInt(r.failed_count)}</td>
                  <td className="num hide-phone">{fmtInt(r.errored_count)}</td>
                  {scoreNames.map((n) => (
                    <td key={n} className="num hide-phone">
                      {entryValue(r.scores?.find((s) => s.name === n))}
                    </td>
                  ))}
                  <td className="nowrap">
                    <Time iso={r.started_at} short />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager page={page} limit={LIMIT} total={e.run_count} onPage={(p) => setParams(p ? { page: String(p) } : {})} />
    </div>
  );
}

function useRun(runId: string) {
  const { projectId } = useProject();
  return useQuery({
    queryKey: ['run', projectId, runId],
    queryFn: () =>
      api<RunSummary>(`/evaluation-runs/${encodeURIComponent(runId)}`, { query: { project_id: projectId } }),
  });
}

/** `/evaluations/runs/{run_id}` (from a span's evaluation_run_id): goes to the run's own page. */
function RunRedirect() {
  const { projectId } = useProject();
  const { runId = '' } = useParams();
  const run = useRun(runId);
  if (run.isPending) return <Loading />;
  if (run.error)
    return isNotFound(run.error) ? (
      <NotFound
        what="evaluation run"
        back={{ to: `/projects/${projectId}/evaluations`, label: 'Back to evaluations' }}
      />
    ) : (
      <ErrorBox error={run.error} />
    );
  return <Navigate to={run.data.run_path} replace />;
}

function EntryTable({ title, entries }: { title: string; entries: ScoreEntry[] | undefined }) {
  if (!entries?.length) return null;
  return (
    <section className="stack">
      <h2>{title}</h2>
      <div className="table-wrap">
        <table className="data compact">
          <thead>
            <tr>
              <th>Name</th>
              <th className="num">Mean</th>
              <th className="num">Observed</th>
              <th className="hide-phone">Direction</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((s) => (
              <tr key={s.name}>
                <td className="mono">{s.name}</td>
                <td className="num">{entryValue(s)}</td>
                <td className="num">{fmtInt(s.observed_count)}</td>
                <td className="hide-phone muted">{s.direction.replace(/_/g, ' ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** The page `run_url` points to: `/projects/{p}/evaluations/{evaluation_id}/runs/{run_id}`. */
function RunPage() {
  const { projectId } = useProject();
  const { evaluationId = '', runId = '' } = useParams();
  const navigate = useNavigate();
  const run = useRun(runId);
  const evaluation = useEvaluation(evaluationId);
  useTitle(run.data ? `${run.data.evaluation_name} #${run.data.run_number}` : 'Evaluation run');
  if (run.isPending) return <Loading rows={4} />;
  if (run.error) {
    if (isNotFound(run.error))
      return (
        <NotFound
          what="evaluation run"
          back={{ to: `/projects/${projectId}/evaluations`, label: 'Back to evaluations' }}
        />
      );
    return <ErrorBox error={run.error} />;
  }
  const r = run.data;
  if (r.evaluation_id !== evaluationId) return <Navigate to={r.run_path} replace />;
  const others = (evaluation.data?.runs ?? []).filter(
    (o) => o.evaluation_run_id !== r.evaluation_run_id && o.dataset_version_id === r.dataset_version_id,
  );
  const counts: [string, number][] = [
    ['Results', r.result_count],
    ['Scored', r.scored_count],
    ['Passed', r.passed_count],
    ['Failed', r.failed_count],
    ['Errored', r.errored_count],
    ['Task errors', r.task_error_count],
    ['Scorer errors', r.scorer_error_count],
  ];
  return (
    <div className="page" data-testid="run-page">
      <div className="page-head">
        <div>
          <div className="crumbs">
            <Link to={`/projects/${projectId}/evaluations`}>Evaluations</Link> /{' '}
            <Link to={`/projects/${projectId}/evaluations/${r.evaluation_id}`}>{r.evaluation_name}</Link> /
          </div>
          <h1>
            {r.evaluation_name} · run #{r.run_number} <Badge tone={runTone(r.status)}>{r.status}</Badge>
          </h1>
          <div className="muted">
            candidate <strong>{r.candidate_version || '–'}</strong> · {r.environment || 'no environment'} · started{' '}
            <Time iso={r.started_at} />
            {r.completed_at && (
              <>
                {' '}
                · completed <Time iso={r.completed_at} />
              </>
            )}
          </div>
        </div>
        {others.length > 0 && (
          <label className="inline">
            Compare with
            <select
              aria-label="Compare with run"
              value=""
              onChange={(e) => e.target.value && navigate(`${r.run_path}/compare?other=${e.target.value}`)}
            >
              <option value="">choose a run…</option>
              {others.map((o) => (
                <option key={o.evaluation_run_id} value={o.evaluation_run_id}>
                  #{o.run_number} {o.candidate_version}
                </option>
              ))}
            </select>
          </label>
        )}
      </div>
      <div className="card trace-summary" data-testid="run-counts">
        {counts.map(([label, value]) => (
          <div className="stat" key={label}>
            <span className="label">{label}</span>
            <span className="value">{fmtInt(value)}</span>
          </div>
        ))}
      </div>
      <EntryTable title="Scores" entries={r.scores} />
      <EntryTable title="Metrics" entries={r.metrics} />
      <p className="muted">
        Dataset version <span className="mono">{r.dataset_version_id}</span> ·{' '}
        <Link to={`/projects/${projectId}/traces?range=all&evals=1&q=`}>evaluation traces</Link>
      </p>
    </div>
  );
}

function DeltaTable({ title, rows }: { title: string; rows: MeanDelta[] }) {
  if (!rows.length) return null;
  return (
    <section className="stack">
      <h2>{title}</h2>
      <div className="table-wrap">
        <table className="data compact">
          <thead>
            <tr>
              <th>Name</th>
              <th className="num">Baseline</th>
              <th className="num">Other</th>
              <th className="num">Change</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((d) => {
              const better =
                d.delta === null || d.delta === 0
                  ? null
                  : d.direction === 'lower_is_better'
                    ? d.delta < 0
                    : d.direction === 'higher_is_better'
                      ? d.delta > 0
                      : null;
              return (
                <tr key={d.name}>
                  <td className="mono">{d.name}</td>
                  <td className="num">{fmtNumber(d.run_value)}</td>
                  <td className="num">{fmtNumber(d.other_value)}</td>
                  <td
                    className="num"
                    style={{ color: better === null ? undefined : better ? 'var(--ok)' : 'var(--error)' }}
                  >
                    {d.delta === null ? '–' : `${d.delta > 0 ? '+' : ''}${fmtNumber(d.delta)}`}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** A run (baseline) beside another of the same dataset version: means, and the cases that moved. */
function ComparePage() {
  const { projectId } = useProject();
  const { evaluationId = '', runId = '' } = useParams();
  const [params] = useSearchParams();
  const other = params.get('other') ?? '';
  useTitle('Compare runs');
  const compare = useInfiniteQuery({
    queryKey: ['compare', projectId, runId, other],
    enabled: Boolean(other),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last: RunComparison) => last.next_cursor ?? undefined,
    queryFn: ({ pageParam }) =>
      api<RunComparison>(`/evaluation-runs/${encodeURIComponent(runId)}/compare`, {
        query: { project_id: projectId, other, limit: 100, cursor: pageParam },
      }),
  });
  if (!other) return <Navigate to={`/projects/${projectId}/evaluations/${evaluationId}/runs/${runId}`} replace />;
  if (compare.isPending) return <Loading rows={4} />;
  if (compare.error) {
    if (isNotFound(compare.error))
      return (
        <NotFound
          what="evaluation run"
          back={{ to: `/projects/${projectId}/evaluations/${evaluationId}`, label: 'Back to the evaluation' }}
        />
      );
    return <ErrorBox error={compare.error} title="These runs can't be compared" />;
  }
  const first = compare.data.pages[0]!;
  const regressions = compare.data.pages.flatMap((p) => p.regressions);
  const improvements = compare.data.pages.flatMap((p) => p.improvements);
  const caseList = (title: string, list: typeof regressions, tone: 'error' | 'ok') => (
    <section className="stack">
      <h2>
        {title} <Badge tone={tone}>{list.length}</Badge>
      </h2>
      {list.length === 0 ? (
        <p className="muted">None.</p>
      ) : (
        <div className="table-wrap" style={{ maxHeight: 360 }}>
          <table className="data compact">
            <thead>
              <tr>
                <th>Test case</th>
                <th>Passed</th>
                <th>Scores</th>
              </tr>
            </thead>
            <tbody>
              {list.map((c) => (
                <tr key={c.test_case_id}>
                  <td className="mono">{c.test_case_id}</td>
                  <td>
                    {String(c.run_passed ?? '–')} → {String(c.other_passed ?? '–')}
                  </td>
                  <td>
                    {c.scores
                      .map((s) => `${s.name} ${fmtNumber(s.run_value)} → ${fmtNumber(s.other_value)}`)
                      .join(' · ')}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
  return (
    <div className="page" data-testid="compare-page">
      <div className="page-head">
        <div>
          <div className="crumbs">
            <Link to={`/projects/${projectId}/evaluations/${evaluationId}`}>Evaluation</Link> /
          </div>
          <h1>
            Run #{first.run.run_number} vs #{first.other.run_number}
          </h1>
          <div className="muted">
            baseline {first.run.candidate_version || '–'} ({first.run.status}) · other{' '}
            {first.other.candidate_version || '–'} ({first.other.status})
          </div>
        </div>
      </div>
      <DeltaTable title="Scores" rows={first.scores} />
      <DeltaTable title="Metrics" rows={first.metrics} />
      {caseList('Regressions', regressions, 'error')}
      {caseList('Improvements', improvements, 'ok')}
      {compare.hasNextPage && (
        <button onClick={() => void compare.fetchNextPage()} disabled={compare.isFetchingNextPage}>
          More changed cases
        </button>
      )}
    </div>
  );
}
