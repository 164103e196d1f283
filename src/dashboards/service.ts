import type { AppContext } from '../context.js';
import { isUuid, newId } from '../ids.js';
import { requireProjectRole } from '../auth/access.js';
import type { UserPrincipal } from '../auth/principal.js';
import { ConflictError, NotFoundError, RequestValidationError } from '../errors.js';
import { zodIssuesToValidation } from '../zod-issues.js';
import { withTransaction, type Queryable } from '../stores/postgres.js';
import { OVERVIEW_WIDGETS, specIssues, type WidgetType } from '../widgets/spec.js';

/**
 * The dashboard and widget catalog (docs/dashboards.md). Reads take a
 * project already resolved by `resolveReadProject`; writes check MEMBER+ in the project's workspace
 * themselves, inside their transaction. Answering widgets for a window is src/widgets/, not here.
 */

/** The catalog's size bounds (docs/limits.md, "Catalogs"; 409 beyond). */
export const MAX_DASHBOARDS_PER_PROJECT = 100;
export const MAX_WIDGETS_PER_DASHBOARD = 50;

export const DEFAULT_DASHBOARD = {
  name: 'Overview',
  description: 'Volume, errors, latency, cost and tokens; cost by model and by user',
} as const;

const DASHBOARD_NOT_FOUND = 'dashboard not found';
const WIDGET_NOT_FOUND = 'widget not found';

export type DashboardFields = {
  id: string;
  name: string;
  description: string;
  is_default: boolean;
  creator: string | null;
  create_time: string;
  update_time: string;
};
export type DashboardListItem = DashboardFields & { widget_count: number };
export type DashboardWidget = { id: string; title: string; type: WidgetType; spec: unknown; create_time: string };
export type DashboardDetail = DashboardFields & { widgets: DashboardWidget[] };
export type WidgetRecord = {
  id: string;
  dashboard_id: string;
  title: string;
  type: WidgetType;
  spec: unknown;
  create_time: string;
  update_time: string;
};

type DashboardRow = Omit<DashboardFields, 'create_time' | 'update_time'> & { create_time: Date; update_time: Date };
type WidgetRow = Omit<WidgetRecord, 'create_time' | 'update_time'> & { create_time: Date; update_time: Date };

// The creator's display name, or e-mail when the name is empty; null once the account is deleted
// (created_by is SET NULL with the user row).
const DASHBOARD_COLUMNS = `d.id, d.name, d.description, d.is_default, COALESCE(NULLIF(u.name, ''), u.email) AS creator, d.create_time, d.update_time`;
const DASHBOARD_FROM = 'dashboards d LEFT JOIN users u ON u.id = d.created_by';
const WIDGET_COLUMNS = 'w.id, w.dashboard_id, w.title, w.type, w.spec, w.create_time, w.update_time';

function dashboardFields(row: DashboardRow): DashboardFields {
  return { ...row, create_time: row.create_time.toISOString(), update_time: row.update_time.toISOString() };
}

function widgetRecord(row: WidgetRow): WidgetRecord {
  return { ...row, create_time: row.create_time.toISOString(), update_time: row.update_time.toISOString() };
}

// ---------------------------------------------------------------------------------------------
// The default dashboard

/**
 * Creates the project's default "Overview" dashboard with OVERVIEW_WIDGETS unless it has one.
 * Run it inside the caller's transaction, on that transaction's client (embedded PGlite deadlocks
 * on a pool query inside a transaction). Idempotent under races: the insert conflicts on the
 * one-default-per-project index and only the call that inserted the dashboard inserts its widgets.
 * The creator is the project's creator. Returns whether it created the dashboard.
 */
