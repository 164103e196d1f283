import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { typed } from '../http.js';
import { authenticate, principalOf } from '../auth/principal.js';
import { resolveReadProject } from '../auth/access.js';
import { BadRequestError } from '../errors.js';
import { IsoDateTime, isoToEpochMs, ProjectQuery } from '../edge-schemas.js';
import { AgreementAnswer, DEFAULT_AGREEMENT_WINDOW_MS, evaluatorAgreement } from './agreement.js';

const Params = z.object({ evaluator_id: z.string().min(1).max(64) });
const WindowQuery = ProjectQuery.extend({ start_time: IsoDateTime.optional(), end_time: IsoDateTime.optional() });

/** `GET /evaluators/{evaluator_id}/agreement` (docs/evaluators.md, "Agreement with people"): VIEWER+. */
export function registerEvaluatorAgreementRoutes(app: FastifyInstance, ctx: AppContext): void {
  typed(app).get(
    '/evaluators/:evaluator_id/agreement',
    {
      onRequest: authenticate(ctx, 'any'),
      schema: {
        description:
          "The evaluator's scores written in the window (default: the 30 days before `end_time`, itself default " +
          'now) beside the annotation scores of the same name about the same trace and span: agreement and ' +
          "Cohen's kappa (categorical, boolean) or correlation and mean difference (numeric), and the pairs that differ.",
        params: Params,
        querystring: WindowQuery,
        response: { 200: AgreementAnswer },
      },
    },
    async (request) => {
      const scope = await resolveReadProject(ctx, principalOf(request), request.query.project_id, 'VIEWER');
      const endMs = request.query.end_time ? isoToEpochMs(request.query.end_time) : Date.now();
      const startMs = request.query.start_time
        ? isoToEpochMs(request.query.start_time)
        : endMs - DEFAULT_AGREEMENT_WINDOW_MS;
      if (startMs >= endMs) throw new BadRequestError('start_time must be before end_time');
      return evaluatorAgreement(ctx, scope.projectId, request.params.evaluator_id, startMs, endMs);
    },
  );
}
