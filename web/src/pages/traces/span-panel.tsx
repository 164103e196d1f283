import { Link } from 'react-router';
import { fmtCost, fmtInt, fmtMs } from '../../format';
import { Payload } from '../../components/payload';
import { Badge, CopyButton, Time } from '../../components/ui';
import type { Span } from '../../types';

/** The selected span: what it did, what went in and out, its metadata and its error. */
export function SpanPanel({ span, projectId }: { span: Span; projectId: string }) {
  const error = span.status === 'error';
  const meta = Object.entries(span.metadata ?? {});
  return (
    <aside className="span-panel card" aria-label="Selected span" data-testid="span-panel">
      <div className="row spread">
        <div className="row" style={{ minWidth: 0 }}>
          <span className={`kind kind-${span.kind}`}>{span.kind}</span>
          <h2 style={{ margin: 0, overflowWrap: 'anywhere' }}>{span.name}</h2>
        </div>
        <Badge tone={error ? 'error' : span.status === 'ok' ? 'ok' : 'neutral'}>{span.status}</Badge>
      </div>
      {error && (
        <div className="error-detail" data-testid="span-error">
          <strong>{span.error_type ?? 'Error'}</strong>
          {span.error_message && <div>{span.error_message}</div>}
        </div>
      )}
      <dl className="kv">
        <dt>Span ID</dt>
        <dd className="mono">
          {span.span_id} <CopyButton text={span.span_id} />
        </dd>
        <dt>Started</dt>
        <dd>
          <Time iso={span.start_time} />
        </dd>
        <dt>Duration</dt>
        <dd>{span.end_time ? fmtMs(span.duration_ms) : 'still running'}</dd>
        {span.model_name && (
          <>
            <dt>Model</dt>
            <dd>{span.model_name}</dd>
          </>
        )}
        <dt>Tokens</dt>
        <dd>
          {fmtInt(span.input_tokens)} in · {fmtInt(span.output_tokens)} out · {fmtInt(span.total_tokens)} total
        </dd>
        <dt>Cost</dt>
        <dd>{fmtCost(span.cost)}</dd>
        {span.environment && (
          <>
            <dt>Environment</dt>
            <dd>{span.environment}</dd>
          </>
        )}
        {span.user_id && (
          <>
            <dt>User</dt>
            <dd>{span.user_id}</dd>
          </>
        )}
        {span.session_id && (
          <>
            <dt>Session</dt>
            <dd>
              <Link to={`/projects/${projectId}/sessions/${encodeURIComponent(span.session_id)}`}>{span.session_id}</Link>
            </dd>
          </>
        )}
        {span.evaluation_run_id && (
          <>
            <dt>Evaluation run</dt>
            <dd>
              <Link to={`/projects/${projectId}/evaluations/runs/${encodeURIComponent(span.evaluation_run_id)}`}>{span.evaluation_run_id}</Link>
            </dd>
          </>
        )}
      </dl>
      <section>
        <h3>Input</h3>
        <Payload text={span.input} label="Input" />
      </section>
      <section>
        <h3>Output</h3>
        <Payload text={span.output} label="Output" />
      </section>
      <section>
        <h3>Metadata</h3>
        {meta.length === 0 ? (
          <p className="muted">No metadata.</p>
        ) : (
          <table className="data compact">
            <tbody>
              {meta.map(([k, v]) => (
                <tr key={k}>
                  <td className="mono">{k}</td>
                  <td style={{ overflowWrap: 'anywhere' }}>{v}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </aside>
  );
}
