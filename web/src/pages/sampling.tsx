import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ApiError } from '../api';
import { useProject } from '../project';
import { ErrorBox, Loading } from '../components/ui';

/**
 * Sampling at ingest (docs/producer-controls.md, "Sampling"): the settings tab that sets a project's
 * rate and keep rules, and the banner that tells the dashboards and alerts pages that their counts
 * cover only the traces kept.
 */
type KeepRule = { field: string; op: string; value: unknown; key?: string };
export type SamplingSetting = { rate: number; keep: KeepRule[] };

const KEEP_ERRORS: KeepRule = { field: 'status', op: 'in', value: ['error'] };

function useSampling() {
  const { projectId } = useProject();
  return useQuery({
    queryKey: ['sampling', projectId],
    queryFn: () => api<SamplingSetting>(`/projects/${projectId}/sampling`),
    staleTime: 30_000,
  });
}

function describeRule(rule: KeepRule): string {
  const value = Array.isArray(rule.value) ? rule.value.join(', ') : String(rule.value);
  return rule.field === 'metadata' ? `metadata ${rule.key} ${rule.op} ${value}` : `${rule.field} in ${value}`;
}

const percent = (rate: number) => `${Math.round(rate * 10_000) / 100}%`;

/** On the dashboards and alerts pages: says the project is sampled (nothing when every trace is kept). */
export function SampledBanner() {
  const sampling = useSampling();
  if (!sampling.data || sampling.data.rate >= 1) return null;
  const { rate, keep } = sampling.data;
  return (
    <div className="refusal" role="note" data-testid="sampled-banner">
      This project is sampled: {percent(rate)} of traces are kept
      {keep.length > 0 && <>, and every trace with a span matching {keep.map(describeRule).join(' or ')}</>}. Counts,
      rates and alerts here cover the kept traces only.
    </div>
  );
}

/** Settings → Sampling: the rate and keep rules (ADMIN writes; anyone may read). */
export function SamplingTab() {
  const { projectId, isAdmin } = useProject();
  const client = useQueryClient();
  const sampling = useSampling();
  const [rules, setRules] = useState<string | null>(null);
  const [parseError, setParseError] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: (body: SamplingSetting) =>
      api<SamplingSetting>(`/projects/${projectId}/sampling`, { method: 'PUT', body }),
    onSuccess: (s) => {
      client.setQueryData(['sampling', projectId], s);
      setRules(null);
    },
  });
  if (sampling.isPending) return <Loading />;
  if (sampling.error) return <ErrorBox error={sampling.error} />;
  const current = sampling.data;
  const rulesText = rules ?? JSON.stringify(current.keep, null, 2);
  return (
    <form
      className="card stack"
      onSubmit={(e) => {
        e.preventDefault();
        const form = new FormData(e.currentTarget);
        let keep: KeepRule[];
        try {
          keep = JSON.parse(rulesText || '[]') as KeepRule[];
        } catch {
          setParseError('Keep rules must be a JSON array of predicates.');
          return;
        }
        setParseError(null);
        save.mutate({ rate: Number(form.get('rate')) / 100, keep });
      }}
    >
      <h3>Sampling</h3>
      <p className="muted">
        Keep a share of traces, decided by a hash of the trace id so a trace is kept or dropped whole, and always keep
        traces with a span matching a rule. Spans of a dropped trace are held for the decision window in case a matching
        span arrives, then deleted.
      </p>
      <div className="grid-form">
        <label>
          Keep (% of traces)
          <input
            name="rate"
            type="number"
            min={0}
            max={100}
            step="any"
            defaultValue={current.rate * 100}
            required
            disabled={!isAdmin}
          />
        </label>
      </div>
      <label>
        Always keep traces with a span matching (predicates on status, environment, model_name, span_kind, metadata)
        <textarea
          name="keep"
          rows={6}
          value={rulesText}
          onChange={(e) => setRules(e.target.value)}
          disabled={!isAdmin}
          spellCheck={false}
        />
      </label>
      {isAdmin && (
        <div className="row">
          <button
            type="button"
            onClick={() =>
              setRules(JSON.stringify([...(JSON.parse(rulesText || '[]') as KeepRule[]), KEEP_ERRORS], null, 2))
            }
          >
            Add: keep errors
          </button>
        </div>
      )}
      {parseError && <p className="form-error">{parseError}</p>}
      {save.error && (
        <p className="form-error">{save.error instanceof ApiError ? save.error.detail : String(save.error)}</p>
      )}
      {save.isSuccess && <p className="muted">Saved. Every API process applies it within 15 seconds.</p>}
      {isAdmin ? (
        <div>
          <button className="primary" type="submit" disabled={save.isPending}>
            Save
          </button>
        </div>
      ) : (
        <p className="muted">Only workspace admins change sampling.</p>
      )}
    </form>
  );
}
