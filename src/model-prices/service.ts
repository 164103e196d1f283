import type { AppContext } from '../context.js';
import { isUuid, newId } from '../ids.js';
import { requireProjectRole } from '../auth/access.js';
import type { UserPrincipal } from '../auth/principal.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { withTransaction, type Queryable } from '../stores/postgres.js';
import { DEFAULT_PRICES, PRICES_AS_OF, SOURCES } from './default-prices.js';
import { canonicalModel, PriceTable } from './matcher.js';
import { DEFAULT_TABLE, priceBookOf } from './pricing.js';
import { OVERRIDE_COLUMNS, overrideEntry, projectOverrides, type OverrideRow } from './queries.js';

/**
 * Model prices (docs/model-prices.md): the default table and a project's overrides. Reads take a
 * project resolved by `resolveReadProject`; writes check MEMBER+ themselves inside their transaction,
 * and once committed drop this process's cached prices of the project (pricing.ts, PriceBook), so the
 * next span it ingests is priced with them.
 */

/** The catalog's size bound (409 beyond): a project's table is compiled on every load. */
export const MAX_OVERRIDES_PER_PROJECT = 500;

const NOT_FOUND = 'model price not found';

export type PriceFields = {
  input_per_million: number;
  output_per_million: number;
  cached_input_per_million: number | null;
  cache_write_per_million: number | null;
  reasoning_per_million: number | null;
};

export type ModelPriceItem = PriceFields & {
  id: string | null;
  model_pattern: string;
  provider: string | null;
  currency: 'USD';
  source: 'default' | 'project';
  created_at: string | null;
  updated_at: string | null;
};

