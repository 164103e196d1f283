import { useState } from 'react';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { api, ApiError, isNotFound, request } from '../api';
import { useProject } from '../project';
import { fmtInt } from '../format';
import { Badge, Empty, ErrorBox, Loading, Modal, NotFound, Pager, Time, useTitle } from '../components/ui';
import type { Finding, Page, SignalDetail, SignalItem, SignalStatus } from '../types';
import { SIGNAL_STATUSES } from '../../../src/signals/vocabulary';

const STATUSES: readonly SignalStatus[] = SIGNAL_STATUSES;
const REASONS = [
  ['fixed_by_pr', 'Fixed by a pull request'],
  ['fixed_elsewhere', 'Fixed elsewhere'],
  ['already_fixed_before', 'Was already fixed before'],
  ['other', 'Other (explain in a note)'],
] as const;
const LIMIT = 50;

export function statusTone(status: string): 'error' | 'ok' | 'neutral' {
  return status === 'open' ? 'error' : status === 'resolved' ? 'ok' : 'neutral';
}

/** `/projects/{project_id}/signals`: signals by status (`?status=`), newest first. */
export function SignalsPage() {
  const { projectId, project } = useProject();
  useTitle(`Signals · ${project.name}`);
  const navigate = useNavigate();
  const [params, setParams] = useSearchParams();
  const status = (STATUSES.find((s) => s === params.get('status')) ?? 'open') as SignalStatus;
  const page = Math.max(0, Number(params.get('page')) || 0);
  const signals = useQuery({
    queryKey: ['signals', projectId, status, page],
    placeholderData: keepPreviousData,
    queryFn: ({ signal }) =>
      api<Page<SignalItem>>('/signals', { signal, query: { project_id: projectId, status, limit: LIMIT, page } }),
  });
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Signals</h1>
          <div className="muted">
            Problems the detectors found, grouped: resolve them, dismiss noise, merge duplicates.
          </div>
        </div>
      </div>
      <div className="tabs" role="tablist">
        {STATUSES.map((s) => (
          <button
            key={s}
            role="tab"
            aria-selected={s === status}
            onClick={() => setParams(s === 'open' ? {} : { status: s })}
          >
            {s[0]!.toUpperCase() + s.slice(1)}
          </button>
        ))}
      </div>
      {signals.isPending ? (
        <Loading rows={6} />
      ) : signals.error ? (
        <ErrorBox error={signals.error} />
      ) : signals.data.data.length === 0 ? (
        <Empty title={`No ${status} signals`}>{status === 'open' ? 'Nothing needs attention right now.' : ''}</Empty>
      ) : (
        <>
          <div className="table-wrap">
            <table className="data" data-testid="signal-table">
              <thead>
                <tr>
                  <th>Signal</th>
                  <th className="hide-phone">Detector</th>
                  <th className="num">Hits</th>
                  <th>Last seen</th>
                  <th className="hide-phone">First seen</th>
                  <th className="num hide-phone">Reopened</th>
                </tr>
              </thead>
              <tbody>
                {signals.data.data.map((s) => (
                  <tr
                    key={s.signal_id}
                    className="clickable"
                    data-testid="signal-row"
                    onClick={() => navigate(`/projects/${projectId}/signals/${s.signal_id}`)}
                  >
                    <td>
                      <Link to={`/projects/${projectId}/signals/${s.signal_id}`} onClick={(e) => e.stopPropagation()}>
                        {s.title}
                      </Link>{' '}
                      <Badge tone={statusTone(s.status)}>{s.status}</Badge>
                    </td>
                    <td className="hide-phone">{s.detector_name}</td>
                    <td className="num">{fmtInt(s.hit_count)}</td>
                    <td className="nowrap">
                      <Time iso={s.last_seen_at} short />
                    </td>
                    <td className="nowrap hide-phone">
                      <Time iso={s.first_seen_at} short />
                    </td>
                    <td className="num hide-phone">{s.reopen_count}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager
            page={page}
            limit={LIMIT}
            total={signals.data.meta.total}
            onPage={(p) => setParams({ ...(status !== 'open' ? { status } : {}), ...(p ? { page: String(p) } : {}) })}
          />
        </>
      )}
    </div>
  );
}

function Findings({ projectId, signalId }: { projectId: string; signalId: string }) {
  const [page, setPage] = useState(0);
  const findings = useQuery({
    queryKey: ['findings', projectId, signalId, page],
    placeholderData: keepPreviousData,
    queryFn: () =>
      api<Page<Finding>>('/findings', { query: { project_id: projectId, signal_id: signalId, limit: 20, page } }),
  });
  if (findings.isPending) return <Loading rows={3} />;
  if (findings.error) return <ErrorBox error={findings.error} />;
  if (!findings.data.data.length) return <Empty title="No findings recorded" />;
  return (
    <>
      <div className="table-wrap">
        <table className="data compact" data-testid="finding-table">
          <thead>
            <tr>
              <th>Found</th>
              <th>Summary</th>
              <th>Trace</th>
            </tr>
          </thead>
          <tbody>
            {findings.data.data.map((f) => (
              <tr key={f.finding_id}>
                <td className="nowrap">
                  <Time iso={f.found_at} short />
                </td>
                <td>{f.summary}</td>
                <td className="mono">
                  <Link
                    to={`/projects/${projectId}/traces/${encodeURIComponent(f.trace_id)}${f.span_id ? `?span=${encodeURIComponent(f.span_id)}` : ''}`}
                  >
                    {f.trace_id.slice(0, 16)}…
                  </Link>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Pager page={page} limit={20} total={findings.data.meta.total} onPage={setPage} />
    </>
  );
}

/**
 * `/projects/{project_id}/signals/{id}`. Every change sends the status this page last read
 * (`expected_status`): when someone else changed it first the server answers 409 and nothing is
 * written, and the page says so instead of overwriting their decision.
 */
export function SignalPage() {
  const { projectId, canWrite } = useProject();
  const { signalId = '' } = useParams();
  const client = useQueryClient();
  const [dialog, setDialog] = useState<'resolve' | 'merge' | null>(null);
  const [conflict, setConflict] = useState<string | null>(null);
  const key = ['signal', projectId, signalId];
  const signal = useQuery({
    queryKey: key,
    queryFn: () => api<SignalDetail>(`/signals/${encodeURIComponent(signalId)}`, { query: { project_id: projectId } }),
  });
  useTitle(signal.data?.title ?? 'Signal');
  const done = async () => {
    setDialog(null);
    await client.invalidateQueries({ queryKey: key });
    await client.invalidateQueries({ queryKey: ['signals', projectId] });
  };
  const onError = (error: unknown) => {
    if (error instanceof ApiError && error.status === 409) {
      setDialog(null);
      setConflict(error.detail);
    }
  };
  const change = useMutation({
    mutationFn: (body: { status: 'open' | 'resolved'; reason?: string; note?: string }) =>
      api(`/signals/${encodeURIComponent(signalId)}/status`, {
        method: 'PATCH',
        body: { project_id: projectId, expected_status: signal.data?.status, ...body },
      }),
    onSuccess: done,
    onError,
  });
  // Dismiss and merge (web routes, docs/signals.md) take no expected_status of their own: the page
  // re-reads the status first and refuses like a 409 when someone changed it; the body carries
  // expected_status too, for a server that checks it.
  const unchanged = async () => {
    const seen = signal.data?.status;
    const now = await api<SignalDetail>(`/signals/${encodeURIComponent(signalId)}`, {
      query: { project_id: projectId },
    });
    if (now.status !== seen || now.merged_into_id)
      throw new ApiError(409, `the signal is ${now.merged_into_id ? 'merged' : now.status} now`, null);
  };
  const dismiss = useMutation({
    mutationFn: async () => {
      await unchanged();
      return request(`/api/projects/${projectId}/signals/${encodeURIComponent(signalId)}/dismiss`, {
        method: 'POST',
        body: { expected_status: signal.data?.status },
      });
    },
    onSuccess: done,
    onError,
  });
  const merge = useMutation({
    mutationFn: async (into: string) => {
      await unchanged();
      return request(`/api/projects/${projectId}/signals/${encodeURIComponent(signalId)}/merge`, {
        method: 'POST',
        body: { into_signal_id: into, expected_status: signal.data?.status },
      });
    },
    onSuccess: done,
    onError,
  });

  if (signal.isPending) return <Loading rows={5} />;
  if (signal.error) {
    if (isNotFound(signal.error))
      return <NotFound what="signal" back={{ to: `/projects/${projectId}/signals`, label: 'Back to signals' }} />;
    return <ErrorBox error={signal.error} />;
  }
  const s = signal.data;
  const failure = [change.error, dismiss.error, merge.error].find(
    (e) => e && !(e instanceof ApiError && e.status === 409),
  );
  const busy = change.isPending || dismiss.isPending || merge.isPending;
  return (
    <div className="page">
      <div className="page-head">
        <div style={{ minWidth: 0 }}>
          <div className="crumbs">
            <Link to={`/projects/${projectId}/signals`}>Signals</Link> /
          </div>
          <h1 style={{ overflowWrap: 'anywhere' }}>
            {s.title} <Badge tone={statusTone(s.status)}>{s.status}</Badge>
          </h1>
          <div className="muted">
            {s.detector_name} · {fmtInt(s.hit_count)} hits · first <Time iso={s.first_seen_at} /> · last{' '}
            <Time iso={s.last_seen_at} />
            {s.reopen_count > 0 && ` · reopened ${s.reopen_count}×`}
            {s.resolved_at && (
              <>
                {' '}
                · resolved <Time iso={s.resolved_at} />
              </>
            )}
          </div>
        </div>
        {canWrite && !s.merged_into_id && (
          <div className="row" data-testid="signal-actions">
            {s.status === 'open' && (
              <button className="primary" disabled={busy} onClick={() => setDialog('resolve')}>
                Resolve…
              </button>
            )}
            {s.status === 'resolved' && (
              <button className="primary" disabled={busy} onClick={() => change.mutate({ status: 'open' })}>
                Reopen
              </button>
            )}
            {s.status !== 'dismissed' && (
              <>
                <button disabled={busy} onClick={() => setDialog('merge')}>
                  Merge into…
                </button>
                <button
                  disabled={busy}
                  onClick={() =>
                    confirm('Dismiss this signal? A dismissed signal never reopens on new findings.') &&
                    dismiss.mutate()
                  }
                >
                  Dismiss
                </button>
              </>
            )}
          </div>
        )}
      </div>
      {conflict && (
        <div className="refusal row spread" role="alert" data-testid="signal-conflict">
          <span>
            <strong>Someone else changed this signal since you opened it.</strong> Nothing was written. {conflict}
          </span>
          <button
            onClick={() => {
              setConflict(null);
              void signal.refetch();
            }}
          >
            Reload
          </button>
        </div>
      )}
      {failure ? <ErrorBox error={failure} title="The change was refused" /> : null}
      {s.merged_into_id && (
        <div className="refusal">
          This signal was merged: its findings now count for{' '}
          <Link to={`/projects/${projectId}/signals/${s.merged_into_id}`}>the signal it was merged into</Link>.
        </div>
      )}
      <div className="row">
        <Link
          className="button"
          to={`/projects/${projectId}/traces?range=all&filters=${encodeURIComponent(JSON.stringify([{ field: 'signal_id', op: 'eq', value: s.signal_id }]))}`}
        >
          Traces of this signal →
        </Link>
      </div>
      <section className="card stack">
        <h2>Root-cause hints</h2>
        {s.rca_state === 'pending' && <p className="muted">Being worked out…</p>}
        {s.rca_state === 'failed' && (
          <p className="muted">The hints could not be computed{s.rca?.error ? `: ${s.rca.error}` : '.'}</p>
        )}
        {s.rca?.hints?.length ? (
          <table className="data compact" data-testid="rca-hints">
            <thead>
              <tr>
                <th>Attribute</th>
                <th>Value</th>
                <th className="num">In this signal</th>
                <th className="num">Elsewhere</th>
                <th className="num">Lift</th>
              </tr>
            </thead>
            <tbody>
              {s.rca.hints.map((h, i) => (
                <tr key={i}>
                  <td className="mono">{h.attribute}</td>
                  <td>{h.value}</td>
                  <td className="num">{(h.signal_share * 100).toFixed(0)}%</td>
                  <td className="num">{(h.baseline_share * 100).toFixed(0)}%</td>
                  <td className="num">{h.lift.toFixed(1)}×</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          s.rca_state !== 'pending' &&
          s.rca_state !== 'failed' && <p className="muted">No attribute stands out in this signal's traces.</p>
        )}
      </section>
      <section className="stack">
        <h2>Findings</h2>
        <Findings projectId={projectId} signalId={s.signal_id} />
      </section>
      {dialog === 'resolve' && (
        <ResolveDialog
          onClose={() => setDialog(null)}
          onResolve={(reason, note) => change.mutate({ status: 'resolved', reason, ...(note ? { note } : {}) })}
          busy={change.isPending}
        />
      )}
      {dialog === 'merge' && (
        <MergeDialog
          projectId={projectId}
          signal={s}
          onClose={() => setDialog(null)}
          onMerge={(into) => merge.mutate(into)}
          busy={merge.isPending}
        />
      )}
    </div>
  );
}

function ResolveDialog({
  onClose,
  onResolve,
  busy,
}: {
  onClose: () => void;
  onResolve: (reason: string, note: string) => void;
  busy: boolean;
}) {
  const [reason, setReason] = useState<string>('fixed_by_pr');
  const [note, setNote] = useState('');
  return (
    <Modal title="Resolve signal" onClose={onClose}>
      <form
        className="stack"
        onSubmit={(e) => {
          e.preventDefault();
          onResolve(reason, note.trim());
        }}
      >
        <label>
          Reason
          <select value={reason} onChange={(e) => setReason(e.target.value)}>
            {REASONS.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Note {reason === 'other' ? '' : <span className="muted">(optional)</span>}
          <textarea
            value={note}
            onChange={(e) => setNote(e.target.value)}
            maxLength={4000}
            rows={4}
            required={reason === 'other'}
            style={{ fontFamily: 'inherit' }}
          />
        </label>
        <p className="muted">It reopens by itself if the detector finds the problem again in a newer trace.</p>
        <button className="primary" type="submit" disabled={busy || (reason === 'other' && !note.trim())}>
          Resolve
        </button>
      </form>
    </Modal>
  );
}

function MergeDialog({
  projectId,
  signal,
  onClose,
  onMerge,
  busy,
}: {
  projectId: string;
  signal: SignalDetail;
  onClose: () => void;
  onMerge: (into: string) => void;
  busy: boolean;
}) {
  const candidates = useQuery({
    queryKey: ['merge-candidates', projectId],
    queryFn: async () => {
      const [open, resolved] = await Promise.all(
        (['open', 'resolved'] as const).map((status) =>
          api<Page<SignalItem>>('/signals', { query: { project_id: projectId, status, limit: 200 } }),
        ),
      );
      return [...open!.data, ...resolved!.data];
    },
  });
  const [into, setInto] = useState('');
  const options = (candidates.data ?? []).filter((c) => c.signal_id !== signal.signal_id);
  return (
    <Modal title="Merge into another signal" onClose={onClose}>
      <p className="muted">This signal's findings will count for the one you choose; this one leaves the lists.</p>
      {candidates.isPending ? (
        <Loading rows={2} />
      ) : options.length === 0 ? (
        <Empty title="No other open or resolved signal to merge into" />
      ) : (
        <form
          className="stack"
          onSubmit={(e) => {
            e.preventDefault();
            if (into) onMerge(into);
          }}
        >
          <label>
            Merge into
            <select value={into} onChange={(e) => setInto(e.target.value)} required>
              <option value="">Choose a signal…</option>
              {options.map((c) => (
                <option key={c.signal_id} value={c.signal_id}>
                  {c.title} ({c.status}, {c.hit_count} hits)
                </option>
              ))}
            </select>
          </label>
          <button className="primary" type="submit" disabled={busy || !into}>
            Merge
          </button>
        </form>
      )}
    </Modal>
  );
}
