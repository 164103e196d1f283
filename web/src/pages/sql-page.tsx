import { useRef, useState } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { api, ApiError } from '../api';
import { useProject } from '../project';
import { fmtCell, fmtInt, fmtMs } from '../format';
import { Empty, ErrorBox, Loading, useTitle } from '../components/ui';
import type { SqlResult, SqlSchema } from '../types';
import { toCsv } from '../csv';

const EXAMPLE = `SELECT model_name, count() AS calls, round(sum(cost), 4) AS cost
FROM spans
WHERE start_time >= now() - INTERVAL 1 DAY AND model_name != ''
GROUP BY model_name
ORDER BY calls DESC
LIMIT 20`;

function download(name: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** `/projects/{project_id}/sql`: the curated schema beside an editor; Ctrl/Cmd+Enter runs. */
export function SqlPage() {
  const { projectId, project } = useProject();
  useTitle(`SQL · ${project.name}`);
  const storageKey = `sightline:sql:${projectId}`;
  const [query, setQuery] = useState(() => localStorage.getItem(storageKey) ?? EXAMPLE);
  const editor = useRef<HTMLTextAreaElement>(null);
  const schema = useQuery({
    queryKey: ['sql-schema', projectId],
    staleTime: 10 * 60_000,
    queryFn: () => api<SqlSchema>('/sql/schema', { query: { project_id: projectId } }),
  });
  const run = useMutation({
    mutationFn: (q: string) => api<SqlResult>('/sql', { method: 'POST', body: { query: q, project_id: projectId } }),
  });
  const execute = () => {
    const q = query.trim();
    if (!q || run.isPending) return;
    localStorage.setItem(storageKey, query);
    run.mutate(q);
  };
  const insert = (text: string) => {
    const el = editor.current;
    if (!el) return setQuery(query + text);
    const { selectionStart: a, selectionEnd: b } = el;
    const next = query.slice(0, a) + text + query.slice(b);
    setQuery(next);
    requestAnimationFrame(() => {
      el.focus();
      el.setSelectionRange(a + text.length, a + text.length);
    });
  };
  const refused = run.error instanceof ApiError && run.error.status === 400;
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>SQL console</h1>
          <div className="muted">One SELECT over the curated schema, scoped to this project; at most 10,000 rows.</div>
        </div>
      </div>
      <div className="sql-layout">
        <div className="stack">
          <textarea
            ref={editor}
            className="sql-editor"
            aria-label="SQL query"
            spellCheck={false}
            value={query}
            onChange={(e) => setQuery(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
                e.preventDefault();
                execute();
              }
            }}
          />
          <div className="row">
            <button className="primary" onClick={execute} disabled={run.isPending}>
              {run.isPending ? 'Running…' : 'Run'}
            </button>
            <span className="muted">Ctrl/⌘ + Enter</span>
            {run.data && (
              <>
                <span className="grow" />
                <span data-testid="sql-summary">
                  {fmtInt(run.data.row_count)} {run.data.row_count === 1 ? 'row' : 'rows'} ·{' '}
                  {fmtMs(run.data.elapsed_ms)}
                  {run.data.truncated && ' · truncated at 10,000 rows'}
                </span>
                <button
                  className="small"
                  onClick={() => download(`sightline-${new Date().toISOString().slice(0, 19)}.csv`, toCsv(run.data))}
                >
                  Download CSV
                </button>
              </>
            )}
          </div>
          {run.error &&
            (refused ? (
              <div className="refusal" role="alert" data-testid="sql-refusal">
                <strong>The query was refused.</strong> {(run.error as ApiError).detail}
              </div>
            ) : (
              <ErrorBox error={run.error} title="The query failed" />
            ))}
          {run.data &&
            (run.data.rows.length === 0 ? (
              <Empty title="No rows" />
            ) : (
              <div className="table-wrap result-table">
                <table className="data compact" data-testid="sql-result">
                  <thead>
                    <tr>
                      {run.data.columns.map((c, i) => (
                        <th key={i} title={c.type}>
                          {c.name}
                        </th>
                      ))}
                    </tr>
                  </thead>
                  <tbody>
                    {run.data.rows.slice(0, 1000).map((row, i) => (
                      <tr key={i}>
                        {row.map((v, j) => (
                          <td key={j} className={typeof v === 'number' ? 'num' : undefined}>
                            {fmtCell(v)}
                          </td>
                        ))}
                      </tr>
                    ))}
                  </tbody>
                </table>
                {run.data.rows.length > 1000 && (
                  <div className="muted" style={{ padding: '0.5rem' }}>
                    The first 1,000 rows are shown; the CSV has all {fmtInt(run.data.rows.length)}.
                  </div>
                )}
              </div>
            ))}
        </div>
        <aside className="card schema" aria-label="Schema">
          <h3>Schema</h3>
          {schema.isPending ? (
            <Loading rows={3} />
          ) : schema.error ? (
            <ErrorBox error={schema.error} />
          ) : (
            schema.data.tables.map((t) => (
              <details key={t.name} open={t.name === 'traces'}>
                <summary>{t.name}</summary>
                <ul>
                  {t.columns.map((c) => (
                    <li key={c.name}>
                      <button title={`Insert ${c.name}`} onClick={() => insert(c.name)}>
                        {c.name}
                      </button>
                      <span className="muted" title={c.type}>
                        {c.type}
                      </span>
                    </li>
                  ))}
                </ul>
              </details>
            ))
          )}
        </aside>
      </div>
    </div>
  );
}