export async function ensureDefaultDashboard(tx: Queryable, projectId: string): Promise<boolean> {
  const dashboardId = newId();
  // $1 id, $2 project id, $3 name, $4 description
  const inserted = await tx.query<{ id: string; created_by: string | null }>(
    `INSERT INTO dashboards (id, project_id, name, description, is_default, created_by)
     SELECT $1::uuid, p.id, $3::text, $4::text, true, p.created_by FROM projects p WHERE p.id = $2
     ON CONFLICT (project_id) WHERE is_default DO NOTHING
     RETURNING id, created_by`,
    [dashboardId, projectId, DEFAULT_DASHBOARD.name, DEFAULT_DASHBOARD.description],
  );
  const row = inserted.rows[0];
  if (!row) return false;
  // One statement for all the widgets: they share the transaction's now(), so each gets `ord`
  // microseconds more and the dashboard keeps OVERVIEW_WIDGETS' order (widgets are read by create_time).
  // $1 dashboard id, $2 project id, $3 creator, $4 jsonb array of {id, title, type, spec}
  const items = OVERVIEW_WIDGETS.map((w) => ({ id: newId(), ...w }));
  await tx.query(
    `INSERT INTO widgets (id, dashboard_id, project_id, title, type, spec, created_by, create_time, update_time)
     SELECT (i.item->>'id')::uuid, $1::uuid, $2::uuid, i.item->>'title', i.item->>'type', i.item->'spec', $3::uuid,
            now() + i.ord * interval '1 microsecond', now() + i.ord * interval '1 microsecond'
       FROM jsonb_array_elements($4::jsonb) WITH ORDINALITY AS i(item, ord)`,
    [row.id, projectId, row.created_by, JSON.stringify(items)],
  );
  return true;
}

/** For projects that predate dashboards (or lost their default): created on first read. */
async function ensureDefaultOnRead(ctx: AppContext, projectId: string): Promise<void> {
  const { rows } = await ctx.pg.pool.query('SELECT 1 FROM dashboards WHERE project_id = $1 AND is_default', [
    projectId,
  ]);
  if (rows.length > 0) return;
  await withTransaction(ctx.pg.pool, (tx) => ensureDefaultDashboard(tx, projectId));
}

// ---------------------------------------------------------------------------------------------
// Reads (the project is resolved and access checked by the route)

/** Default dashboard first, then by creation time (docs/dashboards.md, "Routes"). */
export async function listDashboards(ctx: AppContext, projectId: string): Promise<{ data: DashboardListItem[] }> {
  await ensureDefaultOnRead(ctx, projectId);
  const { rows } = await ctx.pg.pool.query<DashboardRow & { widget_count: number }>(
    `SELECT ${DASHBOARD_COLUMNS}, (SELECT count(*)::int FROM widgets w WHERE w.dashboard_id = d.id) AS widget_count
       FROM ${DASHBOARD_FROM}
      WHERE d.project_id = $1
      ORDER BY d.is_default DESC, d.create_time, d.id`,
    [projectId],
  );
  return { data: rows.map((row) => ({ ...dashboardFields(row), widget_count: row.widget_count })) };
}

/** One dashboard of the project with its widgets by creation time (ties by id); 404 otherwise. */
export async function getDashboard(db: Queryable, projectId: string, dashboardId: string): Promise<DashboardDetail> {
  const dashboard = await findDashboard(db, projectId, dashboardId);
  const { rows } = await db.query<WidgetRow>(
    `SELECT ${WIDGET_COLUMNS} FROM widgets w WHERE w.dashboard_id = $1 ORDER BY w.create_time, w.id`,
    [dashboard.id],
  );
  return {
    ...dashboard,
    widgets: rows.map(({ id, title, type, spec, create_time }) => ({
      id,
      title,
      type,
      spec,
      create_time: create_time.toISOString(),
    })),
  };
}

/** The dashboard's own fields (no widgets); 404 when unknown or another project's. */
export async function findDashboard(db: Queryable, projectId: string, dashboardId: string): Promise<DashboardFields> {
  if (!isUuid(dashboardId)) throw new NotFoundError(DASHBOARD_NOT_FOUND);
  const { rows } = await db.query<DashboardRow>(
    `SELECT ${DASHBOARD_COLUMNS} FROM ${DASHBOARD_FROM} WHERE d.id = $1 AND d.project_id = $2`,
    [dashboardId, projectId],
  );
  if (!rows[0]) throw new NotFoundError(DASHBOARD_NOT_FOUND);
  return dashboardFields(rows[0]);
}

