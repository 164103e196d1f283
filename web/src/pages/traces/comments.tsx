import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ApiError } from '../../api';
import { useSession } from '../../auth';
import { useProject } from '../../project';
import { Time } from '../../components/ui';
import type { Page, TraceComment } from '../../types';

/**
 * A trace's comments with their authors (docs/annotation.md), and a box to add one (MEMBER+). The
 * author or an ADMIN may delete a comment. Every field is text React escapes.
 */
export function TraceComments({ traceId }: { traceId: string }) {
  const { projectId, canWrite, isAdmin } = useProject();
  const me = useSession().data?.user.id;
  const client = useQueryClient();
  const key = ['comments', projectId, traceId];
  const comments = useQuery({
    queryKey: key,
    queryFn: ({ signal }) =>
      api<Page<TraceComment>>('/comments', { signal, query: { project_id: projectId, trace_id: traceId, limit: 200 } }),
  });
  const [text, setText] = useState('');
  const refresh = () => {
    void client.invalidateQueries({ queryKey: key });
    void client.invalidateQueries({ queryKey: ['trace', projectId, traceId] });
  };
  const add = useMutation({
    mutationFn: () =>
      api<TraceComment>('/comments', { method: 'POST', body: { project_id: projectId, trace_id: traceId, text } }),
    onSuccess: () => {
      setText('');
      refresh();
    },
  });
  const remove = useMutation({
    mutationFn: (id: string) => api(`/comments/${id}`, { method: 'DELETE', query: { project_id: projectId } }),
    onSuccess: refresh,
  });
  const list = comments.data?.data ?? [];
  return (
    <section className="card stack" data-testid="trace-comments" aria-label="Comments">
      <h2 style={{ margin: 0 }}>Comments ({list.length})</h2>
      {list.map((c) => (
        <div key={c.id} className="stack" style={{ gap: '0.2rem' }} data-testid="comment">
          <div className="row muted">
            <strong data-testid="comment-author">{c.author_name ?? 'a deleted user'}</strong>
            <Time iso={c.created_at} />
            {c.span_id && <span className="mono">span {c.span_id}</span>}
            {(c.author_user_id === me || isAdmin) && (
              <button className="small ghost" onClick={() => remove.mutate(c.id)} aria-label="Delete comment">
                Delete
              </button>
            )}
          </div>
          <div style={{ whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }} data-testid="comment-text">
            {c.text}
          </div>
        </div>
      ))}
      {canWrite && (
        <form
          className="stack"
          onSubmit={(e) => {
            e.preventDefault();
            if (text.trim()) add.mutate();
          }}
        >
          <textarea
            aria-label="New comment"
            value={text}
            maxLength={4096}
            rows={2}
            placeholder="Add a comment"
            onChange={(e) => setText(e.target.value)}
          />
          <div className="row">
            <button className="primary" type="submit" disabled={!text.trim() || add.isPending}>
              Comment
            </button>
            {add.error && (
              <span className="form-error">{add.error instanceof ApiError ? add.error.detail : String(add.error)}</span>
            )}
          </div>
        </form>
      )}
    </section>
  );
}
