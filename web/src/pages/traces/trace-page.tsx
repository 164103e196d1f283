import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Link, useParams, useSearchParams } from 'react-router';
import { api, isNotFound } from '../../api';
import { useProject } from '../../project';
import { fmtCost, fmtInt, fmtMs } from '../../format';
import { CopyButton, ErrorBox, Loading, NotFound, Time, useTitle } from '../../components/ui';
import type { TraceDetail } from '../../types';
import { buildTree, flatten, traceBounds } from './span-tree';
import { Waterfall } from './waterfall';
import { SpanPanel } from './span-panel';
import { textTerms } from '../../components/highlight';
import { TraceScores } from '../../components/scores';
import { TraceComments } from './comments';

function Stat({ label, value, title }: { label: string; value: React.ReactNode; title?: string }) {
  return (
    <div className="stat" title={title}>
      <span className="label">{label}</span>
      <span className="value">{value}</span>
    </div>
  );
}

/** `/projects/{project_id}/traces/{trace_id}` (= `trace_url`); `?span=` keeps the selected span. */
export function TracePage() {
  const { projectId } = useProject();
  const { traceId = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const trace = useQuery({
    queryKey: ['trace', projectId, traceId],
    queryFn: ({ signal }) =>
      api<TraceDetail>(`/traces/${encodeURIComponent(traceId)}`, { signal, query: { project_id: projectId } }),
  });
  useTitle(trace.data ? `${trace.data.name} · trace` : 'Trace');
  const [collapsed, setCollapsed] = useState<Set<string>>(() => new Set());
  const tree = useMemo(() => (trace.data ? buildTree(trace.data.spans) : []), [trace.data]);
  const rows = useMemo(() => flatten(tree, collapsed), [tree, collapsed]);
  const bounds = useMemo(() => traceBounds(trace.data?.spans ?? []), [trace.data]);
  const selectedId = params.get('span') ?? tree[0]?.span.span_id ?? null;
  // Opened from a text search (`?span=…&text=…`): the matching span is scrolled to, its terms marked.
  const text = params.get('text') ?? '';
  const terms = useMemo(() => textTerms(text), [text]);
  const linkedSpan = useRef(params.get('span'));
  useEffect(() => {
    const id = linkedSpan.current;
    if (!id || !trace.data) return;
    linkedSpan.current = null;
    document.querySelector(`[data-span-id="${CSS.escape(id)}"]`)?.scrollIntoView({ block: 'center' });
  }, [trace.data]);
  const selected = trace.data?.spans.find((s) => s.span_id === selectedId) ?? null;
  const selectedNode = useMemo(
    () => flatten(tree, new Set()).find((r) => r.span.span_id === selectedId),
    [tree, selectedId],
  );
  const onSelect = useCallback(
    (id: string) =>
      setParams(
        (p) => {
          const next = new URLSearchParams(p);
          next.set('span', id);
          return next;
        },
        { replace: true },
      ),
    [setParams],
  );
  const onToggle = useCallback(
    (id: string) =>
      setCollapsed((c) => {
        const next = new Set(c);
        if (next.has(id)) next.delete(id);
        else next.add(id);
        return next;
      }),
    [],
  );

  if (trace.isPending) return <Loading rows={10} label="Loading the trace…" />;
  if (trace.error) {
    if (isNotFound(trace.error))
      return <NotFound what="trace" back={{ to: `/projects/${projectId}/traces`, label: 'Back to traces' }} />;
    return <ErrorBox error={trace.error} title="The trace could not be read" />;
  }
  const t = trace.data;
  const totalTokens = (t.total_input_tokens ?? 0) + (t.total_output_tokens ?? 0);
  const models = [...new Set(t.spans.map((s) => s.model_name).filter(Boolean))];
  return (
    <div className="page">
      <div className="page-head">
        <div style={{ minWidth: 0 }}>
          <div className="crumbs">
            <Link to={`/projects/${projectId}/traces`}>Traces</Link> /
          </div>
          <h1 style={{ overflowWrap: 'anywhere' }}>{t.name || '(unnamed trace)'}</h1>
          <div className="row muted mono">
            {t.trace_id} <CopyButton text={t.trace_id} label="Copy ID" />
          </div>
        </div>
        {t.session_id && (
          <Link className="button" to={`/projects/${projectId}/sessions/${encodeURIComponent(t.session_id)}`}>
            Session {t.session_id.length > 24 ? `${t.session_id.slice(0, 24)}…` : t.session_id} →
          </Link>
        )}
      </div>
      <div className="card trace-summary" data-testid="trace-summary">
        <Stat label="Started" value={<Time iso={t.trace_start_time} />} />
        <Stat label="Duration" value={fmtMs(t.duration_ms)} />
        <Stat label="Spans" value={fmtInt(t.span_count)} />
        <Stat
          label="Errors"
          value={t.error_count ? <span style={{ color: 'var(--error)' }}>{fmtInt(t.error_count)}</span> : '0'}
        />
        <Stat
          label="Tokens"
          value={fmtInt(totalTokens)}
          title={`${fmtInt(t.total_input_tokens)} in / ${fmtInt(t.total_output_tokens)} out`}
        />
        <Stat label="Cost" value={fmtCost(t.total_cost ?? 0)} />
        {models.length > 0 && <Stat label={models.length > 1 ? 'Models' : 'Model'} value={models.join(', ')} />}
        {t.user_id && <Stat label="User" value={t.user_id} />}
        {/* The app's release and version: the user's metadata keys (docs/traces.md, "Metadata and attributes"). */}
        {t.metadata_map?.release && <Stat label="Release" value={t.metadata_map.release} />}
        {t.metadata_map?.version && <Stat label="Version" value={t.metadata_map.version} />}
      </div>
      <TraceScores
        scores={t.scores ?? []}
        spanNames={new Map(t.spans.map((s) => [s.span_id, s.name]))}
        selectedSpanId={selectedId}
        onSelectSpan={onSelect}
      />
      {t.truncated && (
        <div className="refusal">
          This trace is too large to show whole: the first {fmtInt(t.spans.length)} of {fmtInt(t.span_count)} spans are
          shown.
        </div>
      )}
      <div className="trace-layout">
        <Waterfall
          rows={rows}
          startMs={bounds.startMs}
          totalMs={bounds.endMs - bounds.startMs}
          selected={selectedId}
          collapsed={collapsed}
          onSelect={onSelect}
          onToggle={onToggle}
        />
        {selected ? (
          <SpanPanel
            key={selected.span_id}
            span={selected}
            projectId={projectId}
            terms={terms}
            withChildren={selectedNode?.children.length ? selectedNode.rollup : undefined}
          />
        ) : (
          <div className="card muted">Select a span to see its input, output and metadata.</div>
        )}
      </div>
      <TraceComments traceId={t.trace_id} />
    </div>
  );
}
