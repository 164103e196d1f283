import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ApiError } from '../api';
import { useProject } from '../project';
import { fmtMs, fmtNumber } from '../format';
import { useScoreConfigs } from '../scores';
import { Badge, Empty, ErrorBox, Loading, Time } from '../components/ui';
import type { LlmConnection, LlmConnectionTest, ScoreConfig } from '../types';

/**
 * Settings of the quality loop (docs/scores.md, docs/evaluators.md, "In the web app"): score configs
 * (the types a score name must fit) and LLM connections (the provider accounts evaluators judge with).
 */

function errorText(error: unknown): string {
  return error instanceof ApiError ? error.detail : String(error);
}

type Category = { label: string; value: string };

/** The categories of a categorical config: a label and a value per row; a row is added or removed. */
function CategoriesEditor({ rows, onChange }: { rows: Category[]; onChange: (rows: Category[]) => void }) {
  const set = (i: number, patch: Partial<Category>) => onChange(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  return (
    <div className="stack" style={{ gap: '0.35rem' }} role="group" aria-label="Categories">
      <span style={{ fontWeight: 500 }}>Categories</span>
      {rows.map((r, i) => (
        <div className="row" key={i}>
          <input
            aria-label={`Category ${i + 1} label`}
            placeholder="label"
            value={r.label}
            maxLength={256}
            onChange={(e) => set(i, { label: e.target.value })}
            className="grow"
          />
          <input
            aria-label={`Category ${i + 1} value`}
            type="number"
            step="any"
            value={r.value}
            onChange={(e) => set(i, { value: e.target.value })}
            style={{ width: 90 }}
          />
          <button
            type="button"
            className="small"
            aria-label={`Remove category ${i + 1}`}
            disabled={rows.length <= 1}
            onClick={() => onChange(rows.filter((_, j) => j !== i))}
          >
            ×
          </button>
        </div>
      ))}
      <div>
        <button
          type="button"
          className="small"
          disabled={rows.length >= 100}
          onClick={() => onChange([...rows, { label: '', value: String(rows.length) }])}
        >
          + Category
        </button>
      </div>
    </div>
  );
}

function configRange(c: ScoreConfig): string {
  if (c.data_type === 'categorical')
    return (c.categories ?? []).map((k) => `${k.label} (${fmtNumber(k.value)})`).join(', ');
  if (c.data_type === 'boolean') return 'true / false';
  if (c.min_value == null && c.max_value == null) return 'any number';
  return `${c.min_value == null ? '−∞' : fmtNumber(c.min_value)} … ${c.max_value == null ? '∞' : fmtNumber(c.max_value)}`;
}

export function ScoreConfigsTab() {
  const { projectId, canWrite } = useProject();
  const client = useQueryClient();
  const configs = useScoreConfigs(projectId, true);
  const [dataType, setDataType] = useState<ScoreConfig['data_type']>('numeric');
  const [categories, setCategories] = useState<Category[]>([
    { label: '', value: '0' },
    { label: '', value: '1' },
  ]);
  const refresh = () => client.invalidateQueries({ queryKey: ['score-configs', projectId] });
  const create = useMutation({
    mutationFn: (body: Record<string, unknown>) =>
      api<ScoreConfig>('/score-configs', { method: 'POST', body: { project_id: projectId, ...body } }),
    onSuccess: () => {
      setCategories([
        { label: '', value: '0' },
        { label: '', value: '1' },
      ]);
      return refresh();
    },
  });
  const archive = useMutation({
    mutationFn: ({ id, archived }: { id: string; archived: boolean }) =>
      api(`/score-configs/${encodeURIComponent(id)}`, { method: 'PATCH', body: { project_id: projectId, archived } }),
    onSuccess: refresh,
  });
  return (
    <section className="stack">
      <p className="muted">
        A score config fixes what a score name means: its type, its range or its categories. Scores of that name are
        checked against it (a score that doesn't fit is refused). A config never changes type; archive it and make a new
        one.
      </p>
      {canWrite && (
        <form
          className="card stack"
          aria-label="New score config"
          onSubmit={(e) => {
            e.preventDefault();
            const form = e.currentTarget;
            const data = new FormData(form);
            const num = (k: string) => (String(data.get(k) ?? '').trim() === '' ? undefined : Number(data.get(k)));
            create.mutate(
              {
                name: String(data.get('name')).trim(),
                data_type: dataType,
                description: String(data.get('description') ?? '').trim() || undefined,
                ...(dataType === 'numeric' ? { min_value: num('min'), max_value: num('max') } : {}),
                ...(dataType === 'categorical'
                  ? { categories: categories.map((c) => ({ label: c.label.trim(), value: Number(c.value) || 0 })) }
                  : {}),
              },
              { onSuccess: () => form.reset() },
            );
          }}
        >
          <div className="grid-form">
            <label>
              Score name
              <input name="name" required maxLength={128} placeholder="e.g. helpfulness" />
            </label>
            <label>
              Type
              <select
                aria-label="Score type"
                value={dataType}
                onChange={(e) => setDataType(e.target.value as ScoreConfig['data_type'])}
              >
                <option value="numeric">numeric</option>
                <option value="categorical">categorical</option>
                <option value="boolean">boolean</option>
              </select>
            </label>
            {dataType === 'numeric' && (
              <>
                <label>
                  Minimum (optional)
                  <input name="min" type="number" step="any" />
                </label>
                <label>
                  Maximum (optional)
                  <input name="max" type="number" step="any" />
                </label>
              </>
            )}
          </div>
          {dataType === 'categorical' && <CategoriesEditor rows={categories} onChange={setCategories} />}
          <label>
            Description (optional)
            <input name="description" maxLength={4096} />
          </label>
          {create.error && <p className="form-error">{errorText(create.error)}</p>}
          <div>
            <button className="primary" type="submit" disabled={create.isPending}>
              Create config
            </button>
          </div>
        </form>
      )}
      {archive.error && <p className="form-error">{errorText(archive.error)}</p>}
      {configs.isPending ? (
        <Loading />
      ) : configs.error ? (
        <ErrorBox error={configs.error} />
      ) : configs.data.length === 0 ? (
        <Empty title="No score configs">Scores of any name are taken as they come until a config names them.</Empty>
      ) : (
        <div className="table-wrap">
          <table className="data" data-testid="score-config-table">
            <thead>
              <tr>
                <th>Name</th>
                <th>Type</th>
                <th>Values</th>
                <th className="hide-phone">Description</th>
                <th className="hide-phone">Created</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {configs.data.map((c) => (
                <tr key={c.id} data-testid="score-config-row">
                  <td className="mono">
                    {c.name} {c.archived && <Badge>archived</Badge>}
                  </td>
                  <td>{c.data_type}</td>
                  <td>{configRange(c)}</td>
                  <td className="hide-phone">{c.description ?? <span className="muted">–</span>}</td>
                  <td className="hide-phone">
                    <Time iso={c.created_at} short />
                  </td>
                  <td className="num">
                    {canWrite && (
                      <button
                        className="small"
                        disabled={archive.isPending}
                        onClick={() => archive.mutate({ id: c.id, archived: !c.archived })}
                      >
                        {c.archived ? 'Unarchive' : 'Archive'}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

const PROVIDERS: { value: LlmConnection['provider']; label: string; hint: string }[] = [
  { value: 'openai', label: 'OpenAI', hint: 'https://api.openai.com/v1 unless given' },
  { value: 'anthropic', label: 'Anthropic', hint: 'https://api.anthropic.com/v1 unless given' },
  {
    value: 'openai_compatible',
    label: 'OpenAI-compatible',
    hint: 'any server with /chat/completions; base URL needed',
  },
];

export function useLlmConnections(projectId: string) {
  return useQuery({
    queryKey: ['llm-connections', projectId],
    queryFn: () => api<{ data: LlmConnection[] }>('/llm-connections', { query: { project_id: projectId, limit: 200 } }),
  });
}

/** A connection's test: one small call; ok with the model and latency, or the fixed error sentence. */
function TestResult({ result }: { result: LlmConnectionTest }) {
  return result.ok ? (
    <span data-testid="connection-test">
      <Badge tone="ok">ok</Badge> {result.model} · {fmtMs(result.latency_ms)}
    </span>
  ) : (
    <span data-testid="connection-test">
      <Badge tone="error">failed</Badge> {result.error}
    </span>
  );
}

export function LlmConnectionsTab() {
  const { projectId, canWrite } = useProject();
  const client = useQueryClient();
  const connections = useLlmConnections(projectId);
  const [provider, setProvider] = useState<LlmConnection['provider']>('openai');
  const [tests, setTests] = useState<Record<string, LlmConnectionTest | 'pending'>>({});
  const refresh = () => client.invalidateQueries({ queryKey: ['llm-connections', projectId] });
  const create = useMutation({
    mutationFn: (body: Record<string, unknown>) =>
      api<LlmConnection>('/llm-connections', { method: 'POST', body: { project_id: projectId, ...body } }),
    onSuccess: refresh,
  });
  const remove = useMutation({
    mutationFn: (id: string) =>
      api(`/llm-connections/${encodeURIComponent(id)}`, { method: 'DELETE', query: { project_id: projectId } }),
    onSuccess: refresh,
  });
  const test = async (id: string) => {
    setTests((t) => ({ ...t, [id]: 'pending' }));
    try {
      const result = await api<LlmConnectionTest>(`/llm-connections/${encodeURIComponent(id)}/test`, {
        method: 'POST',
        body: { project_id: projectId },
      });
      setTests((t) => ({ ...t, [id]: result }));
    } catch (error) {
      setTests((t) => ({ ...t, [id]: { ok: false, error: errorText(error) } }));
    }
  };
  const hint = PROVIDERS.find((p) => p.value === provider)?.hint;
  return (
    <section className="stack">
      <p className="muted">
        The provider accounts LLM-judge evaluators call. A key is stored encrypted and never shown again: only its last
        4 characters are.
      </p>
      {canWrite && (
        <form
          className="card stack"
          aria-label="New LLM connection"
          autoComplete="off"
          onSubmit={(e) => {
            e.preventDefault();
            const form = e.currentTarget;
            const data = new FormData(form);
            const text = (k: string) => String(data.get(k) ?? '').trim() || undefined;
            create.mutate(
              {
                name: text('name'),
                provider,
                base_url: text('base_url'),
                api_key: String(data.get('api_key') ?? ''),
                default_model: text('default_model'),
              },
              // The key leaves the form as soon as it is sent, whatever the answer.
              { onSettled: () => form.reset() },
            );
          }}
        >
          <div className="grid-form">
            <label>
              Connection name
              <input name="name" required maxLength={128} placeholder="e.g. openai-judge" />
            </label>
            <label>
              Provider
              <select
                aria-label="Provider"
                value={provider}
                onChange={(e) => setProvider(e.target.value as LlmConnection['provider'])}
              >
                {PROVIDERS.map((p) => (
                  <option key={p.value} value={p.value}>
                    {p.label}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Base URL {provider === 'openai_compatible' ? '' : '(optional)'}
              <input
                name="base_url"
                type="url"
                maxLength={2048}
                placeholder={hint}
                required={provider === 'openai_compatible'}
              />
            </label>
            <label>
              API key
              <input name="api_key" type="password" required maxLength={1024} autoComplete="new-password" />
            </label>
            <label>
              Default model (optional)
              <input name="default_model" maxLength={200} placeholder="e.g. gpt-4o-mini" />
            </label>
          </div>
          {create.error && <p className="form-error">{errorText(create.error)}</p>}
          <div>
            <button className="primary" type="submit" disabled={create.isPending}>
              Add connection
            </button>
          </div>
        </form>
      )}
      {remove.error && <p className="form-error">{errorText(remove.error)}</p>}
      {connections.isPending ? (
        <Loading />
      ) : connections.error ? (
        <ErrorBox error={connections.error} />
      ) : connections.data.data.length === 0 ? (
        <Empty title="No LLM connections">Add one to create LLM-judge evaluators.</Empty>
      ) : (
        <div className="table-wrap">
          <table className="data" data-testid="connection-table">
            <thead>
              <tr>
                <th>Name</th>
                <th>Provider</th>
                <th className="hide-phone">Base URL</th>
                <th>Key</th>
                <th className="hide-phone">Default model</th>
                <th>Test</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {connections.data.data.map((c) => {
                const result = tests[c.id];
                return (
                  <tr key={c.id} data-testid="connection-row">
                    <td>{c.name}</td>
                    <td>{PROVIDERS.find((p) => p.value === c.provider)?.label ?? c.provider}</td>
                    <td className="hide-phone mono ellipsis" style={{ maxWidth: 260 }}>
                      {c.base_url ?? <span className="muted">provider default</span>}
                    </td>
                    <td className="mono" data-testid="key-preview">
                      …{c.key_preview}
                    </td>
                    <td className="hide-phone">{c.default_model ?? <span className="muted">–</span>}</td>
                    <td>
                      {result === 'pending' ? (
                        <span className="muted">testing…</span>
                      ) : result ? (
                        <TestResult result={result} />
                      ) : null}
                    </td>
                    <td className="num nowrap">
                      <button className="small" onClick={() => void test(c.id)} disabled={result === 'pending'}>
                        Test
                      </button>{' '}
                      {canWrite && (
                        <button
                          className="small danger"
                          onClick={() =>
                            confirm(`Delete the connection “${c.name}”? Evaluators using it stop judging.`) &&
                            remove.mutate(c.id)
                          }
                        >
                          Delete
                        </button>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
