import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api } from '../api';
import { useProject } from '../project';
import { SCORE_SOURCES, scoreValue, summaryText } from '../scores';
import type { Member, Score, ScoreSummary } from '../types';
import { Badge, Time } from './ui';

/** The workspace's members by user id, to name a score's author (none for a viewer who can't list them). */
function useMemberNames(): Map<string, string> {
  const { project } = useProject();
  const members = useQuery({
    queryKey: ['members', project.workspace_id],
    staleTime: 5 * 60_000,
    retry: false,
    queryFn: () => api<{ data: Member[] }>(`/workspaces/${project.workspace_id}/members`),
  });
  return new Map((members.data?.data ?? []).map((m) => [m.user_id, m.name || m.email]));
}

const SOURCE_TONE: Record<Score['source'], 'info' | 'ok' | 'neutral'> = {
  api: 'neutral',
  evaluator: 'info',
  annotation: 'ok',
};

/** Who gave the score: the evaluator (and its version) that judged, or the person. */
function ScoreAuthor({ score, names }: { score: Score; names: Map<string, string> }) {
  const { projectId } = useProject();
  if (score.source === 'evaluator' && score.evaluator_id)
    return (
      <Link to={`/projects/${projectId}/evaluators/${encodeURIComponent(score.evaluator_id)}`}>
        evaluator{score.evaluator_version != null ? ` v${score.evaluator_version}` : ''}
      </Link>
    );
  if (score.author_user_id)
    return <span title={score.author_user_id}>{names.get(score.author_user_id) ?? score.author_user_id}</span>;
  return <span className="muted">–</span>;
}

/** A judge's reasoning (the score's comment): its first line, the whole text on demand. */
function Comment({ text }: { text: string | null }) {
  if (!text) return <span className="muted">–</span>;
  const first = text.split('\n')[0]!;
  if (text.length <= 120 && first === text) return <span className="score-comment">{text}</span>;
  return (
    <details className="score-comment">
      <summary>{first.length > 120 ? `${first.slice(0, 120)}…` : first}</summary>
      <div className="score-comment-full">{text}</div>
    </details>
  );
}

/**
 * The scores of a trace and of its spans (`GET /traces/{id}`'s `scores`), newest last: each with its
 * value or label, source, author or evaluator (+version) and the judge's reasoning. A span score names
 * its span; clicking it selects the span.
 */
export function TraceScores({
  scores,
  spanNames,
  selectedSpanId,
  onSelectSpan,
}: {
  scores: Score[];
  spanNames?: Map<string, string>;
  selectedSpanId?: string | null;
  onSelectSpan?: (spanId: string) => void;
}) {
  const names = useMemberNames();
  if (!scores.length) return null;
  return (
    <section className="card scores-card" aria-label="Scores" data-testid="trace-scores">
      <h3>Scores</h3>
      <div className="table-wrap">
        <table className="data compact">
          <thead>
            <tr>
              <th>Name</th>
              <th>Value</th>
              <th>On</th>
              <th>Source</th>
              <th>By</th>
              <th>Reasoning / comment</th>
              <th className="hide-phone">When</th>
            </tr>
          </thead>
          <tbody>
            {scores.map((s) => (
              <tr
                key={s.score_id}
                data-testid="score-row"
                data-span-id={s.span_id ?? ''}
                className={s.span_id && s.span_id === selectedSpanId ? 'selected' : undefined}
              >
                <td className="mono">{s.name}</td>
                <td data-testid="score-value">
                  <strong>{scoreValue(s)}</strong>
                </td>
                <td>
                  {s.span_id ? (
                    <button
                      type="button"
                      className="link small"
                      title={`Span ${s.span_id}`}
                      onClick={() => onSelectSpan?.(s.span_id!)}
                    >
                      {spanNames?.get(s.span_id) ?? s.span_id}
                    </button>
                  ) : s.trace_id ? (
                    'trace'
                  ) : (
                    'session'
                  )}
                </td>
                <td>
                  <Badge tone={SOURCE_TONE[s.source]}>{SCORE_SOURCES[s.source] ?? s.source}</Badge>
                </td>
                <td>
                  <ScoreAuthor score={s} names={names} />
                </td>
                <td data-testid="score-comment">
                  <Comment text={s.comment} />
                </td>
                <td className="hide-phone nowrap">
                  <Time iso={s.updated_at} short />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** A list item's score summaries as small chips: `helpfulness avg 0.8 · 3`. */
export function ScoreChips({ summaries, only }: { summaries: ScoreSummary[] | undefined; only?: string }) {
  const shown = (summaries ?? []).filter((s) => only === undefined || s.name === only);
  if (!shown.length) return <span className="muted">–</span>;
  return (
    <span className="score-chips">
      {shown.map((s) => (
        <span key={s.name} className="badge score-chip" title={`${s.name}: ${summaryText(s)}`} data-score-name={s.name}>
          {only === undefined ? (
            <>
              <span className="score-chip-name">{s.name}</span> {summaryText(s)}
            </>
          ) : (
            summaryText(s)
          )}
        </span>
      ))}
    </span>
  );
}
