import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { typed } from '../http.js';
import { authenticate, userOf } from '../auth/principal.js';
import { dismissSignal, mergeSignal } from './status.js';

const Params = z.object({ project_id: z.string().min(1).max(1024), signal_id: z.string().min(1).max(1024) });
const MergeBody = z.object({ into_signal_id: z.string().min(1).max(1024) });

/**
 * The web application's signal routes (docs/signals.md): dismissing and merging are done there only
 * (the public API can't set `dismissed`, docs/signals.md "Signal status"). Session token as bearer
 * (a CLI access token, also a user login, is taken too); MEMBER or higher, checked by the service.
 */
export function registerSignalWebRoutes(app: FastifyInstance, ctx: AppContext): void {
  const r = typed(app);
  const user = { onRequest: authenticate(ctx, 'user') };

  r.post(
    '/api/projects/:project_id/signals/:signal_id/dismiss',
    { ...user, schema: { params: Params } },
    async (request) => dismissSignal(ctx, userOf(request), request.params.project_id, request.params.signal_id),
  );

  r.post(
    '/api/projects/:project_id/signals/:signal_id/merge',
    { ...user, schema: { params: Params, body: MergeBody } },
    async (request) =>
      mergeSignal(
        ctx,
        userOf(request),
        request.params.project_id,
        request.params.signal_id,
        request.body.into_signal_id,
      ),
  );
}
