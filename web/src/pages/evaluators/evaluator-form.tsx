import { useState } from 'react';
import { ApiError } from '../../api';
import { useProject } from '../../project';
import { useScoreConfigs, useScoreNames } from '../../scores';
import { FilterBar } from '../../components/filter-bar';
import type { Evaluator, EvaluatorScorer, Predicate } from '../../types';
import { useLlmConnections } from '../quality-settings';

/**
 * An evaluator's definition as a form (docs/evaluators.md): which traces (filters, sampling, delay),
 * how they are scored (an LLM judge's prompt with its {{variables}}, or a check) and the score's name.
 * Templates fill it with a worked start; the server validates every field (a 422 names it).
 */

export const CHECKS = [
  'json_valid',
  'json_schema',
  'regex',
  'contains',
  'not_contains',
  'length',
  'latency_ms',
  'cost',
  'total_tokens',
] as const;
type Check = (typeof CHECKS)[number];
type DataType = 'numeric' | 'categorical' | 'boolean';

/** The form's state: strings where the user types, turned into the API's body by `toBody`. */
export type Draft = {
  name: string;
  target: 'trace' | 'span';
  spanKinds: string;
  spanNames: string;
  filters: Predicate[];
  samplingPercent: string;
  delaySeconds: string;
  scoreName: string;
  scoreConfigId: string;
  enabled: boolean;
  scorerType: 'llm_judge' | 'check';
  connectionId: string;
  model: string;
  prompt: string;
  variables: { name: string; path: string }[];
  outputType: DataType;
  categories: string;
  minValue: string;
  maxValue: string;
  temperature: string;
  check: Check;
  field: string;
  pattern: string;
  text: string;
  schema: string;
  min: string;
  max: string;
};

const BLANK: Draft = {
  name: '',
  target: 'trace',
  spanKinds: '',
  spanNames: '',
  filters: [],
  samplingPercent: '100',
  delaySeconds: '30',
  scoreName: '',
  scoreConfigId: '',
  enabled: true,
  scorerType: 'llm_judge',
  connectionId: '',
  model: '',
  prompt: '',
  variables: [],
  outputType: 'numeric',
  categories: '',
  minValue: '',
  maxValue: '',
  temperature: '0',
  check: 'json_valid',
  field: 'output',
  pattern: '',
  text: '',
  schema: '{\n  "type": "object"\n}',
  min: '',
  max: '',
};

export type Template = { id: string; label: string; description: string; draft: Partial<Draft> };

export const TEMPLATES: Template[] = [
  {
    id: 'helpfulness',
    label: 'Helpfulness judge',
    description: 'An LLM judge rates how well the answer helps the user, 0 to 1, with its reasoning.',
    draft: {
      name: 'helpfulness',
      scoreName: 'helpfulness',
      samplingPercent: '10',
      scorerType: 'llm_judge',
      prompt:
        'You are grading a support assistant.\n\nThe user asked:\n{{question}}\n\nThe assistant answered:\n{{answer}}\n\n' +
        'Rate how helpful the answer is, from 0 (no help at all) to 1 (fully answers the question). ' +
        'Give a short reasoning.',
      variables: [
        { name: 'question', path: 'input' },
        { name: 'answer', path: 'output' },
      ],
      outputType: 'numeric',
      minValue: '0',
      maxValue: '1',
      temperature: '0',
    },
  },
  {
    id: 'json-valid',
    label: 'JSON validity check',
    description: 'Is the output valid JSON? A boolean score, no model call.',
    draft: { name: 'json-valid', scoreName: 'json_valid', scorerType: 'check', check: 'json_valid', field: 'output' },
  },
  {
    id: 'latency',
    label: 'Latency check',
    description: 'Did the trace finish within 5 seconds? A boolean score, no model call.',
    draft: { name: 'fast-enough', scoreName: 'fast_enough', scorerType: 'check', check: 'latency_ms', max: '5000' },
  },
];

