import { useState, type ReactNode } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ApiError } from '../api';
import { useDebounced } from '../hooks';
import { useProject } from '../project';
import { Badge, Empty, ErrorBox, Loading, Modal } from '../components/ui';

/** One row of `GET /model-prices` (docs/model-prices.md): an override (`source: project`) or a default. */
type ModelPrice = {
  id: string | null;
  model_pattern: string;
  provider: string | null;
  input_per_million: number;
  output_per_million: number;
  cached_input_per_million: number | null;
  cache_write_per_million: number | null;
  reasoning_per_million: number | null;
  currency: 'USD';
  source: 'default' | 'project';
};
type ModelPriceList = {
  as_of: string;
  sources: { provider: string; name: string }[];
  data: ModelPrice[];
  match?: ModelPrice | null;
};

const OPTIONAL = [
  ['cached_input_per_million', 'Cached input', 'input'],
  ['cache_write_per_million', 'Cache write', 'input'],
  ['reasoning_per_million', 'Reasoning', 'output'],
] as const;

type PriceBody = Omit<ModelPrice, 'id' | 'provider' | 'currency' | 'source'>;

function errorText(error: unknown): string {
  return error instanceof ApiError ? error.detail : String(error);
}

const usd = (v: number | null) => (v === null ? <span className="muted">–</span> : `$${v}`);

/** The price fields of a form: empty optional prices are null (they fall back). */
function bodyOf(form: FormData): PriceBody {
  const optional = (name: string) => (String(form.get(name) ?? '') === '' ? null : Number(form.get(name)));
  return {
    model_pattern: String(form.get('model_pattern')).trim(),
    input_per_million: Number(form.get('input_per_million')),
    output_per_million: Number(form.get('output_per_million')),
    cached_input_per_million: optional('cached_input_per_million'),
    cache_write_per_million: optional('cache_write_per_million'),
    reasoning_per_million: optional('reasoning_per_million'),
  };
}

function PriceFields({ price }: { price?: ModelPrice }) {
  const number = { type: 'number', min: 0, max: 1_000_000, step: 'any' } as const;
  return (
    <div className="grid-form">
      <label>
        Model pattern
        <input
          name="model_pattern"
          required
          maxLength={256}
          defaultValue={price?.model_pattern}
          placeholder="e.g. gpt-4o or acme-*"
        />
      </label>
      <label>
        Input $/1M
        <input name="input_per_million" required {...number} defaultValue={price?.input_per_million} />
      </label>
      <label>
        Output $/1M
        <input name="output_per_million" required {...number} defaultValue={price?.output_per_million} />
      </label>
      {OPTIONAL.map(([name, label, fallback]) => (
        <label key={name}>
          {label} $/1M
          <input
            name={name}
            {...number}
            defaultValue={price?.[name] ?? ''}
            placeholder="optional"
            title={`empty: the ${fallback} price applies`}
          />
        </label>
      ))}
    </div>
  );
}

