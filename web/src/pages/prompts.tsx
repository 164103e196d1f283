import { Fragment, useMemo, useState, type ReactNode } from 'react';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, Route, Routes, useNavigate, useParams, useSearchParams } from 'react-router';
import { diffLines } from 'diff';
import { api, isNotFound } from '../api';
import { useProject } from '../project';
import { fmtCost, fmtInt, fmtMs, fmtNumber } from '../format';
import { Badge, Empty, ErrorBox, Loading, Modal, NotFound, Time, useTitle } from '../components/ui';
import type { Page, PromptItem, PromptMetrics, PromptVersion } from '../types';

/**
 * Prompts (docs/prompts.md): the list by folder, a prompt's versions, its labels, an editor for new
 * versions, a compile preview, the versions compared over a window, and a text diff of two versions.
 * A name is one URL segment, encoded (`support%2Ffaq`); `?v=N` picks a version.
 */
export function PromptsRoutes() {
  return (
    <Routes>
      <Route index element={<PromptList />} />
      <Route path=":name" element={<PromptPage />} />
      <Route path="*" element={<NotFound />} />
    </Routes>
  );
}

const LABEL = /^[a-z0-9_.-]{1,36}$/;
const PRODUCTION = 'production';
const LATEST = 'latest';
const promptPath = (projectId: string, name: string, version?: number) =>
  `/projects/${projectId}/prompts/${encodeURIComponent(name)}${version ? `?v=${version}` : ''}`;

/** The `{{name}}` placeholders of a text, in order, each once. */
export function variablesOf(prompt: PromptVersion['prompt']): string[] {
  const texts = typeof prompt === 'string' ? [prompt] : prompt.map((m) => m.content);
  const found = new Set<string>();
  for (const text of texts) for (const m of text.matchAll(/\{\{\s*([^{}\s]+)\s*\}\}/g)) found.add(m[1]!);
  return [...found];
}

/** A text with its `{{variables}}` marked. */
function WithVariables({ text }: { text: string }) {
  const parts = text.split(/(\{\{\s*[^{}\s]+\s*\}\})/g);
  return (
    <>
      {parts.map((part, i) =>
        i % 2 ? (
          <mark key={i} className="variable" data-testid="prompt-variable">
            {part}
          </mark>
        ) : (
          <Fragment key={i}>{part}</Fragment>
        ),
      )}
    </>
  );
}

/** A version's text for reading and diffing: the text, or each chat message as `role:` and its content. */
function plainText(prompt: PromptVersion['prompt']): string {
  if (typeof prompt === 'string') return prompt;
  return prompt.map((m) => `${m.role}:\n${m.content}`).join('\n\n');
}

function PromptBody({ prompt }: { prompt: PromptVersion['prompt'] }) {
  if (typeof prompt === 'string')
    return (
      <pre className="payload" data-testid="prompt-text">
        <WithVariables text={prompt} />
      </pre>
    );
  return (
    <div className="stack" data-testid="prompt-messages">
      {prompt.map((m, i) => (
        <div key={i} className="card">
          <div className="muted small">{m.role}</div>
          <pre className="payload">
            <WithVariables text={m.content} />
          </pre>
        </div>
      ))}
    </div>
  );
}

function Labels({ labels }: { labels: string[] }) {
  return (
    <span className="chips">
      {labels.map((l) => (
        <Badge key={l} tone={l === PRODUCTION ? 'ok' : l === LATEST ? 'info' : 'neutral'}>
          {l}
        </Badge>
      ))}
    </span>
  );
}

// ------------------------------------------------------------------------------------------------
// The list

