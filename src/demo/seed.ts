import crypto from 'node:crypto';
import { newId } from '../ids.js';
import type { AppContext } from '../context.js';
import { hashPassword, hashToken, newApiKey } from '../auth/secrets.js';
import { withTransaction } from '../stores/postgres.js';
import { ensureDefaultDashboard } from '../dashboards/service.js';
import { ensureDefaultDetector } from '../detectors/service.js';
import { validateSpans } from '../traces/span-input.js';
import { generateSpans } from './generate-spans.js';
import { usageMeterOf } from '../controls/usage.js';

export type DemoAccount = { email: string; password: string; workspaceId: string; projectId: string; apiKey: string };

export const DEMO_EMAIL = 'demo@sightline.local';

/**
 * On first start with an empty store: a demo user, workspace, project and API key, so a new user
 * can try the API at once. The password and key are random and shown once, on that start only.
 */
export async function seedDemoAccount(ctx: AppContext): Promise<DemoAccount | null> {
  const { rows } = await ctx.pg.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM users');
  if ((rows[0]?.n ?? 0) > 0) return null;
  const password = crypto.randomBytes(9).toString('base64url');
  const passwordHash = await hashPassword(password);
  const { key, prefix } = newApiKey();
  const ids = { user: newId(), workspace: newId(), project: newId() };
  await withTransaction(ctx.pg.pool, async (tx) => {
    await tx.query('INSERT INTO users (id, email, name, password_hash) VALUES ($1, $2, $3, $4)', [
      ids.user,
      DEMO_EMAIL,
      'Demo User',
      passwordHash,
    ]);
    await tx.query('INSERT INTO workspaces (id, name, created_by) VALUES ($1, $2, $3)', [
      ids.workspace,
      'Demo workspace',
      ids.user,
    ]);
    await tx.query(`INSERT INTO memberships (workspace_id, user_id, role) VALUES ($1, $2, 'ADMIN')`, [
      ids.workspace,
      ids.user,
    ]);
    await tx.query('INSERT INTO projects (id, workspace_id, name, created_by) VALUES ($1, $2, $3, $4)', [
      ids.project,
      ids.workspace,
      'Demo project',
      ids.user,
    ]);
    await ensureDefaultDashboard(tx, ids.project);
    await ensureDefaultDetector(tx, ids.project);
    await tx.query(
      'INSERT INTO api_keys (id, project_id, name, key_hash, key_prefix, created_by) VALUES ($1, $2, $3, $4, $5, $6)',
      [newId(), ids.project, 'demo key', hashToken(key), prefix, ids.user],
    );
  });
  return { email: DEMO_EMAIL, password, workspaceId: ids.workspace, projectId: ids.project, apiKey: key };
}

/** How many agent traces a new demo project starts with, spread over the last day. */
export const DEMO_TRACES = 300;

/**
 * Loads a small, realistic set of agent traces (LLM, tool and retriever spans, some errors) over the
 * last 24 hours into the demo project, through the same writer as ingest, so a new user sees traces
 * at once. Returns how many spans were stored.
 */
export async function seedDemoTraces(ctx: AppContext, projectId: string, nowMs = Date.now()): Promise<number> {
  const { rows } = await ctx.pg.pool.query<{ trace_ttl_days: number }>(
    'SELECT trace_ttl_days FROM projects WHERE id = $1',
    [projectId],
  );
  const spans = generateSpans({ traces: DEMO_TRACES, startMs: nowMs - 86_400_000, endMs: nowMs, seed: 42 });
  const { accepted } = validateSpans(spans);
  // The process's one writer (src/runtime.ts): its commits are serialised with ingest's.
  await ctx.spanWriter.write(projectId, rows[0]?.trace_ttl_days ?? 30, accepted);
  // Counted as usage like ingest's spans, so the usage page does not show the demo's traces as 0 spans.
  const meter = usageMeterOf(ctx);
  meter.add(projectId, { spans: accepted.length, bytes: Buffer.byteLength(JSON.stringify(spans)) });
  await meter.flush();
  return accepted.length;
}
