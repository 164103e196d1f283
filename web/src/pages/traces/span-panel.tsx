import { Link } from 'react-router';
import { fmtCost, fmtInt, fmtMs, fmtNumber } from '../../format';
import { Payload } from '../../components/payload';
import { SpanPayload } from '../../components/conversation';
import { highlight } from '../../components/highlight';
import { Badge, CopyButton, Time } from '../../components/ui';
import type { Span } from '../../types';
import type { Rollup } from './span-tree';
import { Attributes, costSourceLabel, SpanAttributes, SpanEvents, SpanLinks, SpanResource } from './span-details';

/** The selected span: what it did, what went in and out, its metadata and its error. */
/** `terms`: a text search's terms (the trace was opened from one), marked in the input, output and error. */
/** `withChildren`: the span's values plus its descendants', for a span that has children. */
export function SpanPanel({
  span,
  projectId,
  terms = [],
  withChildren,
}: {
  span: Span;
  projectId: string;
  terms?: string[];
  withChildren?: Rollup;
}) {
  const error = span.status === 'error';
  const meta = Object.entries(span.metadata ?? {});
  // LLM calls, and the trace's root (an agent's conversation), read as messages (docs/trace-view.md).
  const chat = span.kind === 'llm' || !span.parent_span_id;
  return (
    <aside className="span-panel card" aria-label="Selected span" data-testid="span-panel">
      <div className="row spread">
        <div className="row" style={{ minWidth: 0 }}>
          <span className={`kind kind-${span.kind}`}>{span.kind}</span>
          <h2 style={{ margin: 0, overflowWrap: 'anywhere' }}>{span.name}</h2>
        </div>
        {/* OTel's `unset` is no status at all: only ok and error are shown. */}
        {span.status !== 'unset' && <Badge tone={error ? 'error' : 'ok'}>{span.status}</Badge>}
      </div>
      {error && (
        <div className="error-detail" data-testid="span-error">
          <strong>{span.error_type ?? 'Error'}</strong>
          {span.error_message && <div>{terms.length ? highlight(span.error_message, terms) : span.error_message}</div>}
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
        {span.prompt_name && (
          <>
            <dt>Prompt</dt>
            <dd>
              <Link
                to={`/projects/${projectId}/prompts/${encodeURIComponent(span.prompt_name)}${
                  span.prompt_version ? `?v=${span.prompt_version}` : ''
                }`}
                data-testid="span-prompt"
              >
                {span.prompt_name}
                {span.prompt_version ? ` v${span.prompt_version}` : ''}
              </Link>
            </dd>
          </>
        )}
        {withChildren && (
          <>
            <dt>With children</dt>
            <dd data-testid="span-rollup">
              {fmtCost(withChildren.cost)} · {fmtInt(withChildren.input_tokens)} in ·{' '}
              {fmtInt(withChildren.output_tokens)} out · {fmtInt(withChildren.total_tokens)} total
            </dd>
          </>
        )}
        <dt>{withChildren ? 'Tokens (own)' : 'Tokens'}</dt>
        <dd>
          {fmtInt(span.input_tokens)} in · {fmtInt(span.output_tokens)} out · {fmtInt(span.total_tokens)} total
        </dd>
        {(span.cache_read_tokens > 0 || span.cache_write_tokens > 0) && (
          <>
            <dt>Prompt cache</dt>
            <dd data-testid="span-cache">
              {fmtInt(span.cache_read_tokens)} read · {fmtInt(span.cache_write_tokens)} written
            </dd>
          </>
        )}
        {span.reasoning_tokens > 0 && (
          <>
            <dt>Reasoning</dt>
            <dd>{fmtInt(span.reasoning_tokens)} tokens</dd>
          </>
        )}
        {span.time_to_first_token_ms != null && (
          <>
            <dt>First token</dt>
            <dd data-testid="span-ttft">after {fmtMs(span.time_to_first_token_ms)}</dd>
          </>
        )}
        {span.output_tokens_per_second != null && (
          <>
            <dt>Output speed</dt>
            <dd data-testid="span-tps">{fmtNumber(span.output_tokens_per_second)} tokens/s</dd>
          </>
        )}
        <dt>{withChildren ? 'Cost (own)' : 'Cost'}</dt>
        <dd data-testid="span-cost">
          {fmtCost(span.cost)} <span className="muted">· {costSourceLabel(span.cost_source)}</span>
        </dd>
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
              <Link to={`/projects/${projectId}/sessions/${encodeURIComponent(span.session_id)}`}>
                {span.session_id}
              </Link>
            </dd>
          </>
        )}
        {span.evaluation_run_id && (
          <>
            <dt>Evaluation run</dt>
            <dd>
              <Link to={`/projects/${projectId}/evaluations/runs/${encodeURIComponent(span.evaluation_run_id)}`}>
                {span.evaluation_run_id}
              </Link>
            </dd>
          </>
        )}
      </dl>
      <section>
        <h3>Input</h3>
        {chat ? (
          <SpanPayload text={span.input} other={span.output} side="input" label="Input" terms={terms} />
        ) : (
          <Payload text={span.input} label="Input" terms={terms} />
        )}
      </section>
      <section>
        <h3>Output</h3>
        {chat ? (
          <SpanPayload text={span.output} other={span.input} side="output" label="Output" terms={terms} />
        ) : (
          <Payload text={span.output} label="Output" terms={terms} />
        )}
      </section>
      <section>
        <h3>Metadata</h3>
        {meta.length === 0 ? (
          <p className="muted">No metadata.</p>
        ) : (
          <Attributes values={span.metadata} label="Metadata" />
        )}
      </section>
      <SpanAttributes span={span} />
      <SpanEvents span={span} />
      <SpanLinks span={span} projectId={projectId} />
      <SpanResource span={span} />
      {span.dropped_attributes_count > 0 && (
        <p className="muted" data-testid="span-dropped">
          {fmtInt(span.dropped_attributes_count)} attributes, events or links were dropped past their caps.
        </p>
      )}
    </aside>
  );
}
