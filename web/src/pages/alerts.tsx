import { useMemo, useState } from 'react';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useLocation, useNavigate, useParams, useSearchParams } from 'react-router';
import { api, ApiError, isNotFound } from '../api';
import { useProject } from '../project';
import { fmtNumber } from '../format';
import { FilterBar } from '../components/filter-bar';
import { TimeChart } from '../components/time-chart';
import { Badge, Empty, ErrorBox, Loading, Modal, NotFound, Pager, Time, useTitle } from '../components/ui';
import { AGGREGATIONS, GROUP_FIELDS, IDENTITY_MEASURES, MEASURES, valueFormatter } from '../widget-spec';
import type { Alert, AlertEvaluation, AlertFilter, Page, Predicate } from '../types';
import { ALERT_STATUSES } from '../../../src/alerts/vocabulary';
import { SampledBanner } from './sampling';

const STATUSES: readonly string[] = ALERT_STATUSES;
const OPERATORS = ['>', '>=', '<', '<=', '=', '!='];
const WINDOWS = ['1m', '5m', '10m', '30m', '1h', '2h'];
const SEVERITIES = ['info', 'warning', 'critical'];
const NO_DATA = [
  ['HOLD', 'keep the last state'],
  ['ZERO', 'count it as 0'],
  ['NOTIFY', 'alert on it'],
] as const;
const LIMIT = 50;

export function alertTone(status: string): 'error' | 'ok' | 'warn' | 'neutral' {
  return status === 'ALERTING' || status === 'ERROR'
    ? 'error'
    : status === 'OK'
      ? 'ok'
      : status === 'NO_DATA'
        ? 'warn'
        : 'neutral';
}

const SYMBOL_OPS: Record<string, string> = { '=': 'eq', '==': 'eq', '>': 'gt', '>=': 'gte', '<': 'lt', '<=': 'lte' };
const SET_FIELDS = ['model_name', 'environment', 'span_kind', 'kind', 'status', 'error_type', 'name'];

/** A stored alert filter in the chip form (the API also takes `=` with a string: docs/filters.md). */
function toPredicate(f: AlertFilter): Predicate | null {
  if (f.op === '!=' || f.op === 'neq' || f.op === '<>') return null;
  let field = f.field === 'kind' ? 'span_kind' : f.field === 'latency' ? 'duration_ms' : f.field;
  let key = f.key;
  if (field.startsWith('metadata.')) {
    key = field.slice(9);
    field = 'metadata';
  }
  const op = SYMBOL_OPS[f.op ?? '='] ?? f.op ?? 'eq';
  if (SET_FIELDS.includes(field))
    return { field, op: 'in', value: Array.isArray(f.value) ? f.value : [String(f.value)] } as Predicate;
  if (['cost', 'total_tokens', 'duration_ms', 'errors'].includes(field))
    return { field, op, value: Number(f.value) } as Predicate;
  if (field === 'metadata')
    return { field, op: op === 'contains' ? 'contains' : 'eq', value: String(f.value), key: key ?? '' };
  if (field === 'trace_id') return { field, op: op === 'contains' ? 'contains' : 'eq', value: String(f.value) };
  return null;
}

function describeAlert(a: Alert): string {
  return `${a.aggregation}(${a.measure}) ${a.threshold_operator} ${fmtNumber(a.threshold)} over ${a.window}${a.group_by ? `, per ${a.group_by}` : ''}`;
}

type FormState = {
  name: string;
  measure: string;
  aggregation: string;
  threshold_operator: string;
  threshold: string;
  window: string;
  group_by: string;
  filters: Predicate[];
  kept: AlertFilter[];
  no_data_mode: string;
  severity: string;
  renotify: boolean;
  interval: string;
  webhook: string;
};

function initialForm(a?: Alert): FormState {
  const converted = (a?.filters ?? []).map((f) => [f, toPredicate(f)] as const);
  return {
    name: a?.name ?? '',
    measure: a?.measure ?? 'error_rate',
    aggregation: a?.aggregation ?? 'avg',
    threshold_operator: a?.threshold_operator ?? '>',
    threshold: a ? String(a.threshold) : '0.1',
    window: a?.window ?? '5m',
    group_by: a?.group_by ?? '',
    filters: converted.flatMap(([, p]) => (p ? [p] : [])),
    kept: converted.flatMap(([f, p]) => (p ? [] : [f])),
    no_data_mode: a?.no_data_mode ?? 'HOLD',
    severity: a?.severity ?? 'warning',
    renotify: a?.renotify.mode === 'INTERVAL',
    interval: String(a?.renotify.interval_minutes ?? 60),
    webhook: a?.notify?.webhook_url ?? '',
  };
}

