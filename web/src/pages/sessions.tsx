import { useEffect, useState } from 'react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { api, isNotFound } from '../api';
import { parseFilterParam } from '../filters';
import { FilterBar } from '../components/filter-bar';
import { useProject } from '../project';
import { fmtCost, fmtInt, fmtMs } from '../format';
import { Empty, ErrorBox, Loading, NotFound, Pager, Time, useTitle } from '../components/ui';
import type { Page, Predicate, SessionDetail, SessionSummary, TraceItem } from '../types';
import { TEXT_SCOPES, TextSearchInputs, type TextScope } from './traces/text-match';
import { TraceScores } from '../components/scores';

const LIMIT = 50;

export function SessionsPage() {
  const { projectId, project } = useProject();
  useTitle(`Sessions · ${project.name}`);
  const [params, setParams] = useSearchParams();
  const navigate = useNavigate();
  const page = Math.max(0, Number(params.get('page')) || 0);
  // Full-text search over the sessions' spans (`text_query`, `text_scope`) and the trace list's filters
  // (metadata too): a session is listed when one of its traces matches them all; its totals still count
  // all its traces.
  const text = params.get('text') ?? '';
  const filters = parseFilterParam(params.get('filters'));
  const scope = (TEXT_SCOPES.find((x) => x.value === params.get('scope'))?.value ?? 'all') as TextScope;
  const [typed, setTyped] = useState(text);
  useEffect(() => setTyped(text), [text]);
  const update = (next: { text?: string; scope?: TextScope; page?: number; filters?: Predicate[] }) => {
    const out = new URLSearchParams();
    const t = (next.text ?? text).trim() ? (next.text ?? text) : '';
    const sc = next.scope ?? scope;
    const fs = next.filters ?? filters;
    if (t) out.set('text', t);
    if (sc !== 'all') out.set('scope', sc);
    if (fs.length) out.set('filters', JSON.stringify(fs));
    if (next.page) out.set('page', String(next.page));
    setParams(out);
  };
  useEffect(() => {
    if (typed === text) return;
    const t = setTimeout(() => update({ text: typed }), 350);
    return () => clearTimeout(t);
  });
  const sessions = useQuery({
    queryKey: ['sessions', projectId, page, text, scope, JSON.stringify(filters)],
    placeholderData: keepPreviousData,
    queryFn: ({ signal }) =>
      api<Page<SessionSummary>>('/sessions', {
        signal,
        query: {
          project_id: projectId,
          limit: LIMIT,
          page,
          text_query: text.trim() ? text.slice(0, 512) : undefined,
          text_scope: text.trim() && scope !== 'all' ? scope : undefined,
          filters: filters.length ? JSON.stringify(filters) : undefined,
        },
      }),
  });
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Sessions</h1>
          <div className="muted">Conversations: traces that share a session ID, most recent first.</div>
        </div>
      </div>
      <div className="toolbar">
        <TextSearchInputs
          label="Search sessions by the text of their inputs, outputs and errors"
          scopeLabel="Search sessions in"
          value={typed}
          onChange={setTyped}
          onSubmit={() => update({ text: typed })}
          scope={scope}
          onScope={(next) => update({ scope: next })}
        />
      </div>
      <FilterBar
        projectId={projectId}
        filters={filters}
        onChange={(next: Predicate[]) => update({ filters: next })}
        exclude={['signal_id']}
      />
      {sessions.isPending ? (
        <Loading rows={8} />
      ) : sessions.error ? (
        <ErrorBox error={sessions.error} />
      ) : sessions.data.data.length === 0 ? (
        text || filters.length ? (
          <Empty title="No sessions match">No trace of a session matches the search and every filter.</Empty>
        ) : (
          <Empty title="No sessions yet">Spans with a session_id group their traces into sessions.</Empty>
        )
      ) : (
        <>
          <div className="table-wrap">
            <table className="data" data-testid="session-table">
              <thead>
                <tr>
                  <th>Session</th>
                  <th>User</th>
                  <th className="num">Traces</th>
                  <th>First</th>
                  <th>Last</th>
                  <th className="num hide-phone">Tokens in / out</th>
                  <th className="num">Cost</th>
                  <th className="num">Errors</th>
                  <th className="num hide-phone">Duration</th>
                </tr>
              </thead>
              <tbody>
                {sessions.data.data.map((s) => (
                  <tr
                    data-testid="session-row"
                    key={s.session_id}
                    className="clickable"
                    onClick={() => navigate(`/projects/${projectId}/sessions/${encodeURIComponent(s.session_id)}`)}
                  >
                    <td className="ellipsis" style={{ maxWidth: 260 }}>
                      <Link
                        to={`/projects/${projectId}/sessions/${encodeURIComponent(s.session_id)}`}
                        onClick={(e) => e.stopPropagation()}
                      >
                        {s.session_id}
                      </Link>
                    </td>
                    <td>{s.user_id ?? <span className="muted">–</span>}</td>
                    <td className="num">{fmtInt(s.trace_count)}</td>
                    <td className="nowrap">
                      <Time iso={s.first_trace_time} short />
                    </td>
                    <td className="nowrap">
                      <Time iso={s.last_trace_time} short />
                    </td>
                    <td className="num hide-phone">
                      {fmtInt(s.total_input_tokens)} / {fmtInt(s.total_output_tokens)}
                    </td>
                    <td className="num">{fmtCost(s.total_cost)}</td>
                    <td className="num" data-testid="session-errors">
                      {s.error_count ? <span style={{ color: 'var(--error)' }}>{fmtInt(s.error_count)}</span> : '0'}
                    </td>
                    <td className="num hide-phone" data-testid="session-duration">
                      {fmtMs(s.duration_ms)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager page={page} limit={LIMIT} total={sessions.data.meta.total} onPage={(p) => update({ page: p })} />
        </>
      )}
    </div>
  );
}

/** The text a person would read from a stored input or output: a chat's last message, else the text. */
export function chatText(text: string | null, prefer: 'user' | 'assistant'): string | null {
  if (text === null) return null;
  try {
    const parsed = JSON.parse(text) as unknown;
    const messages = Array.isArray(parsed) ? parsed : (parsed as { messages?: unknown })?.messages;
    if (Array.isArray(messages)) {
      const mine = messages.filter((m) => (m as { role?: string })?.role === prefer);
      const last = (mine.at(-1) ?? messages.at(-1)) as { content?: unknown } | undefined;
      if (last && typeof last.content === 'string') return last.content;
    }
    if (typeof parsed === 'string') return parsed;
    for (const key of ['content', 'text', 'answer', 'output', 'query', 'question', 'input']) {
      const v = (parsed as Record<string, unknown>)?.[key];
      if (typeof v === 'string') return v;
    }
    return JSON.stringify(parsed, null, 2);
  } catch {
    return text;
  }
}

function Turn({ trace, projectId }: { trace: TraceItem; projectId: string }) {
  const input = chatText(trace.input, 'user');
  const output = chatText(trace.output, 'assistant');
  return (
    <div className="turn" data-testid="session-turn">
      {input && <div className="bubble user">{input.length > 2000 ? `${input.slice(0, 2000)}…` : input}</div>}
      {output && <div className="bubble assistant">{output.length > 2000 ? `${output.slice(0, 2000)}…` : output}</div>}
      <div className="turn-meta">
        <Link to={`/projects/${projectId}/traces/${encodeURIComponent(trace.trace_id)}`}>
          {trace.name || 'trace'} →
        </Link>
        <Time iso={trace.trace_start_time} />
        <span>{fmtMs(trace.duration_ms)}</span>
        <span>{fmtInt((trace.total_input_tokens ?? 0) + (trace.total_output_tokens ?? 0))} tokens</span>
        <span>{fmtCost(trace.total_cost ?? 0)}</span>
        {trace.error_count > 0 && <span className="badge error">{trace.error_count} errors</span>}
      </div>
    </div>
  );
}

export function SessionPage() {
  const { projectId } = useProject();
  const { sessionId = '' } = useParams();
  useTitle(`Session ${sessionId}`);
  const session = useQuery({
    queryKey: ['session', projectId, sessionId],
    queryFn: ({ signal }) =>
      api<SessionDetail>(`/sessions/${encodeURIComponent(sessionId)}`, { signal, query: { project_id: projectId } }),
  });
  if (session.isPending) return <Loading rows={6} />;
  if (session.error) {
    if (isNotFound(session.error))
      return <NotFound what="session" back={{ to: `/projects/${projectId}/sessions`, label: 'Back to sessions' }} />;
    return <ErrorBox error={session.error} />;
  }
  const s = session.data;
  return (
    <div className="page">
      <div className="page-head">
        <div style={{ minWidth: 0 }}>
          <div className="crumbs">
            <Link to={`/projects/${projectId}/sessions`}>Sessions</Link> /
          </div>
          <h1 style={{ overflowWrap: 'anywhere' }}>{s.session_id}</h1>
          <div className="muted">
            {fmtInt(s.trace_count)} traces · {s.user_id ? `user ${s.user_id} · ` : ''}
            <Time iso={s.first_trace_time} /> – <Time iso={s.last_trace_time} /> · {fmtCost(s.total_cost)} ·{' '}
            {fmtInt(s.total_input_tokens + s.total_output_tokens)} tokens
          </div>
        </div>
        <Link
          className="button"
          to={`/projects/${projectId}/traces?filters=&q=${encodeURIComponent(s.session_id)}&range=all`}
        >
          As a trace list
        </Link>
      </div>
      <TraceScores scores={s.scores ?? []} />
      <div className="conversation card">
        {s.traces.map((t) => (
          <Turn key={t.trace_id} trace={t} projectId={projectId} />
        ))}
      </div>
      {s.truncated && (
        <div className="muted">Only the first {fmtInt(s.traces.length)} traces of this session are shown.</div>
      )}
    </div>
  );
}