export function draftFromTemplate(id: string | null): Draft {
  const template = TEMPLATES.find((t) => t.id === id);
  return { ...BLANK, ...(template?.draft ?? {}) };
}

const list = (text: string) =>
  text
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
const num = (text: string) => (text.trim() === '' ? undefined : Number(text));

/** The {{NAME}} placeholders of a prompt, in order, once each. */
export function placeholdersOf(prompt: string): string[] {
  return [...new Set([...prompt.matchAll(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g)].map((m) => m[1]!))];
}

/** A stored evaluator back into the form (for editing). */
export function draftFromEvaluator(e: Evaluator): Draft {
  const s = e.scorer as EvaluatorScorer & Record<string, unknown>;
  const d: Draft = {
    ...BLANK,
    name: e.name,
    target: e.target,
    spanKinds: (e.span_filter?.kind ?? []).join(', '),
    spanNames: (e.span_filter?.name ?? []).join(', '),
    filters: e.filters as Predicate[],
    samplingPercent: String(Math.round(e.sampling_rate * 10000) / 100),
    delaySeconds: String(e.delay_seconds),
    scoreName: e.score_name,
    scoreConfigId: e.score_config_id ?? '',
    enabled: e.enabled,
  };
  if (s.type === 'llm_judge') {
    return {
      ...d,
      scorerType: 'llm_judge',
      connectionId: s.connection_id,
      model: s.model ?? '',
      prompt: s.prompt,
      variables: Object.entries(s.variables ?? {}).map(([name, path]) => ({ name, path })),
      outputType: s.output.data_type,
      categories: (s.output.categories ?? []).join(', '),
      minValue: s.output.min_value === undefined ? '' : String(s.output.min_value),
      maxValue: s.output.max_value === undefined ? '' : String(s.output.max_value),
      temperature: s.temperature === undefined ? '' : String(s.temperature),
    };
  }
  const p = (s.params ?? {}) as Record<string, unknown>;
  return {
    ...d,
    scorerType: 'check',
    check: s.check as Check,
    field: typeof p.field === 'string' ? p.field : 'output',
    pattern: typeof p.pattern === 'string' ? p.pattern : '',
    text: typeof p.text === 'string' ? p.text : '',
    schema: p.schema ? JSON.stringify(p.schema, null, 2) : BLANK.schema,
    min: p.min === undefined ? '' : String(p.min),
    max: p.max === undefined ? '' : String(p.max),
  };
}

function scorerOf(d: Draft): Record<string, unknown> {
  if (d.scorerType === 'llm_judge') {
    const output: Record<string, unknown> = { data_type: d.outputType };
    if (d.outputType === 'categorical') output.categories = list(d.categories);
    if (d.outputType === 'numeric') {
      if (num(d.minValue) !== undefined) output.min_value = num(d.minValue);
      if (num(d.maxValue) !== undefined) output.max_value = num(d.maxValue);
    }
    return {
      type: 'llm_judge',
      connection_id: d.connectionId,
      ...(d.model.trim() ? { model: d.model.trim() } : {}),
      prompt: d.prompt,
      variables: Object.fromEntries(
        d.variables.filter((v) => v.name.trim()).map((v) => [v.name.trim(), v.path.trim()]),
      ),
      output,
      ...(num(d.temperature) !== undefined ? { temperature: num(d.temperature) } : {}),
    };
  }
  const params: Record<string, unknown> = {};
  if (!['latency_ms', 'cost', 'total_tokens'].includes(d.check)) params.field = d.field.trim() || 'output';
  if (d.check === 'regex') params.pattern = d.pattern;
  if (d.check === 'contains' || d.check === 'not_contains') params.text = d.text;
  if (d.check === 'length') {
    if (num(d.min) !== undefined) params.min = num(d.min);
    if (num(d.max) !== undefined) params.max = num(d.max);
  }
  if (['latency_ms', 'cost', 'total_tokens'].includes(d.check)) params.max = num(d.max);
  if (d.check === 'json_schema') {
    try {
      params.schema = JSON.parse(d.schema) as unknown;
    } catch {
      throw new Error('The JSON schema is not valid JSON.');
    }
  }
  return { type: 'check', check: d.check, params };
}

