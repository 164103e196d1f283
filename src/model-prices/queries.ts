import type { Queryable } from '../stores/postgres.js';
import type { PriceEntry } from './matcher.js';

/** The Postgres side of per-project prices (postgres/0006_model_prices.sql), shared by the service and the price book. */

export type OverrideRow = {
  id: string;
  model_pattern: string;
  input_per_million: number;
  output_per_million: number;
  cached_input_per_million: number | null;
  cache_write_per_million: number | null;
  reasoning_per_million: number | null;
  currency: 'USD';
  created_at: Date;
  updated_at: Date;
};

export const OVERRIDE_COLUMNS = `id, model_pattern, input_per_million, output_per_million, cached_input_per_million,
  cache_write_per_million, reasoning_per_million, currency, created_at, updated_at`;

/** A project's overrides, by pattern. $1 project id. */
export async function projectOverrides(db: Queryable, projectId: string): Promise<OverrideRow[]> {
  const { rows } = await db.query<OverrideRow>(
    `SELECT ${OVERRIDE_COLUMNS} FROM model_prices WHERE project_id = $1 ORDER BY model_pattern, id`,
    [projectId],
  );
  return rows;
}

export function overrideEntry(row: OverrideRow): PriceEntry {
  return {
    id: row.id,
    model_pattern: row.model_pattern,
    source: 'project',
    input_per_million: row.input_per_million,
    output_per_million: row.output_per_million,
    cached_input_per_million: row.cached_input_per_million,
    cache_write_per_million: row.cache_write_per_million,
    reasoning_per_million: row.reasoning_per_million,
  };
}