function PromptList() {
  const { projectId, project, canWrite } = useProject();
  useTitle(`Prompts · ${project.name}`);
  const [params, setParams] = useSearchParams();
  const folder = params.get('folder') ?? '';
  const [creating, setCreating] = useState(false);
  const navigate = useNavigate();
  const list = useQuery({
    queryKey: ['prompts', projectId],
    placeholderData: keepPreviousData,
    queryFn: () => api<Page<PromptItem>>('/prompts', { query: { project_id: projectId, limit: 200 } }),
  });
  const { folders, prompts } = useMemo(() => {
    const prefix = folder ? `${folder}/` : '';
    const folders = new Map<string, number>();
    const prompts: PromptItem[] = [];
    for (const p of list.data?.data ?? []) {
      if (!p.name.startsWith(prefix)) continue;
      const rest = p.name.slice(prefix.length);
      const slash = rest.indexOf('/');
      if (slash < 0) prompts.push(p);
      else folders.set(rest.slice(0, slash), (folders.get(rest.slice(0, slash)) ?? 0) + 1);
    }
    return { folders: [...folders].sort(([a], [b]) => a.localeCompare(b)), prompts };
  }, [list.data, folder]);
  const crumbs = folder ? folder.split('/') : [];
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Prompts</h1>
          <div className="muted">
            Versioned prompts, their labels, and how each version did on the traces that used it.
          </div>
        </div>
        {canWrite && <button onClick={() => setCreating(true)}>New prompt</button>}
      </div>
      <nav className="row" aria-label="Folder">
        <button className="small ghost" onClick={() => setParams({})} disabled={!folder}>
          All prompts
        </button>
        {crumbs.map((c, i) => (
          <Fragment key={i}>
            <span className="muted">/</span>
            <button
              className="small ghost"
              onClick={() => setParams({ folder: crumbs.slice(0, i + 1).join('/') })}
              disabled={i === crumbs.length - 1}
            >
              {c}
            </button>
          </Fragment>
        ))}
      </nav>
      {list.isPending ? (
        <Loading rows={4} />
      ) : list.error ? (
        <ErrorBox error={list.error} />
      ) : list.data.data.length === 0 ? (
        <Empty title="No prompts yet">
          Create one here, or from code: POST /prompts, the CLI (`sightline prompts get NAME`), or the Langfuse SDK (see
          docs/prompts.md).
        </Empty>
      ) : (
        <div className="table-wrap">
          <table className="data" aria-label="Prompts">
            <thead>
              <tr>
                <th>Name</th>
                <th>Type</th>
                <th className="num">Latest</th>
                <th>Labels</th>
                <th>Updated</th>
              </tr>
            </thead>
            <tbody>
              {folders.map(([name, count]) => (
                <tr
                  key={`folder:${name}`}
                  className="clickable"
                  onClick={() => setParams({ folder: folder ? `${folder}/${name}` : name })}
                >
                  <td data-testid="prompt-folder">
                    <strong>{name}/</strong>
                  </td>
                  <td className="muted" colSpan={4}>
                    {count} {count === 1 ? 'prompt' : 'prompts'}
                  </td>
                </tr>
              ))}
              {prompts.map((p) => (
                <tr key={p.name} className="clickable" onClick={() => navigate(promptPath(projectId, p.name))}>
                  <td>
                    <Link to={promptPath(projectId, p.name)} onClick={(e) => e.stopPropagation()}>
                      {folder ? p.name.slice(folder.length + 1) : p.name}
                    </Link>
                  </td>
                  <td>{p.type}</td>
                  <td className="num">v{p.latest_version}</td>
                  <td>
                    <Labels labels={p.labels} />
                  </td>
                  <td className="nowrap">
                    <Time iso={p.updated_at} short />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {creating && (
        <VersionEditor
          title="New prompt"
          initial={{ name: folder ? `${folder}/` : '', type: 'text', prompt: '', config: {} }}
          onClose={() => setCreating(false)}
          onSaved={(v) => navigate(promptPath(projectId, v.name, v.version))}
        />
      )}
    </div>
  );
}

// ------------------------------------------------------------------------------------------------
// The editor: a new prompt, or a new version of one

type Draft = { name: string; type: 'text' | 'chat'; prompt: PromptVersion['prompt']; config: Record<string, unknown> };

function VersionEditor({
  title,
  initial,
  fixedName,
  onClose,
  onSaved,
}: {
  title: string;
  initial: Draft;
  fixedName?: boolean;
  onClose: () => void;
  onSaved: (v: PromptVersion) => void;
}) {
  const { projectId, isAdmin } = useProject();
  const queryClient = useQueryClient();
  const [name, setName] = useState(initial.name);
  const [type, setType] = useState(initial.type);
  const [text, setText] = useState(typeof initial.prompt === 'string' ? initial.prompt : '');
  const [messages, setMessages] = useState(
    typeof initial.prompt === 'string' ? [{ role: 'system', content: initial.prompt }] : initial.prompt,
  );
  const [config, setConfig] = useState(JSON.stringify(initial.config, null, 2));
  const [labels, setLabels] = useState('');
  const [message, setMessage] = useState('');
  const [localError, setLocalError] = useState('');
  const save = useMutation({
    mutationFn: () => {
      let parsed: Record<string, unknown> = {};
      if (config.trim()) {
        try {
          parsed = JSON.parse(config);
        } catch {
          throw new Error('config: not valid JSON');
        }
      }
      return api<PromptVersion>('/prompts', {
        method: 'POST',
        body: {
          project_id: projectId,
          name,
          type,
          prompt: type === 'text' ? text : messages,
          config: parsed,
          labels: labels.split(/[\s,]+/).filter(Boolean),
          commit_message: message || undefined,
        },
      });
    },
    onSuccess: (v) => {
      void queryClient.invalidateQueries({ queryKey: ['prompts', projectId] });
      void queryClient.invalidateQueries({ queryKey: ['prompt', projectId, v.name] });
      onSaved(v);
    },
  });
  const wanted = labels.split(/[\s,]+/).filter(Boolean);
  const badLabel = wanted.find((l) => !LABEL.test(l) || l === LATEST);
  const preview = variablesOf(type === 'text' ? text : messages);
  return (
    <Modal title={title} onClose={onClose} wide>
      <form
        className="stack"
        aria-label="Prompt version"
        onSubmit={(e) => {
          e.preventDefault();
          setLocalError('');
          if (badLabel) return setLocalError(`label '${badLabel}': 1-36 of a-z, 0-9, _ . - (not 'latest')`);
          if (wanted.includes(PRODUCTION) && !isAdmin) return setLocalError('moving production needs ADMIN');
          save.mutate();
        }}
      >
        <label>
          Name
          <input
            value={name}
            onChange={(e) => setName(e.target.value)}
            required
            maxLength={256}
            disabled={fixedName}
            placeholder="support/answer (folders with /)"
          />
        </label>
        <div className="segmented" role="group" aria-label="Type">
          {(['text', 'chat'] as const).map((t) => (
            <button key={t} type="button" aria-pressed={type === t} onClick={() => setType(t)}>
              {t}
            </button>
          ))}
        </div>
        {type === 'text' ? (
          <label>
            Prompt
            <textarea
              value={text}
              onChange={(e) => setText(e.target.value)}
              rows={10}
              className="mono"
              aria-label="Prompt text"
              placeholder="Answer the question: {{question}}"
            />
          </label>
        ) : (
          <div className="stack" aria-label="Messages">
            {messages.map((m, i) => (
              <div key={i} className="row" style={{ alignItems: 'flex-start' }}>
                <select
                  aria-label={`Role ${i + 1}`}
                  value={m.role}
                  onChange={(e) => setMessages(messages.map((x, j) => (j === i ? { ...x, role: e.target.value } : x)))}
                >
                  {['system', 'user', 'assistant', 'tool'].map((r) => (
                    <option key={r}>{r}</option>
                  ))}
                </select>
                <textarea
                  className="mono grow"
                  rows={4}
                  aria-label={`Message ${i + 1}`}
                  value={m.content}
                  onChange={(e) =>
                    setMessages(messages.map((x, j) => (j === i ? { ...x, content: e.target.value } : x)))
                  }
                />
                <button
                  type="button"
                  className="small ghost"
                  aria-label={`Remove message ${i + 1}`}
                  onClick={() => setMessages(messages.filter((_, j) => j !== i))}
                >
                  ✕
                </button>
              </div>
            ))}
            <button
              type="button"
              className="small ghost"
              onClick={() => setMessages([...messages, { role: 'user', content: '' }])}
            >
              Add message
            </button>
          </div>
        )}
        {preview.length > 0 && (
          <div className="muted small" data-testid="editor-variables">
            Variables: {preview.map((v) => `{{${v}}}`).join(', ')}
          </div>
        )}
        <label>
          Config (JSON: model, temperature, …)
          <textarea value={config} onChange={(e) => setConfig(e.target.value)} rows={4} className="mono" />
        </label>
        <div className="grid-form">
          <label>
            Labels (space separated)
            <input value={labels} onChange={(e) => setLabels(e.target.value)} placeholder="staging" />
          </label>
          <label>
            Commit message
            <input value={message} onChange={(e) => setMessage(e.target.value)} maxLength={2000} />
          </label>
        </div>
        {(localError || save.error) && (
          <div className="form-error" role="alert">
            {localError || (save.error instanceof Error ? save.error.message : 'could not save')}
          </div>
        )}
        <div className="row">
          <button type="submit" disabled={save.isPending}>
            Save version
          </button>
          <button type="button" className="ghost" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}

// ------------------------------------------------------------------------------------------------
// One prompt

type Tab = 'version' | 'compare' | 'diff';

function PromptPage() {
  const { projectId, canWrite, isAdmin } = useProject();
  const { name = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const tab = (params.get('tab') as Tab | null) ?? 'version';
  const [editing, setEditing] = useState(false);
  useTitle(`${name} · Prompts`);
  const versions = useQuery({
    queryKey: ['prompt', projectId, name, 'versions'],
    queryFn: () =>
      api<Page<PromptVersion>>(`/prompts/${encodeURIComponent(name)}/versions`, {
        query: { project_id: projectId, limit: 200 },
      }),
  });
  const remove = useMutation({
    mutationFn: () =>
      api(`/prompts/${encodeURIComponent(name)}`, { method: 'DELETE', query: { project_id: projectId } }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['prompts', projectId] });
      navigate(`/projects/${projectId}/prompts`);
    },
  });
  if (versions.isPending) return <Loading rows={4} />;
  if (versions.error) {
    if (isNotFound(versions.error))
      return <NotFound what="prompt" back={{ to: `/projects/${projectId}/prompts`, label: 'All prompts' }} />;
    return <ErrorBox error={versions.error} />;
  }
  const all = versions.data.data;
  const wanted = Number(params.get('v'));
  const current = all.find((v) => v.version === wanted) ?? all[0];
  if (!current) return <NotFound what="prompt" />;
  const setParam = (key: string, value: string | null) => {
    const next = new URLSearchParams(params);
    if (value === null) next.delete(key);
    else next.set(key, value);
    setParams(next);
  };
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <div className="muted small">
            <Link to={`/projects/${projectId}/prompts`}>Prompts</Link>
          </div>
          <h1 style={{ overflowWrap: 'anywhere' }}>{name}</h1>
          <div className="muted">
            {current.type} prompt · {all.length} {all.length === 1 ? 'version' : 'versions'}
          </div>
        </div>
        <div className="row">
          {canWrite && <button onClick={() => setEditing(true)}>New version</button>}
          {isAdmin && (
            <button
              className="ghost"
              onClick={() => {
                if (window.confirm(`Delete ${name} and all its versions?`)) remove.mutate();
              }}
            >
              Delete
            </button>
          )}
        </div>
      </div>
      <div className="tabs" role="tablist">
        {(
          [
            ['version', 'Version'],
            ['compare', 'Compare versions'],
            ['diff', 'Diff'],
          ] as const
        ).map(([id, label]) => (
          <button
            key={id}
            role="tab"
            aria-selected={tab === id}
            onClick={() => setParam('tab', id === 'version' ? null : id)}
          >
            {label}
          </button>
        ))}
      </div>
      {tab === 'version' && (
        <div className="prompt-layout">
          <VersionHistory versions={all} current={current.version} onPick={(v) => setParam('v', String(v))} />
          <VersionView name={name} version={current} />
        </div>
      )}
      {tab === 'compare' && <CompareVersions name={name} />}
      {tab === 'diff' && <DiffVersions versions={all} />}
      {editing && (
        <VersionEditor
          title={`New version of ${name}`}
          fixedName
          initial={{ name, type: current.type, prompt: current.prompt, config: current.config }}
          onClose={() => setEditing(false)}
          onSaved={(v) => {
            setEditing(false);
            setParam('v', String(v.version));
          }}
        />
      )}
    </div>
  );
}

function VersionHistory({
  versions,
  current,
  onPick,
}: {
  versions: PromptVersion[];
  current: number;
  onPick: (v: number) => void;
}) {
  return (
    <nav className="card stack" aria-label="Versions">
      {versions.map((v) => (
        <button
          key={v.version}
          className="ghost prompt-version"
          aria-current={v.version === current ? 'true' : undefined}
          onClick={() => onPick(v.version)}
          style={{ textAlign: 'left' }}
          data-testid="prompt-version"
        >
          <div className="row spread">
            <strong>v{v.version}</strong>
            <Labels labels={v.labels} />
          </div>
          <div className="muted small">
            <Time iso={v.created_at} short /> {v.commit_message ? `· ${v.commit_message}` : ''}
          </div>
        </button>
      ))}
    </nav>
  );
}

function VersionView({ name, version }: { name: string; version: PromptVersion }) {
  return (
    <div className="stack grow" style={{ minWidth: 0 }}>
      <div className="card stack">
        <div className="row spread">
          <h2 style={{ margin: 0 }}>v{version.version}</h2>
          <span className="muted small">
            by {version.created_by} · <Time iso={version.created_at} />
          </span>
        </div>
        {version.commit_message && <div>{version.commit_message}</div>}
        <PromptBody prompt={version.prompt} />
        {Object.keys(version.config).length > 0 && (
          <>
            <div className="muted small">Config</div>
            <pre className="payload">{JSON.stringify(version.config, null, 2)}</pre>
          </>
        )}
      </div>
      <LabelEditor name={name} version={version} />
      <CompilePreview name={name} version={version} />
    </div>
  );
}

function LabelEditor({ name, version }: { name: string; version: PromptVersion }) {
  const { projectId, canWrite, isAdmin } = useProject();
  const queryClient = useQueryClient();
  const own = version.labels.filter((l) => l !== LATEST);
  const [adding, setAdding] = useState('');
  const save = useMutation({
    mutationFn: (labels: string[]) =>
      api<PromptVersion>(`/prompts/${encodeURIComponent(name)}/versions/${version.version}`, {
        method: 'PATCH',
        query: { project_id: projectId },
        body: { labels },
      }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['prompt', projectId, name] });
      void queryClient.invalidateQueries({ queryKey: ['prompts', projectId] });
      setAdding('');
    },
  });
  const isProduction = own.includes(PRODUCTION);
  return (
    <section className="card stack" aria-label="Labels">
      <div className="row spread">
        <h3 style={{ margin: 0 }}>Labels</h3>
        <Labels labels={version.labels} />
      </div>
      {canWrite && (
        <div className="row" style={{ flexWrap: 'wrap' }}>
          <button
            className="small"
            disabled={save.isPending || !isAdmin}
            title={isAdmin ? undefined : 'Moving production needs ADMIN'}
            onClick={() => save.mutate(isProduction ? own.filter((l) => l !== PRODUCTION) : [...own, PRODUCTION])}
          >
            {isProduction ? 'Remove production' : 'Promote to production'}
          </button>
          {own
            .filter((l) => l !== PRODUCTION)
            .map((l) => (
              <button
                key={l}
                className="small ghost"
                aria-label={`Remove label ${l}`}
                onClick={() => save.mutate(own.filter((x) => x !== l))}
              >
                {l} ✕
              </button>
            ))}
          <form
            className="row"
            onSubmit={(e) => {
              e.preventDefault();
              if (LABEL.test(adding) && adding !== LATEST) save.mutate([...new Set([...own, adding])]);
            }}
          >
            <input
              aria-label="New label"
              value={adding}
              onChange={(e) => setAdding(e.target.value.toLowerCase())}
              placeholder="staging"
              pattern="[a-z0-9_.\-]{1,36}"
            />
            <button className="small" type="submit" disabled={!adding}>
              Add label
            </button>
          </form>
        </div>
      )}
      {!isAdmin && canWrite && <div className="muted small">Moving `production` needs ADMIN.</div>}
      {save.error && (
        <div className="form-error" role="alert">
          {save.error instanceof Error ? save.error.message : 'could not move the label'}
        </div>
      )}
    </section>
  );
}

function CompilePreview({ name, version }: { name: string; version: PromptVersion }) {
  const { projectId } = useProject();
  const names = variablesOf(version.prompt);
  const [values, setValues] = useState<Record<string, string>>({});
  const compile = useMutation({
    mutationFn: () =>
      api<{ prompt: PromptVersion['prompt'] }>(`/prompts/${encodeURIComponent(name)}/compile`, {
        method: 'POST',
        query: { project_id: projectId },
        body: { variables: values, version: version.version },
      }),
  });
  return (
    <section className="card stack" aria-label="Compile preview">
      <h3 style={{ margin: 0 }}>Compile preview</h3>
      {names.length === 0 ? (
        <div className="muted">This version has no variables.</div>
      ) : (
        <div className="grid-form">
          {names.map((n) => (
            <label key={n}>
              {n}
              <input
                aria-label={`Variable ${n}`}
                value={values[n] ?? ''}
                onChange={(e) => setValues({ ...values, [n]: e.target.value })}
              />
            </label>
          ))}
        </div>
      )}
      <div>
        <button className="small" onClick={() => compile.mutate()} disabled={compile.isPending}>
          Compile
        </button>
      </div>
      {compile.error && (
        <div className="form-error" role="alert">
          {compile.error instanceof Error ? compile.error.message : 'could not compile'}
        </div>
      )}
      {compile.data && (
        <div data-testid="compiled">
          {typeof compile.data.prompt === 'string' ? (
            <pre className="payload">{compile.data.prompt}</pre>
          ) : (
            compile.data.prompt.map((m, i) => (
              <div key={i} className="card">
                <div className="muted small">{m.role}</div>
                <pre className="payload">{m.content}</pre>
              </div>
            ))
          )}
        </div>
      )}
    </section>
  );
}

const WINDOWS = [
  ['24h', 86_400_000],
  ['7d', 7 * 86_400_000],
  ['30d', 30 * 86_400_000],
  ['90d', 90 * 86_400_000],
] as const;

function CompareVersions({ name }: { name: string }) {
  const { projectId } = useProject();
  const [window, setWindow] = useState<(typeof WINDOWS)[number][0]>('7d');
  const metrics = useQuery({
    queryKey: ['prompt', projectId, name, 'metrics', window],
    placeholderData: keepPreviousData,
    queryFn: () => {
      const end = Date.now();
      const span = WINDOWS.find(([w]) => w === window)![1];
      return api<PromptMetrics>(`/prompts/${encodeURIComponent(name)}/metrics`, {
        query: {
          project_id: projectId,
          start_time: new Date(end - span).toISOString(),
          end_time: new Date(end).toISOString(),
        },
      });
    },
  });
  const versions = metrics.data?.versions ?? [];
  const scoreNames = [...new Set(versions.flatMap((v) => v.scores.map((s) => s.name)))].sort();
  const rows: [string, (v: PromptMetrics['versions'][number]) => ReactNode][] = [
    ['Traces', (v) => fmtInt(v.traces)],
    ['Spans', (v) => fmtInt(v.spans)],
    ['Latency p50', (v) => (v.latency_p50_ms === null ? '–' : fmtMs(v.latency_p50_ms))],
    ['Latency p95', (v) => (v.latency_p95_ms === null ? '–' : fmtMs(v.latency_p95_ms))],
    ['Cost', (v) => fmtCost(v.cost)],
    ['Input tokens', (v) => fmtInt(v.input_tokens)],
    ['Output tokens', (v) => fmtInt(v.output_tokens)],
    ['Error rate', (v) => `${(v.error_rate * 100).toFixed(1)}%`],
    ...scoreNames.map((s): [string, (v: PromptMetrics['versions'][number]) => ReactNode] => [
      `Score: ${s}`,
      (v) => {
        const found = v.scores.find((x) => x.name === s);
        return found && found.avg !== null ? `${fmtNumber(found.avg)} (n=${fmtInt(found.count)})` : '–';
      },
    ]),
  ];
  return (
    <section className="stack" aria-label="Compare versions">
      <div className="segmented" role="group" aria-label="Window">
        {WINDOWS.map(([w]) => (
          <button key={w} aria-pressed={window === w} onClick={() => setWindow(w)}>
            {w}
          </button>
        ))}
      </div>
      {metrics.isPending ? (
        <Loading rows={4} />
      ) : metrics.error ? (
        <ErrorBox error={metrics.error} />
      ) : versions.length === 0 ? (
        <Empty title="No spans named this prompt in the window">
          Spans link to a prompt version through `prompt_name` and `prompt_version` (docs/prompts.md, “Linking spans”).
        </Empty>
      ) : (
        <div className="table-wrap">
          <table className="data" aria-label="Versions compared">
            <thead>
              <tr>
                <th />
                {versions.map((v) => (
                  <th key={v.version} className="num">
                    {v.version ? `v${v.version}` : 'no version'}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map(([label, cell]) => (
                <tr key={label}>
                  <th scope="row">{label}</th>
                  {versions.map((v) => (
                    <td key={v.version} className="num">
                      {cell(v)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function DiffVersions({ versions }: { versions: PromptVersion[] }) {
  const [params, setParams] = useSearchParams();
  const newest = versions[0]!.version;
  const a = Number(params.get('a')) || versions[1]?.version || newest;
  const b = Number(params.get('b')) || newest;
  const left = versions.find((v) => v.version === a);
  const right = versions.find((v) => v.version === b);
  const parts = useMemo(
    () => (left && right ? diffLines(plainText(left.prompt), plainText(right.prompt)) : []),
    [left, right],
  );
  const configParts = useMemo(
    () =>
      left && right
        ? diffLines(JSON.stringify(left.config, null, 2) + '\n', JSON.stringify(right.config, null, 2) + '\n')
        : [],
    [left, right],
  );
  const pick = (key: 'a' | 'b', value: string) => {
    const next = new URLSearchParams(params);
    next.set(key, value);
    setParams(next);
  };
  const Picker = ({ which, value }: { which: 'a' | 'b'; value: number }) => (
    <select
      aria-label={which === 'a' ? 'From version' : 'To version'}
      value={value}
      onChange={(e) => pick(which, e.target.value)}
    >
      {versions.map((v) => (
        <option key={v.version} value={v.version}>
          v{v.version}
        </option>
      ))}
    </select>
  );
  return (
    <section className="stack" aria-label="Diff">
      <div className="row">
        <Picker which="a" value={a} /> <span className="muted">→</span> <Picker which="b" value={b} />
      </div>
      <DiffBlock parts={parts} label="Prompt diff" />
      {configParts.some((p) => p.added || p.removed) && <DiffBlock parts={configParts} label="Config diff" />}
    </section>
  );
}

function DiffBlock({ parts, label }: { parts: ReturnType<typeof diffLines>; label: string }) {
  return (
    <pre className="payload diff" aria-label={label} data-testid="prompt-diff">
      {parts.map((p, i) => (
        <span
          key={i}
          className={p.added ? 'diff-added' : p.removed ? 'diff-removed' : undefined}
          data-diff={p.added ? 'added' : p.removed ? 'removed' : 'same'}
        >
          {p.value
            .replace(/\n$/, '')
            .split('\n')
            .map((line) => `${p.added ? '+ ' : p.removed ? '- ' : '  '}${line}`)
            .join('\n') + '\n'}
        </span>
      ))}
    </pre>
  );
}
