import { createHash } from 'node:crypto';
import type { AppContext } from '../context.js';
import { ForbiddenError, NotFoundError } from '../errors.js';
import { withTransaction, type Queryable } from '../stores/postgres.js';
import { roleRefusal } from '../auth/roles.js';
import type { AnswerOf } from '../answer-schemas.js';
import type { PromptVersionAnswer } from './answers.js';
import type { PromptValue } from './compile.js';
import { withinLimits } from '../query/limits.js';
import { promptReadCache } from './read-cache.js';
import { PROMPT_METRICS_LIMITS, promptMetricsQuery, type PromptMetricsRow } from '../query/prompt-metrics.js';

/**
 * Prompts (docs/prompts.md): names with numbered, immutable versions, and labels that point at one
 * version of a name each. Every function takes a project already resolved by the route; another
 * project's prompt is a 404.
 *
 * Concurrency: a create and a label move both lock the name's row in `prompts` first (the create by its
 * upsert, a move with FOR UPDATE), so writes of one name are serial; and a label's primary key is
 * (project, name, label), so it can only ever be on one version.
 */

export const PROMPT_NOT_FOUND = 'prompt not found';
export const VERSION_NOT_FOUND = 'prompt version not found';
export const PRODUCTION = 'production';
export const LATEST = 'latest';

export type PromptVersion = AnswerOf<typeof PromptVersionAnswer>;
export type PromptType = 'text' | 'chat';
export type Selector = { version?: number; label?: string };

type VersionRow = {
  name: string;
  version: number;
  type: PromptType;
  prompt: PromptValue;
  config: Record<string, unknown>;
  commit_message: string | null;
  created_at: Date;
  created_by: string;
  latest_version: number;
  labels: string[];
};

function versionAnswer(row: VersionRow): PromptVersion {
  return {
    name: row.name,
    version: row.version,
    type: row.type,
    prompt: row.prompt,
    config: row.config,
    labels: row.version === row.latest_version ? [...row.labels, LATEST] : row.labels,
    commit_message: row.commit_message,
    created_at: row.created_at.toISOString(),
    created_by: row.created_by,
  };
}

const VERSION_SELECT = `SELECT v.name, v.version, v.type, v.prompt, v.config, v.commit_message, v.created_at, v.created_by,
       p.latest_version,
       ARRAY(SELECT l.label FROM prompt_labels l
              WHERE l.project_id = v.project_id AND l.name = v.name AND l.version = v.version ORDER BY l.label) AS labels
  FROM prompts p JOIN prompt_versions v ON v.project_id = p.project_id AND v.name = p.name`;

/** The version a selector names: a number, a label (`latest`: the newest), or neither (`production`, else the newest). */
function versionExpression(selector: Selector): { sql: string; params: unknown[] } {
  if (selector.version !== undefined) return { sql: '$3', params: [selector.version] };
  if (selector.label === LATEST) return { sql: 'p.latest_version', params: [] };
  const label = selector.label ?? PRODUCTION;
  const labelled = 'SELECT version FROM prompt_labels WHERE project_id = $1 AND name = $2 AND label = $3';
  return { sql: selector.label ? `(${labelled})` : `COALESCE((${labelled}), p.latest_version)`, params: [label] };
}

/** One version of a name, in one statement (the fetch SDKs make before every call: kept cheap). */
export async function getVersion(db: Queryable, projectId: string, name: string, selector: Selector) {
  const which = versionExpression(selector);
  const { rows } = await db.query<VersionRow>(
    `${VERSION_SELECT} WHERE p.project_id = $1 AND p.name = $2 AND v.version = ${which.sql}`,
    [projectId, name, ...which.params],
  );
  if (rows[0]) return versionAnswer(rows[0]);
  const named = await db.query('SELECT 1 FROM prompts WHERE project_id = $1 AND name = $2', [projectId, name]);
  if (!named.rows[0]) throw new NotFoundError(PROMPT_NOT_FOUND);
  throw new NotFoundError(
    selector.label !== undefined ? `no version of this prompt has the label '${selector.label}'` : VERSION_NOT_FOUND,
  );
}

/**
 * The fetch (`GET /prompts/{name}` and the Langfuse route): a version and its ETag, through the
 * process's read cache (src/prompts/read-cache.ts). Not-found answers are never kept.
 */
export async function fetchVersion(
  ctx: AppContext,
  projectId: string,
  name: string,
  selector: Selector,
): Promise<{ answer: PromptVersion; etag: string }> {
  const key = selector.version !== undefined ? `version:${selector.version}` : `label:${selector.label ?? ''}`;
  return promptReadCache<{ answer: PromptVersion; etag: string }>(ctx).read(projectId, name, key, async () => {
    const answer = await getVersion(ctx.pg.pool, projectId, name, selector);
    return { answer, etag: etagOf(answer) };
  });
}