export async function getWidget(db: Queryable, projectId: string, widgetId: string): Promise<WidgetRecord> {
  if (!isUuid(widgetId)) throw new NotFoundError(WIDGET_NOT_FOUND);
  const { rows } = await db.query<WidgetRow>(
    `SELECT ${WIDGET_COLUMNS} FROM widgets w WHERE w.id = $1 AND w.project_id = $2`,
    [widgetId, projectId],
  );
  if (!rows[0]) throw new NotFoundError(WIDGET_NOT_FOUND);
  return widgetRecord(rows[0]);
}

// ---------------------------------------------------------------------------------------------
// Dashboard writes (MEMBER or higher; docs/authentication.md)

export type CreateDashboardInput = { project_id: string; name: string; description?: string };
export type UpdateDashboardInput = { project_id: string; name?: string; description?: string };

export async function createDashboard(
  ctx: AppContext,
  user: UserPrincipal,
  input: CreateDashboardInput,
): Promise<DashboardDetail> {
  return withTransaction(ctx.pg.pool, async (tx) => {
    await requireProjectRole(tx, user, input.project_id, 'MEMBER');
    // The project row lock serialises concurrent creates, so the count below stays true until commit.
    await tx.query('SELECT 1 FROM projects WHERE id = $1 FOR NO KEY UPDATE', [input.project_id]);
    const { rows } = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM dashboards WHERE project_id = $1', [
      input.project_id,
    ]);
    if (rows[0]!.n >= MAX_DASHBOARDS_PER_PROJECT) {
      throw new ConflictError(
        `a project holds at most ${MAX_DASHBOARDS_PER_PROJECT} dashboards; delete one before creating another`,
      );
    }
    const id = newId();
    await tx.query(
      'INSERT INTO dashboards (id, project_id, name, description, created_by) VALUES ($1, $2, $3, $4, $5)',
      [id, input.project_id, input.name, input.description ?? '', user.userId],
    );
    return getDashboard(tx, input.project_id, id);
  });
}

/** Edits name and description; the default dashboard may be renamed too. update_time bumps. */
export async function updateDashboard(
  ctx: AppContext,
  user: UserPrincipal,
  dashboardId: string,
  input: UpdateDashboardInput,
): Promise<DashboardDetail> {
  return withTransaction(ctx.pg.pool, async (tx) => {
    await requireProjectRole(tx, user, input.project_id, 'MEMBER');
    if (!isUuid(dashboardId)) throw new NotFoundError(DASHBOARD_NOT_FOUND);
    const updated = await tx.query(
      `UPDATE dashboards SET name = COALESCE($3, name), description = COALESCE($4, description), update_time = now()
        WHERE id = $1 AND project_id = $2`,
      [dashboardId, input.project_id, input.name ?? null, input.description ?? null],
    );
    if (updated.rowCount === 0) throw new NotFoundError(DASHBOARD_NOT_FOUND);
    return getDashboard(tx, input.project_id, dashboardId);
  });
}

/** Deletes a dashboard and its widgets. The default dashboard stays (409): every project has one. */
export async function deleteDashboard(
  ctx: AppContext,
  user: UserPrincipal,
  dashboardId: string,
  projectId: string,
): Promise<{ deleted: true; id: string }> {
  return withTransaction(ctx.pg.pool, async (tx) => {
    await requireProjectRole(tx, user, projectId, 'MEMBER');
    if (!isUuid(dashboardId)) throw new NotFoundError(DASHBOARD_NOT_FOUND);
    const { rows } = await tx.query<{ is_default: boolean }>(
      'SELECT is_default FROM dashboards WHERE id = $1 AND project_id = $2 FOR UPDATE',
      [dashboardId, projectId],
    );
    if (!rows[0]) throw new NotFoundError(DASHBOARD_NOT_FOUND);
    if (rows[0].is_default)
      throw new ConflictError("the project's default dashboard cannot be deleted; edit its widgets instead");
    await tx.query('DELETE FROM dashboards WHERE id = $1', [dashboardId]);
    return { deleted: true as const, id: dashboardId };
  });
}

// ---------------------------------------------------------------------------------------------
// Widget writes (MEMBER or higher)

export type CreateWidgetInput = {
  project_id: string;
  dashboard_id: string;
  title: string;
  type: WidgetType;
  spec: unknown;
};
export type UpdateWidgetInput = { project_id: string; title?: string; type?: WidgetType; spec?: unknown };

