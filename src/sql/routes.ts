import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { ProjectQuery } from '../edge-schemas.js';
import { typed } from '../http.js';
import { authenticate, principalOf } from '../auth/principal.js';
import { resolveReadProject } from '../auth/access.js';
import { sqlSchema } from './contract.js';
import { runSql } from './service.js';
import { sqlOwner } from './owner.js';
import { SqlAnswer, SqlBusyAnswer, SqlFailedAnswer, SqlSchemaAnswer } from './answers.js';

// Longer than MAX_QUERY_LENGTH is the guard's refusal (400), not a validation error.
const SqlBody = z.object({ query: z.string().min(1), project_id: z.string().optional() });

/** Public SQL and its schema (docs/sql.md, "Tables"). Reads: any credential. */
export function registerSqlRoutes(app: FastifyInstance, ctx: AppContext): void {
  const r = typed(app);
  const reader = { onRequest: authenticate(ctx, 'any') };

  r.get(
    '/sql/schema',
    { ...reader, schema: { querystring: ProjectQuery, response: { 200: SqlSchemaAnswer } } },
    async (request) => {
      await resolveReadProject(ctx, principalOf(request), request.query.project_id);
      return sqlSchema();
    },
  );

  const answers = { 200: SqlAnswer, 400: SqlFailedAnswer, 429: SqlBusyAnswer };
  r.post(
    '/sql',
    { ...reader, schema: { querystring: ProjectQuery, body: SqlBody, response: answers } },
    async (request) => {
      const principal = principalOf(request);
      const scope = await resolveReadProject(ctx, principal, request.body.project_id ?? request.query.project_id);
      return runSql(ctx, await sqlOwner(ctx, principal, scope), request.body.query);
    },
  );
}