/** Create or edit an alert over the SPANS view (docs/alerts.md); the server checks the definition. */
function AlertForm({
  alert,
  onClose,
  onSaved,
}: {
  alert?: Alert;
  onClose: () => void;
  onSaved: (a: Alert, secret?: string) => void;
}) {
  const { projectId } = useProject();
  const [f, setF] = useState<FormState>(() => initialForm(alert));
  const set = (p: Partial<FormState>) => setF((s) => ({ ...s, ...p }));
  const identity = IDENTITY_MEASURES.includes(f.measure);
  const save = useMutation({
    mutationFn: async () => {
      const body = {
        project_id: projectId,
        name: f.name,
        view: 'SPANS',
        measure: f.measure,
        aggregation: f.aggregation,
        threshold: Number(f.threshold),
        threshold_operator: f.threshold_operator,
        window: f.window,
        filters: [...f.filters, ...f.kept],
        group_by: f.group_by || null,
        no_data_mode: f.no_data_mode,
        severity: f.severity,
        renotify: f.renotify ? { mode: 'INTERVAL', interval_minutes: Number(f.interval) } : { mode: 'OFF' },
        notify: f.webhook.trim() ? { webhook_url: f.webhook.trim() } : null,
      };
      if (alert) return { alert: await api<Alert>(`/alerts/${alert.id}`, { method: 'PATCH', body }) };
      return api<{ alert: Alert; webhook_secret?: string }>('/alerts', { method: 'POST', body });
    },
    // The signing secret matters only to an alert that notifies a webhook.
    onSuccess: (r) => onSaved(r.alert, 'webhook_secret' in r && r.alert.notify ? r.webhook_secret : undefined),
  });
  return (
    <Modal title={alert ? 'Edit alert' : 'New alert'} onClose={onClose} wide>
      <form
        className="stack"
        aria-label="Alert"
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate();
        }}
      >
        <label>
          Name
          <input
            value={f.name}
            onChange={(e) => set({ name: e.target.value })}
            required
            maxLength={200}
            placeholder="e.g. Error rate above 10%"
          />
        </label>
        <div className="grid-form">
          <label>
            Measure
            <select
              value={f.measure}
              onChange={(e) => {
                const measure = e.target.value;
                set({
                  measure,
                  aggregation: IDENTITY_MEASURES.includes(measure)
                    ? 'uniq'
                    : measure === 'count'
                      ? 'count'
                      : f.aggregation === 'count' || f.aggregation === 'uniq'
                        ? 'avg'
                        : f.aggregation,
                });
              }}
            >
              {MEASURES.SPANS.map((m) => (
                <option key={m}>{m}</option>
              ))}
            </select>
          </label>
          <label>
            Aggregation
            <select value={f.aggregation} onChange={(e) => set({ aggregation: e.target.value })}>
              {AGGREGATIONS.filter((a) => !identity || a === 'uniq' || a === 'count').map((a) => (
                <option key={a}>{a}</option>
              ))}
            </select>
          </label>
          <label>
            Condition
            <select value={f.threshold_operator} onChange={(e) => set({ threshold_operator: e.target.value })}>
              {OPERATORS.map((o) => (
                <option key={o}>{o}</option>
              ))}
            </select>
          </label>
          <label>
            Threshold
            <input
              type="number"
              step="any"
              value={f.threshold}
              onChange={(e) => set({ threshold: e.target.value })}
              required
            />
          </label>
          <label>
            Window
            <select value={f.window} onChange={(e) => set({ window: e.target.value })}>
              {WINDOWS.map((w) => (
                <option key={w}>{w}</option>
              ))}
            </select>
          </label>
          <label>
            Per group (optional)
            <select value={f.group_by} onChange={(e) => set({ group_by: e.target.value })}>
              <option value="">— whole project —</option>
              {GROUP_FIELDS.SPANS.map((g) => (
                <option key={g}>{g}</option>
              ))}
            </select>
          </label>
          <label>
            Severity
            <select value={f.severity} onChange={(e) => set({ severity: e.target.value })}>
              {SEVERITIES.map((s) => (
                <option key={s}>{s}</option>
              ))}
            </select>
          </label>
          <label>
            A window with no data
            <select value={f.no_data_mode} onChange={(e) => set({ no_data_mode: e.target.value })}>
              {NO_DATA.map(([v, l]) => (
                <option key={v} value={v}>
                  {l}
                </option>
              ))}
            </select>
          </label>
        </div>
        <div className="stack" style={{ gap: '0.35rem' }}>
          <span style={{ fontWeight: 500 }}>Only spans where</span>
          <FilterBar
            projectId={projectId}
            filters={f.filters}
            onChange={(filters) => set({ filters })}
            exclude={['signal_id', 'tags']}
          />
          {f.kept.length > 0 && (
            <span className="muted">
              Also kept as written: {f.kept.map((k) => `${k.field} ${k.op ?? '='} ${String(k.value)}`).join(', ')}
            </span>
          )}
        </div>
        <div className="grid-form">
          <label>
            Webhook URL (optional)
            <input
              type="url"
              value={f.webhook}
              onChange={(e) => set({ webhook: e.target.value })}
              placeholder="https://…"
            />
          </label>
          <label className="inline" style={{ alignSelf: 'end' }}>
            <input type="checkbox" checked={f.renotify} onChange={(e) => set({ renotify: e.target.checked })} /> Remind
            while alerting, every
            <input
              type="number"
              min={1}
              max={10080}
              value={f.interval}
              onChange={(e) => set({ interval: e.target.value })}
              style={{ width: 80 }}
              disabled={!f.renotify}
              aria-label="Reminder interval (minutes)"
            />{' '}
            min
          </label>
        </div>
        {save.error && (
          <p className="form-error">{save.error instanceof ApiError ? save.error.detail : String(save.error)}</p>
        )}
        <div className="row">
          <button className="primary" type="submit" disabled={save.isPending}>
            {alert ? 'Save alert' : 'Create alert'}
          </button>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}