/**
 * A spec's issues for a widget type, located under `spec` in the request body (zod issues, so the
 * 422 entries read like every other validation error). Query widgets need a valid WidgetSpecSchema.
 */
export function widgetSpecIssues(type: WidgetType, spec: unknown) {
  return specIssues(type, spec).map((issue) => ({ ...issue, path: ['spec', ...issue.path] }));
}

export async function createWidget(
  ctx: AppContext,
  user: UserPrincipal,
  input: CreateWidgetInput,
): Promise<WidgetRecord> {
  return withTransaction(ctx.pg.pool, async (tx) => {
    await requireProjectRole(tx, user, input.project_id, 'MEMBER');
    if (!isUuid(input.dashboard_id)) throw new NotFoundError(DASHBOARD_NOT_FOUND);
    // Locking the dashboard serialises concurrent creates on it, so the count stays true until commit.
    const dashboard = await tx.query('SELECT 1 FROM dashboards WHERE id = $1 AND project_id = $2 FOR NO KEY UPDATE', [
      input.dashboard_id,
      input.project_id,
    ]);
    if (dashboard.rows.length === 0) throw new NotFoundError(DASHBOARD_NOT_FOUND);
    const { rows } = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM widgets WHERE dashboard_id = $1', [
      input.dashboard_id,
    ]);
    if (rows[0]!.n >= MAX_WIDGETS_PER_DASHBOARD) {
      throw new ConflictError(
        `a dashboard holds at most ${MAX_WIDGETS_PER_DASHBOARD} widgets; delete one or use another dashboard`,
      );
    }
    const inserted = await tx.query<WidgetRow>(
      `INSERT INTO widgets AS w (id, dashboard_id, project_id, title, type, spec, created_by) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)
       RETURNING ${WIDGET_COLUMNS}`,
      [newId(), input.dashboard_id, input.project_id, input.title, input.type, JSON.stringify(input.spec), user.userId],
    );
    return widgetRecord(inserted.rows[0]!);
  });
}

/** Edits title, type and spec; the resulting spec is validated against the resulting type (422). */
export async function updateWidget(
  ctx: AppContext,
  user: UserPrincipal,
  widgetId: string,
  input: UpdateWidgetInput,
): Promise<WidgetRecord> {
  return withTransaction(ctx.pg.pool, async (tx) => {
    await requireProjectRole(tx, user, input.project_id, 'MEMBER');
    if (!isUuid(widgetId)) throw new NotFoundError(WIDGET_NOT_FOUND);
    const { rows } = await tx.query<{ type: WidgetType; spec: unknown }>(
      'SELECT type, spec FROM widgets WHERE id = $1 AND project_id = $2 FOR UPDATE',
      [widgetId, input.project_id],
    );
    if (!rows[0]) throw new NotFoundError(WIDGET_NOT_FOUND);
    const type = input.type ?? rows[0].type;
    const spec = input.spec !== undefined ? input.spec : rows[0].spec;
    const issues = widgetSpecIssues(type, spec);
    // The stored spec is reported under `spec` too: changing the type is what made it invalid.
    if (issues.length > 0) throw new RequestValidationError(zodIssuesToValidation('body', issues, { ...input, spec }));
    const updated = await tx.query<WidgetRow>(
      `UPDATE widgets AS w SET title = COALESCE($2, title), type = $3, spec = $4::jsonb, update_time = now()
        WHERE id = $1 RETURNING ${WIDGET_COLUMNS}`,
      [widgetId, input.title ?? null, type, JSON.stringify(spec)],
    );
    return widgetRecord(updated.rows[0]!);
  });
}

export async function deleteWidget(
  ctx: AppContext,
  user: UserPrincipal,
  widgetId: string,
  projectId: string,
): Promise<{ deleted: true; id: string }> {
  return withTransaction(ctx.pg.pool, async (tx) => {
    await requireProjectRole(tx, user, projectId, 'MEMBER');
    if (!isUuid(widgetId)) throw new NotFoundError(WIDGET_NOT_FOUND);
    const deleted = await tx.query('DELETE FROM widgets WHERE id = $1 AND project_id = $2', [widgetId, projectId]);
    if (deleted.rowCount === 0) throw new NotFoundError(WIDGET_NOT_FOUND);
    return { deleted: true as const, id: widgetId };
  });
}
