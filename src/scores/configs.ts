import crypto from 'node:crypto';
import { z } from 'zod';
import type { Queryable } from '../stores/postgres.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { isUuid } from '../ids.js';
import { ScoreCategory, SCORE_DATA_TYPES, type ScoreConfigAnswer } from './answers.js';
import type { AnswerOf } from '../answer-schemas.js';

/**
 * Score configs (quality.md §1, "Score configs"): what the scores of a name must be. Type, range and
 * categories are fixed at creation (a changed meaning is a new config); description and `archived` change.
 */

export const MAX_CATEGORIES = 100;
export const MAX_SCORE_CONFIGS_PER_PROJECT = 1_000;

const Finite = z.number().refine(Number.isFinite, 'Input should be a finite number');

export const ScoreConfigCreate = z
  .strictObject({
    project_id: z.string().optional(),
    name: z.string().trim().min(1).max(128),
    data_type: z.enum(SCORE_DATA_TYPES),
    min_value: Finite.nullish(),
    max_value: Finite.nullish(),
    categories: z
      .array(z.strictObject({ label: z.string().trim().min(1).max(256), value: Finite }))
      .min(1)
      .max(MAX_CATEGORIES)
      .nullish(),
    description: z.string().max(4096).nullish(),
  })
  .superRefine((c, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (c.data_type === 'categorical') {
      if (!c.categories) issue('categories', 'a categorical config needs 1 to 100 categories');
      else if (new Set(c.categories.map((k) => k.label)).size !== c.categories.length)
        issue('categories', 'category labels must be distinct');
    } else if (c.categories) issue('categories', `a ${c.data_type} config takes no categories`);
    if (c.data_type !== 'numeric') {
      if (c.min_value != null) issue('min_value', `a ${c.data_type} config takes no range`);
      if (c.max_value != null) issue('max_value', `a ${c.data_type} config takes no range`);
    } else if (c.min_value != null && c.max_value != null && c.min_value > c.max_value)
      issue('max_value', 'max_value must not be below min_value');
  });
export type ScoreConfigCreate = z.infer<typeof ScoreConfigCreate>;

export const ScoreConfigPatch = z.strictObject({
  project_id: z.string().optional(),
  description: z.string().max(4096).nullish(),
  archived: z.boolean().optional(),
});

export type ScoreConfig = AnswerOf<typeof ScoreConfigAnswer>;
type ConfigRow = {
  id: string;
  project_id: string;
  name: string;
  data_type: ScoreConfig['data_type'];
  min_value: number | null;
  max_value: number | null;
  categories: z.infer<typeof ScoreCategory>[] | null;
  description: string | null;
  archived: boolean;
  created_at: Date;
  updated_at: Date;
};

const COLUMNS =
  'id, project_id, name, data_type, min_value, max_value, categories, description, archived, created_at, updated_at';

function answerOf(row: ConfigRow): ScoreConfig {
  return {
    ...row,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export async function createScoreConfig(
  db: Queryable,
  projectId: string,
  input: ScoreConfigCreate,
): Promise<ScoreConfig> {
  const { rows: counted } = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM score_configs WHERE project_id = $1',
    [projectId],
  );
  if (counted[0]!.n >= MAX_SCORE_CONFIGS_PER_PROJECT)
    throw new ConflictError(`a project holds at most ${MAX_SCORE_CONFIGS_PER_PROJECT} score configs`);
  try {
    // $1 id, $2 project, $3 name, $4 type, $5 min, $6 max, $7 categories, $8 description
    const { rows } = await db.query<ConfigRow>(
      `INSERT INTO score_configs (id, project_id, name, data_type, min_value, max_value, categories, description)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8) RETURNING ${COLUMNS}`,
      [
        crypto.randomUUID(),
        projectId,
        input.name,
        input.data_type,
        input.min_value ?? null,
        input.max_value ?? null,
        input.categories ? JSON.stringify(input.categories) : null,
        input.description ?? null,
      ],
    );
    return answerOf(rows[0]!);
  } catch (error) {
    if ((error as { code?: string }).code === '23505')
      throw new ConflictError(`the project already has a score config named '${input.name}'`);
    throw error;
  }
}

export async function listScoreConfigs(db: Queryable, projectId: string, limit: number, page: number) {
  const { rows } = await db.query<ConfigRow & { total: number }>(
    `SELECT ${COLUMNS}, count(*) OVER ()::int AS total FROM score_configs WHERE project_id = $1
      ORDER BY name LIMIT $2 OFFSET $3`,
    [projectId, limit, limit * page],
  );
  let total = rows[0]?.total ?? 0;
  if (rows.length === 0 && page > 0) {
    const { rows: n } = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM score_configs WHERE project_id = $1',
      [projectId],
    );
    total = n[0]!.n;
  }
  return { data: rows.map(({ total: _t, ...row }) => answerOf(row)), meta: { page, limit, total } };
}

export async function getScoreConfig(db: Queryable, projectId: string, id: string): Promise<ScoreConfig> {
  const found = isUuid(id)
    ? (
        await db.query<ConfigRow>(`SELECT ${COLUMNS} FROM score_configs WHERE project_id = $1 AND id = $2`, [
          projectId,
          id,
        ])
      ).rows[0]
    : undefined;
  if (!found) throw new NotFoundError('score config not found');
  return answerOf(found);
}

export async function patchScoreConfig(
  db: Queryable,
  projectId: string,
  id: string,
  patch: z.infer<typeof ScoreConfigPatch>,
): Promise<ScoreConfig> {
  await getScoreConfig(db, projectId, id);
  const { rows } = await db.query<ConfigRow>(
    `UPDATE score_configs SET
       description = CASE WHEN $3 THEN $4 ELSE description END,
       archived = COALESCE($5, archived),
       updated_at = now()
     WHERE project_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [projectId, id, patch.description !== undefined, patch.description ?? null, patch.archived ?? null],
  );
  return answerOf(rows[0]!);
}

/** The configs that scores of a write may name, by id and by name (one query for a whole batch). */
export async function configsFor(
  db: Queryable,
  projectId: string,
  ids: readonly string[],
  names: readonly string[],
): Promise<{ byId: Map<string, ScoreConfig>; byName: Map<string, ScoreConfig> }> {
  const uuids = [...new Set(ids.filter(isUuid))];
  const { rows } = await db.query<ConfigRow>(
    `SELECT ${COLUMNS} FROM score_configs WHERE project_id = $1 AND (id = ANY($2::uuid[]) OR name = ANY($3::text[]))`,
    [projectId, uuids, [...new Set(names)]],
  );
  const configs = rows.map(answerOf);
  return { byId: new Map(configs.map((c) => [c.id, c])), byName: new Map(configs.map((c) => [c.name, c])) };
}