function PriceTable({ prices, actions }: { prices: ModelPrice[]; actions?: (p: ModelPrice) => ReactNode }) {
  return (
    <div className="table-wrap">
      <table className="data">
        <thead>
          <tr>
            <th>Model pattern</th>
            <th className="num">Input</th>
            <th className="num">Output</th>
            <th className="num">Cached input</th>
            <th className="num hide-phone">Cache write</th>
            <th className="num hide-phone">Reasoning</th>
            {actions ? <th /> : <th className="hide-phone">Provider</th>}
          </tr>
        </thead>
        <tbody>
          {prices.map((p) => (
            <tr key={p.id ?? p.model_pattern} data-testid={p.source === 'project' ? 'price-override' : 'price-default'}>
              <td className="mono">{p.model_pattern}</td>
              <td className="num">{usd(p.input_per_million)}</td>
              <td className="num">{usd(p.output_per_million)}</td>
              <td className="num">{usd(p.cached_input_per_million)}</td>
              <td className="num hide-phone">{usd(p.cache_write_per_million)}</td>
              <td className="num hide-phone">{usd(p.reasoning_per_million)}</td>
              {actions ? <td className="num">{actions(p)}</td> : <td className="hide-phone">{p.provider}</td>}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Settings › Model prices: the project's overrides (add, edit, delete) and the default table. */
export function ModelPricesTab() {
  const { projectId, canWrite } = useProject();
  const client = useQueryClient();
  const key = ['model-prices', projectId];
  const [editing, setEditing] = useState<ModelPrice | null>(null);
  const [filter, setFilter] = useState('');
  const prices = useQuery({
    queryKey: key,
    queryFn: () => api<ModelPriceList>('/model-prices', { query: { project_id: projectId } }),
  });
  const refresh = () => client.invalidateQueries({ queryKey: key });
  const create = useMutation({
    mutationFn: (body: PriceBody) =>
      api<ModelPrice>('/model-prices', { method: 'POST', body: { project_id: projectId, ...body } }),
    onSuccess: refresh,
  });
  const update = useMutation({
    mutationFn: ({ id, body }: { id: string; body: PriceBody }) =>
      api<ModelPrice>(`/model-prices/${id}`, { method: 'PATCH', body: { project_id: projectId, ...body } }),
    onSuccess: async () => {
      setEditing(null);
      await refresh();
    },
  });
  const remove = useMutation({
    mutationFn: (id: string) => api(`/model-prices/${id}`, { method: 'DELETE', query: { project_id: projectId } }),
    onSuccess: refresh,
  });
  // Which price a model name gets, as the server matches it (canonical form, most specific pattern).
  const model = useDebounced(filter.trim(), 250);
  const match = useQuery({
    queryKey: [...key, 'match', model],
    queryFn: () => api<ModelPriceList>('/model-prices', { query: { project_id: projectId, model } }),
    enabled: model !== '',
  });
  if (prices.isPending) return <Loading />;
  if (prices.error) return <ErrorBox error={prices.error} />;
  const overrides = prices.data.data.filter((p) => p.source === 'project');
  const needle = filter.trim().toLowerCase();
  const defaults = prices.data.data.filter(
    (p) =>
      p.source === 'default' && (needle === '' || p.model_pattern.includes(needle) || p.provider?.includes(needle)),
  );
  return (
    <section className="stack">
      <p className="muted">
        Spans that arrive without a cost are priced from their model and tokens: with this project's prices when one
        matches, else with the default table. A price change applies to spans ingested afterwards; stored spans keep
        their cost. Prices are USD per million tokens; an empty cached-input or cache-write price is the input price, an
        empty reasoning price the output price.
      </p>
      {canWrite && (
        <form
          className="card stack"
          aria-label="Add a model price"
          onSubmit={(e) => {
            e.preventDefault();
            const form = e.currentTarget;
            create.mutate(bodyOf(new FormData(form)), { onSuccess: () => form.reset() });
          }}
        >
          <PriceFields />
          {create.error && <p className="form-error">{errorText(create.error)}</p>}
          <div>
            <button className="primary" type="submit" disabled={create.isPending}>
              Add price
            </button>
          </div>
        </form>
      )}
      <h3>This project's prices</h3>
      {remove.error && <p className="form-error">{errorText(remove.error)}</p>}
      {overrides.length === 0 ? (
        <Empty title="No prices of this project">Every model is priced with the default table below.</Empty>
      ) : (
        <PriceTable
          prices={overrides}
          actions={(p) =>
            canWrite && (
              <span className="row">
                <button className="small" onClick={() => setEditing(p)}>
                  Edit
                </button>
                <button
                  className="small danger"
                  onClick={() => confirm(`Delete the price of “${p.model_pattern}”?`) && remove.mutate(p.id!)}
                >
                  Delete
                </button>
              </span>
            )
          }
        />
      )}
      <h3>
        Default prices <Badge>as of {prices.data.as_of}</Badge>
      </h3>
      <p className="muted">From the providers' list prices: {prices.data.sources.map((s) => s.name).join('; ')}.</p>
      <label>
        Find a model
        <input
          value={filter}
          onChange={(e) => setFilter(e.target.value)}
          placeholder="e.g. claude, bedrock or us.anthropic.claude-3-5-sonnet-20241022-v2:0"
        />
      </label>
      {model !== '' && match.data && (
        <p data-testid="price-match">
          A span of model <code>{model}</code>{' '}
          {match.data.match ? (
            <>
              is priced with <code>{match.data.match.model_pattern}</code> (
              {match.data.match.source === 'project' ? "this project's price" : 'default'}).
            </>
          ) : (
            'matches no price: its cost stays 0 unless the producer sends one.'
          )}
        </p>
      )}
      <PriceTable prices={defaults} />
      {editing && (
        <Modal title={`Edit the price of ${editing.model_pattern}`} onClose={() => setEditing(null)}>
          <form
            className="stack"
            onSubmit={(e) => {
              e.preventDefault();
              update.mutate({ id: editing.id!, body: bodyOf(new FormData(e.currentTarget)) });
            }}
          >
            <PriceFields price={editing} />
            {update.error && <p className="form-error">{errorText(update.error)}</p>}
            <button className="primary" type="submit" disabled={update.isPending}>
              Save price
            </button>
          </form>
        </Modal>
      )}
    </section>
  );
}