/** A strong ETag over the answer: it changes with anything the answer shows (a label moved, too). */
export function etagOf(answer: PromptVersion): string {
  return `"${createHash('sha256').update(JSON.stringify(answer)).digest('base64url').slice(0, 32)}"`;
}

/** Whether an `If-None-Match` header names this ETag (a list, `*`, or a weak form of it). */
export function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((tag) => {
    const t = tag.trim().replace(/^W\//, '');
    return t === '*' || t === etag;
  });
}

type ListRow = { name: string; type: PromptType; latest_version: number; labels: string[]; updated_at: Date };

/** Names in order (so a folder's prompts sit together), each with its newest version's type and every label. */
export async function listPrompts(db: Queryable, projectId: string, limit: number, page: number) {
  const [items, total] = await Promise.all([
    db.query<ListRow>(
      `SELECT p.name, v.type, p.latest_version, p.updated_at,
              ARRAY(SELECT l.label FROM prompt_labels l WHERE l.project_id = p.project_id AND l.name = p.name ORDER BY l.label) AS labels
         FROM prompts p JOIN prompt_versions v ON v.project_id = p.project_id AND v.name = p.name AND v.version = p.latest_version
        WHERE p.project_id = $1 ORDER BY p.name LIMIT $2 OFFSET $3`,
      [projectId, limit, limit * page],
    ),
    db.query<{ n: number }>('SELECT count(*)::int AS n FROM prompts WHERE project_id = $1', [projectId]),
  ]);
  const data = items.rows.map((row) => ({
    name: row.name,
    type: row.type,
    latest_version: row.latest_version,
    labels: [...row.labels, LATEST],
    updated_at: row.updated_at.toISOString(),
  }));
  return { data, meta: { page, limit, total: total.rows[0]!.n } };
}

/** A name's versions, newest first. */
export async function listVersions(db: Queryable, projectId: string, name: string, limit: number, page: number) {
  const [items, total] = await Promise.all([
    db.query<VersionRow>(
      `${VERSION_SELECT} WHERE p.project_id = $1 AND p.name = $2 ORDER BY v.version DESC LIMIT $3 OFFSET $4`,
      [projectId, name, limit, limit * page],
    ),
    db.query<{ n: number | null }>('SELECT latest_version AS n FROM prompts WHERE project_id = $1 AND name = $2', [
      projectId,
      name,
    ]),
  ]);
  if (!total.rows[0]) throw new NotFoundError(PROMPT_NOT_FOUND);
  return { data: items.rows.map(versionAnswer), meta: { page, limit, total: total.rows[0].n ?? 0 } };
}

export type CreateInput = {
  name: string;
  type: PromptType;
  prompt: PromptValue;
  config?: Record<string, unknown> | undefined;
  labels?: string[] | undefined;
  commit_message?: string | null | undefined;
};

/** Who may move `production`: an ADMIN of the workspace (checked by the route before any transaction). */
export type Mover = { createdBy: string; admin: boolean };

function refuseProduction(mover: Mover): void {
  if (!mover.admin) throw new ForbiddenError(`moving the '${PRODUCTION}' label: ${roleRefusal('ADMIN')}`);
}