/** `/projects/{project_id}/alerts`: every alert with its state; `?status=` narrows. */
export function AlertsPage() {
  const { projectId, project, canWrite } = useProject();
  useTitle(`Alerts · ${project.name}`);
  const navigate = useNavigate();
  const client = useQueryClient();
  const [params, setParams] = useSearchParams();
  const [creating, setCreating] = useState(false);
  const status = STATUSES.find((s) => s === params.get('status'));
  const page = Math.max(0, Number(params.get('page')) || 0);
  const alerts = useQuery({
    queryKey: ['alerts', projectId, status, page],
    placeholderData: keepPreviousData,
    queryFn: () => api<Page<Alert>>('/alerts', { query: { project_id: projectId, status, limit: LIMIT, page } }),
  });
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Alerts</h1>
          <div className="muted">Thresholds on a measure of your spans, checked every minute over a window.</div>
        </div>
        <div className="row">
          <select
            aria-label="Status"
            value={status ?? ''}
            onChange={(e) => setParams(e.target.value ? { status: e.target.value } : {})}
          >
            <option value="">All states</option>
            {STATUSES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
          {canWrite && (
            <button className="primary" onClick={() => setCreating(true)}>
              New alert
            </button>
          )}
        </div>
      </div>
      <SampledBanner />
      {alerts.isPending ? (
        <Loading rows={5} />
      ) : alerts.error ? (
        <ErrorBox error={alerts.error} />
      ) : alerts.data.data.length === 0 ? (
        <Empty title="No alerts">
          {canWrite ? 'Create one to hear when error rate, latency or cost cross a line.' : ''}
        </Empty>
      ) : (
        <>
          <div className="table-wrap">
            <table className="data" data-testid="alert-table">
              <thead>
                <tr>
                  <th>Alert</th>
                  <th>State</th>
                  <th className="hide-phone">Condition</th>
                  <th className="hide-phone">Severity</th>
                  <th>Last evaluated</th>
                </tr>
              </thead>
              <tbody>
                {alerts.data.data.map((a) => (
                  <tr
                    key={a.id}
                    className="clickable"
                    data-testid="alert-row"
                    onClick={() => navigate(`/projects/${projectId}/alerts/${a.id}`)}
                  >
                    <td>
                      <Link to={`/projects/${projectId}/alerts/${a.id}`} onClick={(e) => e.stopPropagation()}>
                        {a.name}
                      </Link>
                    </td>
                    <td>
                      <Badge tone={alertTone(a.status)}>{a.status}</Badge>
                    </td>
                    <td className="hide-phone mono">{describeAlert(a)}</td>
                    <td className="hide-phone">{a.severity}</td>
                    <td className="nowrap">
                      <Time iso={a.last_evaluated_at} short />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager
            page={page}
            limit={LIMIT}
            total={alerts.data.meta.total}
            onPage={(p) => setParams({ ...(status ? { status } : {}), ...(p ? { page: String(p) } : {}) })}
          />
        </>
      )}
      {creating && (
        <AlertForm
          onClose={() => setCreating(false)}
          onSaved={(a, webhookSecret) => {
            setCreating(false);
            void client.invalidateQueries({ queryKey: ['alerts', projectId] });
            navigate(`/projects/${projectId}/alerts/${a.id}`, { state: webhookSecret ? { webhookSecret } : undefined });
          }}
        />
      )}
    </div>
  );
}

function History({ alert }: { alert: Alert }) {
  const { projectId } = useProject();
  const history = useQuery({
    queryKey: ['alert-evaluations', projectId, alert.id],
    queryFn: () =>
      api<Page<AlertEvaluation>>(`/alerts/${alert.id}/evaluations`, { query: { project_id: projectId, limit: 200 } }),
  });
  const format = useMemo(
    () => valueFormatter({ measure: alert.measure, aggregation: alert.aggregation } as never),
    [alert.measure, alert.aggregation],
  );
  const chart = useMemo(() => {
    const rows = [...(history.data?.data ?? [])].reverse();
    const times = rows.map((r) => Math.floor(Date.parse(r.window_end) / 1000));
    return {
      times,
      series: [
        { label: 'value', values: rows.map((r) => r.value) },
        { label: 'threshold', values: rows.map(() => alert.threshold) },
      ],
    };
  }, [history.data, alert.threshold]);
  if (history.isPending) return <Loading rows={2} />;
  if (history.error) return <ErrorBox error={history.error} />;
  if (!history.data.data.length)
    return <Empty title="Not evaluated yet">The worker evaluates alerts every minute.</Empty>;
  return (
    <div className="stack">
      <div className="card">
        <TimeChart times={chart.times} series={chart.series} format={format} height={200} />
      </div>
      <div className="table-wrap" style={{ maxHeight: 320 }}>
        <table className="data compact">
          <thead>
            <tr>
              <th>Window end</th>
              <th className="num">Value</th>
              <th>State</th>
              <th className="hide-phone">Notified</th>
              <th className="hide-phone">Error</th>
            </tr>
          </thead>
          <tbody>
            {history.data.data.slice(0, 100).map((r) => (
              <tr key={r.window_end}>
                <td className="nowrap">
                  <Time iso={r.window_end} />
                </td>
                <td className="num">{format(r.value)}</td>
                <td>
                  <Badge tone={alertTone(r.state)}>{r.state}</Badge>
                </td>
                <td className="hide-phone">{r.notified ? 'yes' : ''}</td>
                <td className="hide-phone">{r.error ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

/** `/projects/{project_id}/alerts/{id}`: definition, state, pause/resume, edit, delete, history. */
export function AlertPage() {
  const { projectId, canWrite } = useProject();
  const { alertId = '' } = useParams();
  const client = useQueryClient();
  const navigate = useNavigate();
  const [editing, setEditing] = useState(false);
  // A webhook's signing secret is answered once, by the create: shown here once too.
  const location = useLocation();
  const [secret, setSecret] = useState<string | null>(
    (location.state as { webhookSecret?: string } | null)?.webhookSecret ?? null,
  );
  const key = ['alert', projectId, alertId];
  const alert = useQuery({
    queryKey: key,
    queryFn: () => api<Alert>(`/alerts/${encodeURIComponent(alertId)}`, { query: { project_id: projectId } }),
  });
  useTitle(alert.data?.name ?? 'Alert');
  const refresh = async () => {
    await client.invalidateQueries({ queryKey: key });
    await client.invalidateQueries({ queryKey: ['alerts', projectId] });
  };
  const toggle = useMutation({
    mutationFn: (action: 'pause' | 'resume') =>
      api(`/alerts/${encodeURIComponent(alertId)}/${action}`, { method: 'POST', body: { project_id: projectId } }),
    onSuccess: refresh,
  });
  const remove = useMutation({
    mutationFn: () =>
      api(`/alerts/${encodeURIComponent(alertId)}`, { method: 'DELETE', query: { project_id: projectId } }),
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: ['alerts', projectId] });
      navigate(`/projects/${projectId}/alerts`);
    },
  });
  if (alert.isPending) return <Loading rows={5} />;
  if (alert.error) {
    if (isNotFound(alert.error))
      return <NotFound what="alert" back={{ to: `/projects/${projectId}/alerts`, label: 'Back to alerts' }} />;
    return <ErrorBox error={alert.error} />;
  }
  const a = alert.data;
  const paused = a.status === 'PAUSED';
  const failure = toggle.error ?? remove.error;
  return (
    <div className="page">
      <div className="page-head">
        <div style={{ minWidth: 0 }}>
          <div className="crumbs">
            <Link to={`/projects/${projectId}/alerts`}>Alerts</Link> /
          </div>
          <h1>
            {a.name}{' '}
            <Badge tone={alertTone(a.status)}>
              <span data-testid="alert-status">{a.status}</span>
            </Badge>
          </h1>
          <div className="muted mono">{describeAlert(a)}</div>
        </div>
        {canWrite && (
          <div className="row">
            <button
              className="primary"
              disabled={toggle.isPending}
              onClick={() => toggle.mutate(paused ? 'resume' : 'pause')}
            >
              {paused ? 'Resume' : 'Pause'}
            </button>
            <button onClick={() => setEditing(true)}>Edit</button>
            <button className="danger" onClick={() => confirm(`Delete the alert “${a.name}”?`) && remove.mutate()}>
              Delete
            </button>
          </div>
        )}
      </div>
      {failure && <ErrorBox error={failure} />}
      <div className="card">
        <dl className="kv">
          <dt>Severity</dt>
          <dd>{a.severity}</dd>
          <dt>No data</dt>
          <dd>{NO_DATA.find(([v]) => v === a.no_data_mode)?.[1] ?? a.no_data_mode}</dd>
          <dt>Filters</dt>
          <dd>
            {a.filters.length
              ? a.filters
                  .map(
                    (f) =>
                      `${f.key ? `${f.field}.${f.key}` : f.field} ${f.op ?? '='} ${Array.isArray(f.value) ? f.value.join(', ') : f.value}`,
                  )
                  .join(' · ')
              : 'all spans'}
          </dd>
          <dt>Reminders</dt>
          <dd>{a.renotify.mode === 'INTERVAL' ? `every ${a.renotify.interval_minutes} min while alerting` : 'off'}</dd>
          <dt>Webhook</dt>
          <dd>{a.notify?.webhook_url ?? <span className="muted">none</span>}</dd>
          <dt>Last evaluated</dt>
          <dd>
            <Time iso={a.last_evaluated_at} />
            {a.last_value !== undefined && a.last_value !== null && ` · value ${fmtNumber(a.last_value)}`}
          </dd>
          {a.alerted_at && (
            <>
              <dt>Alerting since</dt>
              <dd>
                <Time iso={a.alerted_at} />
              </dd>
            </>
          )}
          {a.last_error && (
            <>
              <dt>Last error</dt>
              <dd style={{ color: 'var(--error)' }}>{a.last_error}</dd>
            </>
          )}
          {a.last_notify_at && (
            <>
              <dt>Last notification</dt>
              <dd>
                <Time iso={a.last_notify_at} /> · {a.last_notify_status}
                {a.last_notify_error ? ` · ${a.last_notify_error}` : ''}
              </dd>
            </>
          )}
          <dt>Created</dt>
          <dd>
            <Time iso={a.create_time} /> {a.creator ? `by ${a.creator}` : ''}
          </dd>
        </dl>
      </div>
      {a.groups && a.groups.length > 0 && (
        <section className="stack">
          <h2>Groups</h2>
          <div className="table-wrap">
            <table className="data compact">
              <tbody>
                {a.groups.map((g) => (
                  <tr key={g.group}>
                    <td>{g.group}</td>
                    <td>
                      <Badge tone={alertTone(g.status)}>{g.status}</Badge>
                    </td>
                    <td className="num">{fmtNumber(g.value)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      )}
      <section className="stack">
        <h2>Evaluation history</h2>
        <History alert={a} />
      </section>
      {secret && (
        <Modal title="Webhook signing secret" onClose={() => setSecret(null)}>
          <p>Notifications to the webhook are signed with this secret. Copy it now: it is not shown again.</p>
          <div className="secret">{secret}</div>
          <button className="primary" onClick={() => setSecret(null)}>
            Done
          </button>
        </Modal>
      )}
      {editing && (
        <AlertForm
          alert={a}
          onClose={() => setEditing(false)}
          onSaved={() => {
            setEditing(false);
            void refresh();
          }}
        />
      )}
    </div>
  );
}
