import { useEffect, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ApiError } from '../api';
import { useProject } from '../project';
import { ErrorBox, Loading } from '../components/ui';
import type { MaskingSetting, QuotasSetting } from '../types';

/**
 * The settings tabs of the producer controls (docs/producer-controls.md): masking and quotas. Each
 * reads its setting (VIEWER+) and saves it whole with PUT (ADMIN); a save applies to spans ingested
 * from then on.
 */

function errorText(error: unknown): string {
  return error instanceof ApiError ? error.detail : String(error);
}

const DETECTORS: [MaskingSetting['detectors'][number], string][] = [
  ['email', 'E-mail addresses'],
  ['phone', 'Phone numbers'],
  ['payment_card', 'Payment cards (Luhn-checked)'],
  ['iban', 'IBANs'],
  ['ip', 'IP addresses (v4 and v6)'],
  ['secret', 'API keys and bearer tokens'],
  ['jwt', 'JWTs'],
];

const ACTIONS: [MaskingSetting['action'], string][] = [
  ['mask', 'Mask: [EMAIL]'],
  ['hash', 'Hash: [EMAIL:1a2b3c4d], equal values alike'],
  ['drop', 'Drop: the field becomes empty'],
];

function useSetting<T>(setting: 'masking' | 'quotas') {
  const { projectId } = useProject();
  const client = useQueryClient();
  const key = [setting, projectId];
  const read = useQuery({ queryKey: key, queryFn: () => api<T>(`/projects/${projectId}/${setting}`) });
  const save = useMutation({
    mutationFn: (body: T) => api<T>(`/projects/${projectId}/${setting}`, { method: 'PUT', body }),
    onSuccess: (value) => client.setQueryData(key, value),
  });
  return { read, save };
}

export function MaskingTab() {
  const { isAdmin } = useProject();
  const { read, save } = useSetting<MaskingSetting>('masking');
  const [draft, setDraft] = useState<MaskingSetting | null>(null);
  useEffect(() => {
    if (read.data) setDraft(read.data);
  }, [read.data]);
  if (read.isPending || (!draft && !read.error)) return <Loading />;
  if (read.error) return <ErrorBox error={read.error} />;
  const value = draft!;
  const change = (next: Partial<MaskingSetting>) => {
    save.reset();
    setDraft({ ...value, ...next });
  };
  return (
    <section className="stack">
      <p className="muted">
        Masking runs at ingest, before anything is stored or indexed: on every span's input, output, error message and
        metadata values, whichever protocol sent it. Spans stored before a change stay as they were.
      </p>
      <form
        className="card stack"
        data-testid="masking-form"
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate({ ...value, patterns: value.patterns.filter((p) => p.name || p.pattern) });
        }}
      >
        <fieldset className="stack" disabled={!isAdmin}>
          <legend>Detectors</legend>
          {DETECTORS.map(([id, label]) => (
            <label key={id} className="row">
              <input
                type="checkbox"
                checked={value.detectors.includes(id)}
                onChange={(e) =>
                  change({
                    detectors: e.target.checked ? [...value.detectors, id] : value.detectors.filter((d) => d !== id),
                  })
                }
              />
              {label}
            </label>
          ))}
        </fieldset>
        <fieldset className="stack" disabled={!isAdmin}>
          <legend>Custom patterns</legend>
          <p className="muted">
            Up to 20, run by a linear-time engine (RE2: no back-references or look-around). A match is replaced with{' '}
            <code>[PATTERN:name]</code>.
          </p>
          {value.patterns.map((p, i) => (
            <div className="row" key={i} data-testid="masking-pattern">
              <label>
                Name
                <input
                  value={p.name}
                  maxLength={64}
                  onChange={(e) =>
                    change({
                      patterns: value.patterns.map((q, j) => (j === i ? { ...q, name: e.target.value } : q)),
                    })
                  }
                />
              </label>
              <label className="grow">
                Pattern
                <input
                  value={p.pattern}
                  maxLength={1000}
                  onChange={(e) =>
                    change({
                      patterns: value.patterns.map((q, j) => (j === i ? { ...q, pattern: e.target.value } : q)),
                    })
                  }
                />
              </label>
              <button
                type="button"
                className="small ghost"
                style={{ alignSelf: 'end' }}
                onClick={() => change({ patterns: value.patterns.filter((_q, j) => j !== i) })}
              >
                Remove
              </button>
            </div>
          ))}
          {value.patterns.length < 20 && (
            <div>
              <button
                type="button"
                className="small"
                onClick={() => change({ patterns: [...value.patterns, { name: '', pattern: '' }] })}
              >
                Add a pattern
              </button>
            </div>
          )}
        </fieldset>
        <label>
          What a match becomes
          <select
            value={value.action}
            disabled={!isAdmin}
            onChange={(e) => change({ action: e.target.value as MaskingSetting['action'] })}
          >
            {ACTIONS.map(([id, label]) => (
              <option key={id} value={id}>
                {label}
              </option>
            ))}
          </select>
        </label>
        {save.error && <p className="form-error">{errorText(save.error)}</p>}
        {save.isSuccess && <p className="muted">Saved. Spans ingested from now on are masked so.</p>}
        {isAdmin ? (
          <div>
            <button className="primary" type="submit" disabled={save.isPending}>
              Save masking
            </button>
          </div>
        ) : (
          <p className="muted">Only workspace admins change masking.</p>
        )}
      </form>
    </section>
  );
}

export function QuotasTab() {
  const { isAdmin } = useProject();
  const { read, save } = useSetting<QuotasSetting>('quotas');
  if (read.isPending) return <Loading />;
  if (read.error) return <ErrorBox error={read.error} />;
  return (
    <section className="stack">
      <p className="muted">
        Past a quota, ingest answers 429 naming the quota, with a Retry-After until it resets (spans per day at 00:00
        UTC). Leave a field empty for no quota.
      </p>
      <form
        className="card stack"
        data-testid="quotas-form"
        key={JSON.stringify(read.data)}
        onSubmit={(e) => {
          e.preventDefault();
          const form = new FormData(e.currentTarget);
          const body: QuotasSetting = {};
          const spans = String(form.get('spans_per_day') ?? '').trim();
          const requests = String(form.get('ingest_requests_per_minute') ?? '').trim();
          if (spans) body.spans_per_day = Number(spans);
          if (requests) body.ingest_requests_per_minute = Number(requests);
          save.mutate(body);
        }}
      >
        <div className="grid-form">
          <label>
            Spans per day
            <input
              name="spans_per_day"
              type="number"
              min={1}
              step={1}
              defaultValue={read.data.spans_per_day ?? ''}
              placeholder="no quota"
              disabled={!isAdmin}
            />
          </label>
          <label>
            Ingest requests per minute
            <input
              name="ingest_requests_per_minute"
              type="number"
              min={1}
              step={1}
              defaultValue={read.data.ingest_requests_per_minute ?? ''}
              placeholder="no quota"
              disabled={!isAdmin}
            />
          </label>
        </div>
        {save.error && <p className="form-error">{errorText(save.error)}</p>}
        {save.isSuccess && <p className="muted">Saved.</p>}
        {isAdmin ? (
          <div>
            <button className="primary" type="submit" disabled={save.isPending}>
              Save quotas
            </button>
          </div>
        ) : (
          <p className="muted">Only workspace admins change quotas.</p>
        )}
      </form>
    </section>
  );
}