function overrideItem(row: OverrideRow): ModelPriceItem {
  return {
    id: row.id,
    model_pattern: row.model_pattern,
    provider: null,
    input_per_million: row.input_per_million,
    output_per_million: row.output_per_million,
    cached_input_per_million: row.cached_input_per_million,
    cache_write_per_million: row.cache_write_per_million,
    reasoning_per_million: row.reasoning_per_million,
    currency: 'USD',
    source: 'project',
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

const DEFAULT_ITEMS: readonly ModelPriceItem[] = DEFAULT_PRICES.map((p) => ({
  id: null,
  model_pattern: p.model_pattern,
  provider: p.provider,
  input_per_million: p.input_per_million,
  output_per_million: p.output_per_million,
  cached_input_per_million: p.cached_input_per_million,
  cache_write_per_million: p.cache_write_per_million,
  reasoning_per_million: p.reasoning_per_million,
  currency: 'USD',
  source: 'default',
  created_at: null,
  updated_at: null,
}));

const SOURCE_LIST = Object.entries(SOURCES).map(([provider, name]) => ({ provider, name }));

export type ModelPriceList = {
  as_of: string;
  sources: { provider: string; name: string }[];
  data: ModelPriceItem[];
  match?: ModelPriceItem | null;
};

/**
 * `GET /model-prices`: the project's overrides (by pattern), then the default table. With `model`,
 * also `match`: the price a span of that model would be priced with now (null: none, cost 0).
 */
export async function listModelPrices(db: Queryable, projectId: string, model?: string): Promise<ModelPriceList> {
  const overrides = await projectOverrides(db, projectId);
  const data = [...overrides.map(overrideItem), ...DEFAULT_ITEMS];
  const list: ModelPriceList = { as_of: PRICES_AS_OF, sources: SOURCE_LIST, data };
  if (model === undefined) return list;
  // Read fresh, not from the price book: the answer says what this project's prices are now.
  const found = new PriceTable(overrides.map(overrideEntry), DEFAULT_TABLE).lookup(model);
  const match =
    found &&
    data.find((p) =>
      found.id === null ? p.id === null && p.model_pattern === found.model_pattern : p.id === found.id,
    );
  return { ...list, match: match ?? null };
}

export type CreateOverrideInput = Pick<PriceFields, 'input_per_million' | 'output_per_million'> & {
  [K in 'cached_input_per_million' | 'cache_write_per_million' | 'reasoning_per_million']?: number | null;
} & { project_id: string; model_pattern: string; currency?: 'USD' };
export type UpdateOverrideInput = Partial<Omit<CreateOverrideInput, 'project_id'>> & { project_id: string };

/** 409 when another override of the project has the same canonical pattern (`GPT-4o` and `openai/gpt-4o` are one). */
async function refuseTwin(tx: Queryable, projectId: string, pattern: string, self: string | null): Promise<void> {
  const canonical = canonicalModel(pattern);
  const twin = (await projectOverrides(tx, projectId)).find(
    (row) => row.id !== self && canonicalModel(row.model_pattern) === canonical,
  );
  if (twin)
    throw new ConflictError(
      `the project already prices the pattern '${twin.model_pattern}', which matches the same models; edit that one`,
    );
}

export async function createOverride(
  ctx: AppContext,
  user: UserPrincipal,
  input: CreateOverrideInput,
): Promise<ModelPriceItem> {
  const item = await withTransaction(ctx.pg.pool, async (tx) => {
    await requireProjectRole(tx, user, input.project_id, 'MEMBER');
    // The project row lock serialises concurrent writes, so the count and the twin check stay true until commit.
    await tx.query('SELECT 1 FROM projects WHERE id = $1 FOR NO KEY UPDATE', [input.project_id]);
    const { rows } = await tx.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM model_prices WHERE project_id = $1',
      [input.project_id],
    );
    if (rows[0]!.n >= MAX_OVERRIDES_PER_PROJECT) {
      throw new ConflictError(
        `a project holds at most ${MAX_OVERRIDES_PER_PROJECT} model prices; delete one before adding another`,
      );
    }
    await refuseTwin(tx, input.project_id, input.model_pattern, null);
    // $1 id, $2 project, $3 pattern, $4..$8 prices
    const inserted = await tx.query<OverrideRow>(
      `INSERT INTO model_prices (id, project_id, model_pattern, input_per_million, output_per_million,
                                 cached_input_per_million, cache_write_per_million, reasoning_per_million)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${OVERRIDE_COLUMNS}`,
      [
        newId(),
        input.project_id,
        input.model_pattern,
        input.input_per_million,
        input.output_per_million,
        input.cached_input_per_million ?? null,
        input.cache_write_per_million ?? null,
        input.reasoning_per_million ?? null,
      ],
    );
    return overrideItem(inserted.rows[0]!);
  });
  priceBookOf(ctx.pg).invalidate(input.project_id);
  return item;
}

/** Changes the fields sent; a price sent as null is cleared (it falls back, docs/model-prices.md). */
export async function updateOverride(
  ctx: AppContext,
  user: UserPrincipal,
  id: string,
  input: UpdateOverrideInput,
): Promise<ModelPriceItem> {
  const item = await withTransaction(ctx.pg.pool, async (tx) => {
    await requireProjectRole(tx, user, input.project_id, 'MEMBER');
    if (!isUuid(id)) throw new NotFoundError(NOT_FOUND);
    await tx.query('SELECT 1 FROM projects WHERE id = $1 FOR NO KEY UPDATE', [input.project_id]);
    const found = await tx.query<OverrideRow>(
      `SELECT ${OVERRIDE_COLUMNS} FROM model_prices WHERE id = $1 AND project_id = $2`,
      [id, input.project_id],
    );
    const row = found.rows[0];
    if (!row) throw new NotFoundError(NOT_FOUND);
    if (input.model_pattern !== undefined) await refuseTwin(tx, input.project_id, input.model_pattern, id);
    const next = { ...row, ...definedOnly(input) };
    // $1 id, $2 pattern, $3..$7 prices
    const updated = await tx.query<OverrideRow>(
      `UPDATE model_prices SET model_pattern = $2, input_per_million = $3, output_per_million = $4, cached_input_per_million = $5,
              cache_write_per_million = $6, reasoning_per_million = $7, updated_at = now()
        WHERE id = $1 RETURNING ${OVERRIDE_COLUMNS}`,
      [
        id,
        next.model_pattern,
        next.input_per_million,
        next.output_per_million,
        next.cached_input_per_million,
        next.cache_write_per_million,
        next.reasoning_per_million,
      ],
    );
    return overrideItem(updated.rows[0]!);
  });
  priceBookOf(ctx.pg).invalidate(input.project_id);
  return item;
}

export async function deleteOverride(
  ctx: AppContext,
  user: UserPrincipal,
  id: string,
  projectId: string,
): Promise<{ deleted: true; id: string }> {
  await withTransaction(ctx.pg.pool, async (tx) => {
    await requireProjectRole(tx, user, projectId, 'MEMBER');
    if (!isUuid(id)) throw new NotFoundError(NOT_FOUND);
    const deleted = await tx.query('DELETE FROM model_prices WHERE id = $1 AND project_id = $2', [id, projectId]);
    if (deleted.rowCount === 0) throw new NotFoundError(NOT_FOUND);
  });
  priceBookOf(ctx.pg).invalidate(projectId);
  return { deleted: true, id };
}

/** The fields of a PATCH body that were sent (undefined = keep; null = clear). */
function definedOnly(input: UpdateOverrideInput): Partial<OverrideRow> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) if (v !== undefined && k !== 'project_id' && k !== 'currency') out[k] = v;
  return out as Partial<OverrideRow>;
}