/** The API body of a create or edit; throws a sentence for what the form itself can tell is wrong. */
export function toBody(d: Draft): Record<string, unknown> {
  const rate = Number(d.samplingPercent) / 100;
  if (!Number.isFinite(rate) || rate <= 0 || rate > 1) throw new Error('Sampling must be above 0% and at most 100%.');
  const kinds = list(d.spanKinds);
  const names = list(d.spanNames);
  return {
    name: d.name.trim(),
    target: d.target,
    span_filter:
      d.target === 'span' && (kinds.length || names.length)
        ? { ...(kinds.length ? { kind: kinds } : {}), ...(names.length ? { name: names } : {}) }
        : null,
    filters: d.filters,
    sampling_rate: rate,
    delay_seconds: Number(d.delaySeconds) || 0,
    scorer: scorerOf(d),
    score_name: d.scoreName.trim(),
    score_config_id: d.scoreConfigId || null,
    enabled: d.enabled,
  };
}

export function EvaluatorForm({
  initial,
  submitLabel,
  pending,
  error,
  onSubmit,
}: {
  initial: Draft;
  submitLabel: string;
  pending: boolean;
  error: unknown;
  onSubmit: (body: Record<string, unknown>) => void;
}) {
  const { projectId } = useProject();
  const [d, setD] = useState<Draft>(initial);
  const [formError, setFormError] = useState<string | null>(null);
  const set = (patch: Partial<Draft>) => setD((x) => ({ ...x, ...patch }));
  const connections = useLlmConnections(projectId);
  const configs = useScoreConfigs(projectId);
  const names = useScoreNames(projectId);
  const connectionList = connections.data?.data ?? [];
  // A judge with no connection chosen takes the first one the project has.
  const connectionId = d.connectionId || connectionList[0]?.id || '';
  const missingVariables = placeholdersOf(d.prompt).filter((p) => !d.variables.some((v) => v.name.trim() === p));
  const shown = error instanceof ApiError ? error.detail : error ? String(error) : formError;
  return (
    <form
      className="stack evaluator-form"
      aria-label="Evaluator"
      onSubmit={(e) => {
        e.preventDefault();
        try {
          setFormError(null);
          onSubmit(toBody({ ...d, connectionId }));
        } catch (err) {
          setFormError(err instanceof Error ? err.message : String(err));
        }
      }}
    >
      <div className="card stack">
        <h3>What it scores</h3>
        <div className="grid-form">
          <label>
            Evaluator name
            <input value={d.name} onChange={(e) => set({ name: e.target.value })} required maxLength={128} />
          </label>
          <label>
            Target
            <select value={d.target} onChange={(e) => set({ target: e.target.value as Draft['target'] })}>
              <option value="trace">each trace</option>
              <option value="span">each matching span</option>
            </select>
          </label>
          <label>
            Sampling (% of traces)
            <input
              type="number"
              min={0.01}
              max={100}
              step="any"
              value={d.samplingPercent}
              onChange={(e) => set({ samplingPercent: e.target.value })}
              required
            />
          </label>
          <label>
            Delay after the last span (seconds)
            <input
              type="number"
              min={0}
              max={86400}
              step={1}
              value={d.delaySeconds}
              onChange={(e) => set({ delaySeconds: e.target.value })}
              required
            />
          </label>
          {d.target === 'span' && (
            <>
              <label>
                Span kinds (comma-separated, optional)
                <input value={d.spanKinds} onChange={(e) => set({ spanKinds: e.target.value })} placeholder="llm" />
              </label>
              <label>
                Span names (comma-separated, optional)
                <input value={d.spanNames} onChange={(e) => set({ spanNames: e.target.value })} />
              </label>
            </>
          )}
        </div>
        <div className="stack" style={{ gap: '0.35rem' }}>
          <span style={{ fontWeight: 500 }}>Only traces matching (all of)</span>
          <FilterBar projectId={projectId} filters={d.filters} onChange={(filters) => set({ filters })} />
        </div>
        <label className="inline">
          <input type="checkbox" checked={d.enabled} onChange={(e) => set({ enabled: e.target.checked })} />
          Enabled: score new traces as they arrive
        </label>
      </div>

      <div className="card stack">
        <h3>How it scores</h3>
        <div className="segmented" role="radiogroup" aria-label="Scorer">
          {(['llm_judge', 'check'] as const).map((t) => (
            <label key={t} className="inline">
              <input type="radio" checked={d.scorerType === t} onChange={() => set({ scorerType: t })} />
              {t === 'llm_judge' ? 'LLM judge' : 'Check (no model)'}
            </label>
          ))}
        </div>
        {d.scorerType === 'llm_judge' ? (
          <>
            <div className="grid-form">
              <label>
                LLM connection
                <select value={connectionId} onChange={(e) => set({ connectionId: e.target.value })} required>
                  {connectionList.length === 0 && <option value="">none: add one in Settings</option>}
                  {connectionList.map((c) => (
                    <option key={c.id} value={c.id}>
                      {c.name} ({c.provider})
                    </option>
                  ))}
                </select>
              </label>
              <label>
                Model (optional)
                <input
                  value={d.model}
                  onChange={(e) => set({ model: e.target.value })}
                  placeholder={connectionList.find((c) => c.id === connectionId)?.default_model ?? 'connection default'}
                />
              </label>
              <label>
                Temperature
                <input
                  type="number"
                  min={0}
                  max={2}
                  step="any"
                  value={d.temperature}
                  onChange={(e) => set({ temperature: e.target.value })}
                />
              </label>
            </div>
            <label>
              Judge prompt (use {'{{NAME}}'} for a variable)
              <textarea
                rows={8}
                className="mono"
                value={d.prompt}
                onChange={(e) => set({ prompt: e.target.value })}
                required
                maxLength={32768}
              />
            </label>
            <div className="stack" style={{ gap: '0.35rem' }} role="group" aria-label="Variables">
              <span style={{ fontWeight: 500 }}>Variables</span>
              <span className="muted">
                Each variable reads a path of the trace (or span): <code>input</code>, <code>output</code>,{' '}
                <code>error_message</code>, <code>metadata.KEY</code>, <code>name</code>, <code>model_name</code>, or a
                JSON path such as <code>input.messages[-1].content</code>.
              </span>
              {d.variables.map((v, i) => (
                <div className="row" key={i}>
                  <input
                    aria-label={`Variable ${i + 1} name`}
                    value={v.name}
                    placeholder="NAME"
                    onChange={(e) =>
                      set({ variables: d.variables.map((x, j) => (j === i ? { ...x, name: e.target.value } : x)) })
                    }
                    style={{ width: 160 }}
                  />
                  <span>←</span>
                  <input
                    aria-label={`Variable ${i + 1} path`}
                    className="grow mono"
                    value={v.path}
                    placeholder="output"
                    onChange={(e) =>
                      set({ variables: d.variables.map((x, j) => (j === i ? { ...x, path: e.target.value } : x)) })
                    }
                  />
                  <button
                    type="button"
                    className="small"
                    aria-label={`Remove variable ${i + 1}`}
                    onClick={() => set({ variables: d.variables.filter((_, j) => j !== i) })}
                  >
                    ×
                  </button>
                </div>
              ))}
              <div className="row">
                <button
                  type="button"
                  className="small"
                  onClick={() => set({ variables: [...d.variables, { name: '', path: 'output' }] })}
                >
                  + Variable
                </button>
                {missingVariables.length > 0 && (
                  <button
                    type="button"
                    className="small"
                    onClick={() =>
                      set({
                        variables: [...d.variables, ...missingVariables.map((name) => ({ name, path: 'output' }))],
                      })
                    }
                  >
                    Add {missingVariables.map((m) => `{{${m}}}`).join(', ')} from the prompt
                  </button>
                )}
              </div>
            </div>
            <div className="grid-form">
              <label>
                The judge answers
                <select value={d.outputType} onChange={(e) => set({ outputType: e.target.value as DataType })}>
                  <option value="numeric">a number</option>
                  <option value="boolean">true or false</option>
                  <option value="categorical">one of some labels</option>
                </select>
              </label>
              {d.outputType === 'numeric' && (
                <>
                  <label>
                    Minimum
                    <input
                      type="number"
                      step="any"
                      value={d.minValue}
                      onChange={(e) => set({ minValue: e.target.value })}
                    />
                  </label>
                  <label>
                    Maximum
                    <input
                      type="number"
                      step="any"
                      value={d.maxValue}
                      onChange={(e) => set({ maxValue: e.target.value })}
                    />
                  </label>
                </>
              )}
              {d.outputType === 'categorical' && (
                <label>
                  Labels (comma-separated)
                  <input value={d.categories} onChange={(e) => set({ categories: e.target.value })} required />
                </label>
              )}
            </div>
          </>
        ) : (
          <div className="grid-form">
            <label>
              Check
              <select aria-label="Check" value={d.check} onChange={(e) => set({ check: e.target.value as Check })}>
                {CHECKS.map((c) => (
                  <option key={c} value={c}>
                    {c}
                  </option>
                ))}
              </select>
            </label>
            {!['latency_ms', 'cost', 'total_tokens'].includes(d.check) && (
              <label>
                Field
                <input className="mono" value={d.field} onChange={(e) => set({ field: e.target.value })} />
              </label>
            )}
            {d.check === 'regex' && (
              <label>
                Pattern (RE2)
                <input className="mono" value={d.pattern} onChange={(e) => set({ pattern: e.target.value })} required />
              </label>
            )}
            {(d.check === 'contains' || d.check === 'not_contains') && (
              <label>
                Text
                <input value={d.text} onChange={(e) => set({ text: e.target.value })} required />
              </label>
            )}
            {d.check === 'length' && (
              <label>
                Minimum length
                <input type="number" min={0} value={d.min} onChange={(e) => set({ min: e.target.value })} />
              </label>
            )}
            {(d.check === 'length' || ['latency_ms', 'cost', 'total_tokens'].includes(d.check)) && (
              <label>
                {d.check === 'latency_ms'
                  ? 'At most (ms)'
                  : d.check === 'cost'
                    ? 'At most ($)'
                    : d.check === 'total_tokens'
                      ? 'At most (tokens)'
                      : 'Maximum length'}
                <input
                  type="number"
                  min={0}
                  step="any"
                  value={d.max}
                  onChange={(e) => set({ max: e.target.value })}
                  required={d.check !== 'length'}
                />
              </label>
            )}
            {d.check === 'json_schema' && (
              <label style={{ gridColumn: '1 / -1' }}>
                JSON schema
                <textarea
                  rows={6}
                  className="mono"
                  value={d.schema}
                  onChange={(e) => set({ schema: e.target.value })}
                />
              </label>
            )}
          </div>
        )}
      </div>

      <div className="card stack">
        <h3>The score it writes</h3>
        <div className="grid-form">
          <label>
            Score name
            <input
              value={d.scoreName}
              onChange={(e) => set({ scoreName: e.target.value })}
              required
              maxLength={128}
              list="evaluator-score-names"
            />
            <datalist id="evaluator-score-names">
              {names.map((n) => (
                <option key={n.name} value={n.name} />
              ))}
            </datalist>
          </label>
          <label>
            Score config (optional)
            <select value={d.scoreConfigId} onChange={(e) => set({ scoreConfigId: e.target.value })}>
              <option value="">none</option>
              {(configs.data ?? []).map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name} ({c.data_type})
                </option>
              ))}
            </select>
          </label>
        </div>
      </div>
      {shown && <p className="form-error">{shown}</p>}
      <div>
        <button className="primary" type="submit" disabled={pending}>
          {submitLabel}
        </button>
      </div>
    </form>
  );
}