/** The next version of a name (1 for a new one), with its labels moved onto it. */
export async function createVersion(ctx: AppContext, projectId: string, input: CreateInput, mover: Mover) {
  const labels = [...new Set(input.labels ?? [])];
  if (labels.includes(PRODUCTION)) refuseProduction(mover);
  const version = await withTransaction(ctx.pg.pool, async (client) => {
    // The upsert numbers the version and holds the name's row until the commit.
    const numbered = await client.query<{ latest_version: number }>(
      `INSERT INTO prompts (project_id, name, latest_version) VALUES ($1, $2, 1)
       ON CONFLICT (project_id, name) DO UPDATE SET latest_version = prompts.latest_version + 1, updated_at = now()
       RETURNING latest_version`,
      [projectId, input.name],
    );
    const next = numbered.rows[0]!.latest_version;
    await client.query(
      `INSERT INTO prompt_versions (project_id, name, version, type, prompt, config, commit_message, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        projectId,
        input.name,
        next,
        input.type,
        JSON.stringify(input.prompt),
        JSON.stringify(input.config ?? {}),
        input.commit_message ?? null,
        mover.createdBy,
      ],
    );
    await moveLabels(client, projectId, input.name, next, labels);
    return next;
  });
  promptReadCache(ctx).forget(projectId, input.name);
  return getVersion(ctx.pg.pool, projectId, input.name, { version });
}

async function moveLabels(db: Queryable, projectId: string, name: string, version: number, labels: string[]) {
  if (!labels.length) return;
  await db.query(
    `INSERT INTO prompt_labels (project_id, name, label, version) SELECT $1, $2, unnest($3::text[]), $4
     ON CONFLICT (project_id, name, label) DO UPDATE SET version = excluded.version`,
    [projectId, name, labels, version],
  );
}

/**
 * Sets a version's labels to exactly `labels`: those listed move here from wherever they were, and
 * those on this version and not listed come off it. Moving `production` on or off needs ADMIN.
 */
export async function setLabels(
  ctx: AppContext,
  projectId: string,
  name: string,
  version: number,
  wanted: string[],
  mover: Mover,
) {
  const labels = [...new Set(wanted)];
  await withTransaction(ctx.pg.pool, async (client) => {
    // The name's row lock: label moves of one name are serial.
    const named = await client.query('SELECT 1 FROM prompts WHERE project_id = $1 AND name = $2 FOR UPDATE', [
      projectId,
      name,
    ]);
    if (!named.rows[0]) throw new NotFoundError(PROMPT_NOT_FOUND);
    const current = await client.query<{ label: string; version: number }>(
      'SELECT label, version FROM prompt_labels WHERE project_id = $1 AND name = $2',
      [projectId, name],
    );
    const exists = await client.query(
      'SELECT 1 FROM prompt_versions WHERE project_id = $1 AND name = $2 AND version = $3',
      [projectId, name, version],
    );
    if (!exists.rows[0]) throw new NotFoundError(VERSION_NOT_FOUND);
    const production = current.rows.find((row) => row.label === PRODUCTION);
    const productionHere = production?.version === version;
    if (productionHere !== labels.includes(PRODUCTION)) refuseProduction(mover);
    const dropped = current.rows.filter((row) => row.version === version && !labels.includes(row.label));
    if (dropped.length) {
      await client.query(
        'DELETE FROM prompt_labels WHERE project_id = $1 AND name = $2 AND version = $3 AND label = ANY($4::text[])',
        [projectId, name, version, dropped.map((row) => row.label)],
      );
    }
    await moveLabels(client, projectId, name, version, labels);
  });
  promptReadCache(ctx).forget(projectId, name);
  return getVersion(ctx.pg.pool, projectId, name, { version });
}

/** Deletes a name and all its versions and labels. */
export async function deletePrompt(ctx: AppContext, projectId: string, name: string) {
  const { rowCount } = await ctx.pg.pool.query('DELETE FROM prompts WHERE project_id = $1 AND name = $2', [
    projectId,
    name,
  ]);
  promptReadCache(ctx).forget(projectId, name);
  if (!rowCount) throw new NotFoundError(PROMPT_NOT_FOUND);
  return { deleted: true as const, id: name };
}

/**
 * The versions of a prompt side by side over a window (docs/prompts.md, "Comparing versions"): the
 * spans that name it, by version. A name with no version stored is a 404; spans may name versions
 * never stored here (a prompt kept elsewhere), and are counted all the same.
 */
export async function promptMetrics(ctx: AppContext, projectId: string, name: string, startMs: number, endMs: number) {
  const named = await ctx.pg.pool.query('SELECT 1 FROM prompts WHERE project_id = $1 AND name = $2', [projectId, name]);
  if (!named.rows[0]) throw new NotFoundError(PROMPT_NOT_FOUND);
  const rows = await withinLimits(PROMPT_METRICS_LIMITS, 'ask for a narrower window (start_time, end_time)', () =>
    ctx.ch.rows<PromptMetricsRow>(promptMetricsQuery(projectId, name, startMs, endMs)),
  );
  const finite = (n: number | undefined) =>
    n === undefined || !Number.isFinite(n) ? null : Math.round(n * 1000) / 1000;
  return {
    name,
    start_time: new Date(startMs).toISOString(),
    end_time: new Date(endMs).toISOString(),
    versions: rows.map((row) => {
      const spans = Number(row.spans);
      return {
        version: Number(row.version),
        traces: Number(row.traces),
        spans,
        latency_p50_ms: finite(row.latency[0]),
        latency_p95_ms: finite(row.latency[1]),
        cost: Math.round(row.cost * 1e9) / 1e9,
        input_tokens: Number(row.input_tokens),
        output_tokens: Number(row.output_tokens),
        total_tokens: Number(row.total_tokens),
        error_rate: spans ? Number(row.errors) / spans : 0,
        scores: row.scores.map(([score, avg, count]) => ({ name: score, avg: finite(avg), count: Number(count) })),
      };
    }),
  };
}
