import { Link } from 'react-router';
import { fmtMs } from '../../format';
import { Time } from '../../components/ui';
import type { Span, SpanEvent } from '../../types';

/**
 * The parts of a span beyond the spec's fields (docs/spans.md, "More span fields"): its events
 * (exceptions with their stack trace), its links to other spans, the instrumentation's attributes
 * and the producer's resource attributes, shown apart from the span's own metadata.
 */

const COST_SOURCES: Record<Span['cost_source'], string> = {
  sent: 'sent by the producer',
  computed: 'computed from the price table',
  none: 'no cost known',
};

export function costSourceLabel(source: Span['cost_source'] | undefined): string {
  return COST_SOURCES[source ?? 'none'] ?? source ?? '';
}

export function Attributes({ values, label }: { values: Record<string, string>; label: string }) {
  const entries = Object.entries(values);
  if (entries.length === 0) return null;
  return (
    <table className="data compact" aria-label={label}>
      <tbody>
        {entries.map(([k, v]) => (
          <tr key={k}>
            <td className="mono">{k}</td>
            <td style={{ overflowWrap: 'anywhere' }}>{v}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** An OTel `exception` event: its type and message first, the stack trace as it was written. */
function ExceptionEvent({ event }: { event: SpanEvent }) {
  const {
    'exception.type': type,
    'exception.message': message,
    'exception.stacktrace': stack,
    ...rest
  } = event.attributes;
  return (
    <div className="error-detail stack" style={{ gap: '0.3rem' }}>
      <strong>{type ?? 'Exception'}</strong>
      {message && <div>{message}</div>}
      {stack && (
        <pre className="payload" aria-label="Stack trace">
          {stack}
        </pre>
      )}
      <Attributes values={rest} label="Exception attributes" />
    </div>
  );
}

export function SpanEvents({ span }: { span: Span }) {
  const events = span.events ?? [];
  const start = Date.parse(span.start_time);
  return (
    <section data-testid="span-events">
      <h3>Events</h3>
      {events.length === 0 ? (
        <p className="muted">No events.</p>
      ) : (
        <ol className="span-events">
          {events.map((e, i) => (
            <li key={i} data-testid="span-event">
              <div className="row spread">
                <strong className="mono">{e.name}</strong>
                <span className="muted" title={e.time}>
                  +{fmtMs(Math.max(0, Date.parse(e.time) - start))} · <Time iso={e.time} />
                </span>
              </div>
              {e.name === 'exception' ? (
                <ExceptionEvent event={e} />
              ) : (
                <Attributes values={e.attributes} label={`${e.name} attributes`} />
              )}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

export function SpanLinks({ span, projectId }: { span: Span; projectId: string }) {
  const links = span.links ?? [];
  if (links.length === 0) return null;
  return (
    <section data-testid="span-links">
      <h3>Links</h3>
      <ul className="span-events">
        {links.map((l, i) => (
          <li key={i}>
            <Link
              className="mono"
              to={`/projects/${projectId}/traces/${encodeURIComponent(l.trace_id)}?span=${encodeURIComponent(l.span_id)}`}
            >
              {l.trace_id} / {l.span_id}
            </Link>
            <Attributes values={l.attributes} label="Link attributes" />
          </li>
        ))}
      </ul>
    </section>
  );
}

/**
 * The conventions' attributes no field used (`ai.toolCall.id`, `gen_ai.response.id`, `otel.span.name`):
 * about the span, not the user's metadata (docs/traces.md, "Metadata and attributes"). Open by
 * default: they are what a reader of one span looks for next.
 */
export function SpanAttributes({ span }: { span: Span }) {
  const attributes = span.attributes ?? {};
  const count = Object.keys(attributes).length;
  if (count === 0) return null;
  return (
    <section data-testid="span-attributes">
      <details open>
        <summary>
          <h3 style={{ display: 'inline' }}>Attributes</h3>{' '}
          <span className="muted">({count} of the instrumentation)</span>
        </summary>
        <Attributes values={attributes} label="Attributes" />
      </details>
    </section>
  );
}

export function SpanResource({ span }: { span: Span }) {
  const resource = span.resource ?? {};
  if (Object.keys(resource).length === 0) return null;
  return (
    <section data-testid="span-resource">
      <details>
        <summary>
          <h3 style={{ display: 'inline' }}>Resource</h3>{' '}
          <span className="muted">({Object.keys(resource).length} attributes of the producer)</span>
        </summary>
        <Attributes values={resource} label="Resource attributes" />
      </details>
    </section>
  );
}
