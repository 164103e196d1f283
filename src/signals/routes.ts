import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { typed } from '../http.js';
import { authenticate, principalOf, userOf } from '../auth/principal.js';
import { resolveReadProject } from '../auth/access.js';
import { Pagination, ProjectQuery } from '../edge-schemas.js';
import { getSignal, listSignals, SIGNAL_STATUSES } from './service.js';
import { changeSignalStatus, MAX_NOTE_LENGTH, RESOLVE_REASONS } from './status.js';
import { listFindings } from './findings.js';
import { FindingListAnswer, SignalDetailAnswer, SignalListAnswer, StatusChangeAnswer } from './answers.js';

/** Reads: any credential (a user's needs `project_id`). */
const ReadQuery = ProjectQuery;
/** docs/signals.md: `limit` 1 to 200 (default 50), `page` 0 to 10000 (default 0), `status`, `detector_id`. */
const ListQuery = ReadQuery.extend({
  ...Pagination.shape,
  status: z.enum(SIGNAL_STATUSES).optional(),
  detector_id: z.string().min(1).max(1024).optional(),
});
const FindingsQuery = ReadQuery.extend({
  ...Pagination.shape,
  signal_id: z.string().min(1).max(1024).optional(),
  detector_id: z.string().min(1).max(1024).optional(),
});
const Params = z.object({ signal_id: z.string().min(1).max(1024) });

/**
 * docs/signals.md "Signal status": only `resolved` and `open` are targets (rule 3: 422 for
 * `dismissed`); `reason` is required for `resolved`, `note` for reason `other` (at most 4000).
 */
const StatusBody = z
  .object({
    project_id: z.string().min(1),
    status: z.enum(['resolved', 'open']),
    reason: z.enum(RESOLVE_REASONS).optional(),
    note: z.string().max(MAX_NOTE_LENGTH).optional(),
    expected_status: z.enum(SIGNAL_STATUSES).optional(),
  })
  .superRefine((body, ctx) => {
    // `invalid_type` on an absent field reads as the usual {type: "missing", msg: "Field required"}.
    if (body.status === 'resolved' && body.reason === undefined) {
      ctx.addIssue({
        code: 'invalid_type',
        expected: 'string',
        path: ['reason'],
        message: 'reason is required when status is resolved',
      });
    }
    if (body.status === 'resolved' && body.reason === 'other') {
      if (body.note === undefined)
        ctx.addIssue({
          code: 'invalid_type',
          expected: 'string',
          path: ['note'],
          message: 'note is required when reason is other',
        });
      else if (body.note.trim() === '')
        ctx.addIssue({ code: 'custom', path: ['note'], message: 'note must not be empty when reason is other' });
    }
  });

/** Signals and findings (docs/signals.md). */
export function registerSignalRoutes(app: FastifyInstance, ctx: AppContext): void {
  const r = typed(app);
  const reader = { onRequest: authenticate(ctx, 'any') };
  // Status changes need a user credential (API keys: 403, docs/authentication.md rule 2) and MEMBER+.
  const writer = { onRequest: authenticate(ctx, 'user') };

  r.get(
    '/signals',
    { ...reader, schema: { querystring: ListQuery, response: { 200: SignalListAnswer } } },
    async (request) => {
      const scope = await resolveReadProject(ctx, principalOf(request), request.query.project_id);
      return listSignals(ctx.pg.pool, scope.projectId, request.query);
    },
  );

  r.get(
    '/signals/:signal_id',
    { ...reader, schema: { params: Params, querystring: ReadQuery, response: { 200: SignalDetailAnswer } } },
    async (request) => {
      const scope = await resolveReadProject(ctx, principalOf(request), request.query.project_id);
      return getSignal(ctx.pg.pool, scope.projectId, request.params.signal_id);
    },
  );

  r.patch(
    '/signals/:signal_id/status',
    { ...writer, schema: { params: Params, body: StatusBody, response: { 200: StatusChangeAnswer } } },
    async (request) => changeSignalStatus(ctx, userOf(request), request.params.signal_id, request.body),
  );

  r.get(
    '/findings',
    { ...reader, schema: { querystring: FindingsQuery, response: { 200: FindingListAnswer } } },
    async (request) => {
      const scope = await resolveReadProject(ctx, principalOf(request), request.query.project_id);
      return listFindings(ctx, scope.projectId, request.query);
    },
  );
}
