import { useQuery } from '@tanstack/react-query';
import { api } from './api';
import { fmtInt, fmtNumber } from './format';
import type { Score, ScoreConfig, ScoreSummary, SqlResult } from './types';

/**
 * Scores as the pages show them (docs/scores.md): a score's value by its type, a list item's per-name
 * summary, and the score names a project knows (for the filter bar, the columns and the widget editor).
 */

export const SCORE_SOURCES: Record<Score['source'], string> = {
  api: 'API',
  evaluator: 'evaluator',
  annotation: 'annotation',
};

/** A score's value as read: the label of a categorical or boolean score, the number of a numeric one. */
export function scoreValue(s: Pick<Score, 'data_type' | 'value' | 'string_value'>): string {
  if (s.data_type === 'numeric') return fmtNumber(s.value);
  return s.string_value ?? (s.data_type === 'boolean' ? (s.value ? 'true' : 'false') : fmtNumber(s.value));
}

/** The label categorical scores gave most often, and how often. */
export function topLabel(summary: ScoreSummary): [string, number] | null {
  let best: [string, number] | null = null;
  for (const [label, n] of Object.entries(summary.values ?? {})) if (!best || n > best[1]) best = [label, n];
  return best;
}

/** A list item's summary of one score name: `avg 0.83 · 4` or `helpful (3/4)`. */
export function summaryText(summary: ScoreSummary): string {
  if (summary.data_type === 'categorical') {
    const top = topLabel(summary);
    return top ? `${top[0]} (${fmtInt(top[1])}/${fmtInt(summary.count)})` : `${fmtInt(summary.count)}`;
  }
  const avg =
    summary.avg === null
      ? '–'
      : summary.data_type === 'boolean'
        ? `${Math.round(summary.avg * 100)}% true`
        : `avg ${fmtNumber(summary.avg)}`;
  return `${avg} · ${fmtInt(summary.count)}`;
}

export type KnownScoreName = { name: string; data_type: Score['data_type']; categories?: string[] };

/** The project's score configs (settings, the evaluator form and the score names below). */
export function useScoreConfigs(projectId: string, includeArchived = false) {
  return useQuery({
    queryKey: ['score-configs', projectId],
    staleTime: 30_000,
    queryFn: () => api<{ data: ScoreConfig[] }>('/score-configs', { query: { project_id: projectId, limit: 200 } }),
    select: (d) => (includeArchived ? d.data : d.data.filter((c) => !c.archived)),
  });
}

/**
 * The score names a project has: its configs' and those scores carried in the last 90 days (public SQL,
 * `scores` table; none when SQL refuses). Configs first, then the most used names.
 */
export function useScoreNames(projectId: string): KnownScoreName[] {
  const configs = useScoreConfigs(projectId);
  const seen = useQuery({
    queryKey: ['score-names', projectId],
    staleTime: 60_000,
    retry: false,
    queryFn: async () => {
      const query =
        'SELECT name, any(data_type) AS t, count() AS n FROM scores WHERE created_at >= now() - INTERVAL 90 DAY GROUP BY name ORDER BY n DESC LIMIT 100';
      const result = await api<SqlResult>('/sql', { method: 'POST', body: { query, project_id: projectId } });
      return result.rows.map((r) => ({ name: String(r[0]), data_type: String(r[1]) as Score['data_type'] }));
    },
  });
  const out = new Map<string, KnownScoreName>();
  for (const c of configs.data ?? [])
    out.set(c.name, { name: c.name, data_type: c.data_type, categories: c.categories?.map((x) => x.label) });
  for (const s of seen.data ?? []) if (!out.has(s.name)) out.set(s.name, s);
  return [...out.values()];
}
